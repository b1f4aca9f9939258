"""The graph leg asks the search's filters about the rows it reaches only
(``legs.fact_mask(..., at=positions)``) where it used to take the mask of every
row of the mirror (a dozen passes over 1M values at 1M facts, for the few rows
the leg looks at): the mask at some positions is the whole mask there, and the
leg's ranking is the same either way, whatever the filters."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory, State
from chronomem.retrieval import legs
from tests.conftest import ManualClock

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
PEOPLE = ["ann", "annie", "bob", "cy"]
PLACES = ["lisbon", "paris", "rome"]


@pytest.fixture(scope="module")
def store() -> Memory:
    """Facts in three scopes, superseded, ended and scheduled ones, a retraction."""
    clock = ManualClock(tick=timedelta(seconds=1))  # each write a second later
    m = Memory(clock=clock)
    rnd = np.random.default_rng(11)
    for i in range(150):
        user = [None, "u1", "u2"][i % 3]
        s = m.scoped(user=user) if user else m
        who, where = PEOPLE[rnd.integers(4)], PLACES[rnd.integers(3)]
        pred = ["lives_in", "likes", "visited"][rnd.integers(3)]
        start = T0 + timedelta(days=int(rnd.integers(0, 400)))
        end = start + timedelta(days=int(rnd.integers(1, 90))) if i % 5 == 0 else None
        s.remember(who, pred, f"{where} {i % 4}", valid_from=start, valid_to=end)
    m.retract(m.facts(subject="cy")[0].id)
    return m


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    user=st.sampled_from([None, "u1", "u2"]),
    day=st.integers(-10, 500),
    known=st.sampled_from([None, 0, 60, 200]),
    states=st.sets(st.sampled_from(list(State)), min_size=1),
    prefix=st.sampled_from([None, "", "ann", "b", "zz"]),
    predicates=st.sampled_from([None, [], ["lives_in"], ["likes", "visited"]]),
    subject=st.sampled_from([None, "ann", "cy"]),
    query=st.sampled_from(["ann lisbon", "where does bob live", "rome 2", "cy paris", "annie"]),
)
def test_the_mask_at_positions_is_the_mask_there(
    store: Memory, user, day, known, states, prefix, predicates, subject, query
) -> None:
    from chronomem.scope import Scope

    scope = Scope(store.scope.tenant, user, None, None)
    valid_at = int((T0 + timedelta(days=day)).timestamp() * 1_000_000)
    first = store.facts()[0].recorded_at if known is not None else None
    known_at = None if first is None else int(first.timestamp() * 1_000_000) + known * 1_000_000
    tf = legs.TimeFilter(valid_at, known_at, frozenset(states))
    mirror = store._retrieval.mirrors.get(store.scope.tenant)
    with store._engine.backend.read() as conn:
        mirror.sync(conn)
    retracted = [store.facts(subject="cy", states=list(State))[0].version_id]
    kw = dict(retracted_ids=retracted, subject_prefix=prefix, predicates=predicates,
              subject_key=subject)  # fmt: skip
    whole = legs.fact_mask(mirror, scope, tf, **kw)  # type: ignore[arg-type]
    rnd = np.random.default_rng(day + 1000)
    at = rnd.integers(0, mirror.v.n, size=int(rnd.integers(0, 40)))
    assert np.array_equal(legs.fact_mask(mirror, scope, tf, at=at, **kw), whole[at])  # type: ignore[arg-type]

    def admits(ps: np.ndarray) -> np.ndarray:
        return legs.fact_mask(mirror, scope, tf, at=ps, **kw)  # type: ignore[arg-type]

    for n in (3, 30):
        assert legs.graph_leg(mirror, admits, query, n) == legs.graph_leg(mirror, whole, query, n)


def test_the_store_gives_the_check_something_to_tell_apart(store: Memory) -> None:
    from chronomem.scope import Scope

    mirror = store._retrieval.mirrors.get(store.scope.tenant)
    with store._engine.backend.read() as conn:
        mirror.sync(conn)
    valid_at = int((T0 + timedelta(days=200)).timestamp() * 1_000_000)
    tf = legs.TimeFilter(valid_at, None, frozenset({State.LIVE}))
    whole = legs.fact_mask(mirror, Scope(store.scope.tenant, "u1", None, None), tf)
    assert 0 < int(whole.sum()) < len(whole)  # admits some rows, not all
    ranked = legs.graph_leg(mirror, whole, "ann lisbon", 30)
    assert ranked and len({s for _, s in ranked}) == 2  # one hop and two hops
