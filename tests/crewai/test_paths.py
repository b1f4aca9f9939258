"""CrewAI scope paths: normalisation and path-aware prefixes (property-based)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import InvalidInput, InvalidType
from crewai_chronomem import paths

segment = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="/"),
    min_size=1,
    max_size=6,
).filter(lambda s: s.strip() == s and s != "")
segments = st.lists(segment, max_size=4)


def path_of(parts: list[str]) -> str:
    return "/" + "/".join(parts)


@given(segments, segments)
def test_within_is_a_segment_prefix(a: list[str], b: list[str]) -> None:
    expected = a[: len(b)] == b
    assert paths.within(path_of(a), path_of(b)) is expected


@given(segments, segments)
def test_join_concatenates_segments(a: list[str], b: list[str]) -> None:
    joined = paths.join(path_of(a), path_of(b))
    assert joined == paths.normalize(path_of(a + b))
    assert paths.within(joined, path_of(a))


@given(segments, segments)
def test_child_of_is_the_next_segment(a: list[str], b: list[str]) -> None:
    child = paths.child_of(path_of(a + b), path_of(a))
    assert child == (path_of(a + b[:1]) if b else None)


def test_normalize_and_refusals() -> None:
    assert paths.normalize("crew//x/") == "/crew/x"
    assert paths.normalize(None) == "/" and paths.normalize("") == "/"
    assert not paths.within("/ab", "/a") and paths.within("/a/b", "/a")
    assert paths.within("/a%", "/a%") and not paths.within("/ab", "/a%")
    with pytest.raises(InvalidType):
        paths.normalize(3)
    with pytest.raises(InvalidInput):
        paths.normalize("/a\x00b")
    with pytest.raises(InvalidInput):
        paths.normalize("/" + "a" * 2000)
