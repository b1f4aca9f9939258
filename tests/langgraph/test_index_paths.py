"""The texts a put indexes (``indexing.entries``) are LangGraph's own
``get_text_at_path``'s, for every path shape: a path naming one field is read
directly (``indexing._texts``), every other path by LangGraph's walk."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from langgraph.store.base import get_text_at_path, tokenize_path

from langgraph.store.chronomem import indexing

PATHS = ["$", "text", "a", "a.b", "a[0]", "a[*]", "a[-1]", "*", "{a,text}", "a.b[*].c", "te-xt"]
LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)
)
VALUE = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c", "text"]), inner, max_size=3),
    ),
    max_leaves=8,
)
DOC = st.dictionaries(st.sampled_from(["a", "b", "text", "te-xt"]), VALUE, max_size=4)


@given(DOC, st.sampled_from(PATHS))
def test_texts_are_langgraphs(doc: dict[str, Any], path: str) -> None:
    expected = get_text_at_path(doc, path if path == "$" else tokenize_path(path))
    assert indexing._texts(doc, path) == expected


def test_one_field_paths() -> None:
    """Which paths are read directly: exactly one plain field."""
    assert indexing._field("text") == "text"
    assert indexing._field("te-xt") == "te-xt"
    for path in ("$", "a.b", "a[0]", "[0]", "*", "{a,b}"):
        assert indexing._field(path) is None
