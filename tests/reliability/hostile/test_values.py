"""One hostile value through many methods at once: NUL characters, lone
surrogates, aware datetimes outside the UTC range, names longer than their
column, and non-iterables where a collection is expected. Each a documented
error or a faithful round-trip, never a driver or bare Python error."""

from __future__ import annotations

import math
from datetime import datetime

import pytest

from chronomem import (
    ChronomemError,
    Memory,
)

from ._inputs import (
    OFFSET_OVERFLOW,
    refused_or_round_trips,
)


def test_nul_characters(store: Memory, request: pytest.FixtureRequest) -> None:
    """PostgreSQL text cannot hold NUL: core must say so (ChronomemError) or store it
    faithfully, on every path, never let the driver's DataError escape."""
    refused_or_round_trips(
        lambda: store.remember("a\x00b", "likes", "c\x00d"),
        lambda r: store.get(r.fact_ids[0])[0].subject == "a\x00b",
    )
    refused_or_round_trips(
        lambda: store.add_episode("hi\x00there"),
        lambda ep: store.get_episode(ep.id).text == "hi\x00there",
    )
    for read in (
        lambda: store.facts(subject="a\x00b"),
        lambda: store.facts(subject_prefix="\x00"),
        lambda: store.why("x\x00"),
        lambda: store.get_episode("x\x00"),
        lambda: store.history("a\x00b"),
    ):
        refused_or_round_trips(read, lambda out: None)


def test_lone_surrogates_are_refused(store: Memory) -> None:
    """A str with a lone surrogate cannot be encoded as UTF-8 by any driver."""
    before = store.stats()
    for call in (
        lambda: store.remember("a\ud800", "likes", "x"),
        lambda: store.remember("a", "likes", "x", metadata={"k": "\udfff"}),
        lambda: store.add_episode("\ud800"),
    ):
        with pytest.raises(ChronomemError):
            call()
    assert store.stats() == before


@pytest.mark.parametrize("when", OFFSET_OVERFLOW, ids=["year1+05:00", "year9999-05:00"])
def test_datetimes_outside_the_utc_range(store: Memory, when: datetime) -> None:
    """An aware datetime that is year 0 or 10000 in UTC: refuse it, or read it back.
    Accepting it and then failing every later read of the slot poisons the store."""
    try:
        r = store.remember("ann", "likes", "tea", valid_from=when)
    except ChronomemError:
        return
    assert store.get(r.fact_ids[0])[0].valid_from == when
    store.history("ann")


def test_non_iterable_arguments(store: Memory) -> None:
    """A wrong type where a collection is expected is an InvalidType, not a bare
    TypeError from deep inside."""
    before = store.stats()
    for call in (
        lambda: store.facts(states=math.nan),
        lambda: store.facts(states=5),
        lambda: store.register_predicate("p", aliases=math.nan),
        lambda: store.remember("ann", "likes", "tea", source=5),
        lambda: store.remember_many(5),
    ):
        with pytest.raises(ChronomemError):
            call()  # type: ignore[no-untyped-call]
    assert store.stats() == before


def test_length_limits(store: Memory, request: pytest.FixtureRequest) -> None:
    """Names longer than their column (role 64, predicate/extractor/scope 255):
    a ChronomemError or a faithful round-trip, never a driver error."""
    refused_or_round_trips(lambda: store.add_episode("x", role="r" * 65), lambda ep: None)
    refused_or_round_trips(lambda: store.remember("a", "p" * 256, "b"), lambda r: None)
    refused_or_round_trips(
        lambda: store.remember("a", "likes", "b", extractor="e" * 256), lambda r: None
    )
    refused_or_round_trips(
        lambda: store.scoped(user="u" * 256).remember("a", "likes", "b"), lambda r: None
    )
    refused_or_round_trips(lambda: store.register_predicate("q" * 256), lambda r: None)
