"""Issue #14 H: a collection of names is a collection, everywhere.

A bare string where a collection of names is expected used to be read as its
characters (``facts(subjects="alice")`` matched subject "a"), or silently
matched nothing (``search(q, predicates="lives_in")``), and a non-iterable
raised a raw ``TypeError``. Every public method that takes a collection of
names now refuses a bare ``str``/``bytes``, a mapping, a non-iterable and a
non-string item with ``InvalidType`` before touching the database, and treats
any other iterable (list, tuple, set, generator) the same."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronomem import InvalidType, Memory
from chronomem.arguments import names

ALL = ["live", "ended", "scheduled", "retracted"]


@pytest.fixture(scope="module")
def mem() -> Iterator[Memory]:
    m = Memory()
    m.remember("a", "lives_in", "Oslo")
    m.remember("alice", "lives_in", "Paris")
    m.remember("bob", "likes", "tea")
    yield m
    m.close()


# Every public method taking a collection of names, as (name, call with that argument).
CALLS: dict[str, Callable[[Memory, Any], Any]] = {
    "facts(subjects=)": lambda m, v: m.facts(subjects=v, states=ALL),
    "search(predicates=)": lambda m, v: m.search("Paris", predicates=v),
    "search(predicates=, exact=True)": lambda m, v: m.search("Paris", predicates=v, exact=True),
    "register_predicate(aliases=)": lambda m, v: m.register_predicate("home_of", aliases=v),
    "add_episodes(items)": lambda m, v: m.add_episodes(v),
    "remember_many(facts)": lambda m, v: m.remember_many(v),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize(
    "bad",
    ["alice", "lives_in", b"alice", 5, 2.5, True, {"alice": 1}, object()],
    ids=["str", "predicate str", "bytes", "int", "float", "bool", "dict", "object"],
)
def test_a_bare_string_or_non_collection_is_refused(mem: Memory, call: str, bad: Any) -> None:
    before = mem.stats()
    with pytest.raises(InvalidType):
        CALLS[call](mem, bad)
    assert mem.stats() == before  # nothing was written


def test_subjects_is_a_list_of_subjects_not_characters(mem: Memory) -> None:
    assert {f.object for f in mem.facts(subjects=["alice"])} == {"Paris"}
    assert {f.object for f in mem.facts(subjects=("alice", "bob"))} == {"Paris", "tea"}
    assert {f.object for f in mem.facts(subjects={"a"})} == {"Oslo"}
    assert {f.object for f in mem.facts(subjects=(s for s in ["bob"]))} == {"tea"}
    assert mem.facts(subjects=[]) == []
    with pytest.raises(InvalidType):
        mem.facts(subjects=["alice", 3])  # type: ignore[list-item]


def test_search_predicates_filter_by_name(mem: Memory) -> None:
    hits = mem.search("Paris", predicates=["lives_in"])
    assert [h.fact.object for h in hits if h.fact] == ["Paris"]
    assert [h.fact.object for h in mem.search("Paris", predicates=("likes",)) if h.fact] == []
    with pytest.raises(InvalidType):
        mem.search("Paris", predicates=[5])  # type: ignore[list-item]


_letters = st.characters(blacklist_categories=("Cs",))
_wrong = st.one_of(
    st.text(min_size=1, max_size=8),
    st.binary(min_size=1, max_size=8),
    st.integers(),
    st.floats(allow_nan=True),
    st.booleans(),
    st.dictionaries(st.text(max_size=3), st.integers(), min_size=1, max_size=2),
    st.lists(st.one_of(st.integers(), st.none(), st.binary(max_size=3)), min_size=1, max_size=3),
)


@settings(max_examples=150, deadline=None)
@given(value=_wrong)
def test_names_refuses_every_wrong_shape(value: Any) -> None:
    with pytest.raises(InvalidType):
        names(value, "subjects")


@settings(max_examples=100, deadline=None)
@given(items=st.lists(st.text(_letters, min_size=1, max_size=6).filter(str.strip), max_size=5))
def test_names_keeps_every_iterable_of_names_as_is(items: list[str]) -> None:
    for shaped in (items, tuple(items), iter(items)):
        assert names(shaped, "subjects") == tuple(items)
