"""Hostile input to the reads: ``facts`` (every filter, LIKE wildcards in names
and prefixes), ``history``, ``episodes``, ``stats`` and ``predicate`` filter exactly
and write nothing; ``limit`` and the time selectors are validated."""

from __future__ import annotations

import math
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import (
    ChronomemError,
    InvalidInput,
    InvalidType,
    Memory,
    NaiveDatetime,
)
from chronomem.identity import fold

from ._inputs import (
    ALL_STATES,
    AVOID,
    FUZZ,
    UTC,
    WRONG,
    Harness,
    aware_datetimes,
    maybe,
    name_texts,
    or_wrong,
    texts,
)


@FUZZ
@given(data=st.data())
def test_reads_filter_exactly_and_write_nothing(h: Harness, data: st.DataObject) -> None:
    b = h.backend
    m = h.fresh()
    subjects = ["ann", "a%", "a_n", "A.N", "an/n", "%", "_"]
    for s in subjects:
        m.remember(s, "likes", f"{s} tea")
    m.add_episode("hello", role="user")
    s = data.draw(maybe(or_wrong(st.one_of(st.sampled_from(subjects), texts(b)))), "subject")
    pred = data.draw(maybe(or_wrong(st.one_of(st.just("likes"), name_texts(b, 255)))), "predicate")
    prefix = data.draw(
        maybe(or_wrong(st.one_of(st.sampled_from(["a", "a%", "a_", "%", "_", ""]), texts(b))))
    )
    names = st.lists(st.sampled_from([*ALL_STATES, "LIVE", "bogus"]), max_size=3)
    states = data.draw(
        maybe(names if AVOID["non_iterables"] else st.one_of(names, WRONG)), "states"
    )
    valid_at = data.draw(maybe(or_wrong(aware_datetimes())), "valid_at")
    known_at = data.draw(maybe(or_wrong(aware_datetimes())), "known_at")
    as_of = data.draw(maybe(or_wrong(aware_datetimes())), "as_of")
    limit = data.draw(maybe(st.one_of(st.integers(0, 5), WRONG)), "limit")
    exact = data.draw(st.booleans(), "exact")
    if limit is not None and not (
        isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0
    ):
        limit = None  # facts(limit=) validation: see test_facts_limit_is_validated
    out, err = h.read_only(
        "facts",
        lambda: m.facts(
            subject=s,
            predicate=pred,
            subject_prefix=prefix,
            states=states,
            valid_at=valid_at,
            known_at=known_at,
            as_of=as_of,
            limit=limit,
            exact=exact,
        ),
    )
    if err is None:
        assert out is not None
        for f in out:
            key = f.subject if exact else fold(f.subject)
            if s is not None:
                assert key == (s if exact else fold(s)), (f.subject, s)
            if isinstance(prefix, str):
                assert fold(f.subject).startswith(prefix), (f.subject, prefix)
        if limit is not None:
            assert len(out) <= limit
    q = data.draw(or_wrong(texts(b)), "history subject")
    h.read_only("history", lambda: m.history(q, pred, include_retracted=True))
    role = data.draw(maybe(st.one_of(st.just("user"), name_texts(b, 64))), "role")
    lim = data.draw(maybe(st.one_of(st.integers(-2, 3), WRONG)), "episodes limit")
    eps, err = h.read_only(
        "episodes", lambda: m.episodes(role=role, limit=lim, since=valid_at, until=known_at)
    )
    if err is None and role is not None:
        assert all(e.role == role for e in eps or [])
    h.read_only("stats", m.stats)
    name = data.draw(or_wrong(texts(b)), "predicate name")
    h.read_only("predicate", lambda: m.predicate(name))


def test_facts_limit_is_validated(store: Memory) -> None:
    store.remember("ann", "likes", "tea")
    for bad in (-1, "3", 1.5):
        with pytest.raises(ChronomemError):
            store.facts(limit=bad)


def test_naive_and_wrong_time_selectors(store: Memory) -> None:
    """Not a bug: the documented errors for time selectors, as a baseline."""
    with pytest.raises(NaiveDatetime):
        store.facts(valid_at=datetime(2020, 1, 1))
    with pytest.raises(InvalidInput):
        store.facts(
            as_of=datetime(2020, 1, 1, tzinfo=UTC), known_at=datetime(2020, 1, 1, tzinfo=UTC)
        )
    with pytest.raises(InvalidType):
        store.facts(valid_at=math.nan)  # type: ignore[arg-type]
