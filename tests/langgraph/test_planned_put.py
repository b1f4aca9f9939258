"""A single put reads its item inside the write transaction, by the read that
serves the writer too (``Memory.apply_planned``; on SQLite in a scope of its
tenant alone, the writer's own live read), where it was read first, on its own
(``Reader.item``), then written. Both ways must store and answer the same: two
stores on clocks moved alike take the same random puts (new keys, re-puts of
the same value, overwrites, deletes, TTLs, index paths) and gets refreshing a
TTL, one through ``put`` and one through the old path (``_ReadFirst``); every
version each holds, in every state, every vector, and every read agree. On
SQLite and PostgreSQL, in a tenant's own scope and in a user's (which reads its
tenant's items too: the point read's statement, in the transaction)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from chronomem import Cardinality, InvalidInput, Memory
from chronomem.ops import AssertOp, EndOthersOp, RetractOp
from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock
from ..statements import counting
from ._store_compare import KEYS, NAMESPACES, PUT_STEP, answers, pair, stored
from .fakes import CharEmbeddings

STEPS = st.lists(
    st.one_of(
        PUT_STEP,
        st.tuples(
            st.just("get"),  # a get refreshing the item's TTL
            st.sampled_from(NAMESPACES),
            st.sampled_from(KEYS),
            st.none(),
            st.none(),
            st.none(),
            st.integers(0, 400),
        ),
    ),
    min_size=1,
    max_size=12,
)


class _ReadFirst(ChronomemStore):
    """The single put as it was: the item's point read, then ``_write``."""

    def _put(self, op: PutOp) -> None:
        puts = self._prepare([op])
        subject = puts[0].subject
        self._write(puts, {subject: self._reader().item(subject)}, {})


@pytest.mark.parametrize("user", [None, "ann"], ids=["tenant scope", "user scope"])
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_a_single_put_stores_and_answers_what_the_read_first_put_did(
    url: str | None, user: str | None, steps: list[Any]
) -> None:
    clocks, new, old = pair(url, user, _ReadFirst)
    try:
        for kind, ns, key, value, paths, minutes, wait in steps:
            for c in clocks:
                c.advance(seconds=wait)
            for store in (new, old):
                if kind == "put":
                    store.put(ns, key, value, paths, ttl=minutes)
                else:
                    store.get(ns, key, refresh_ttl=True)
            assert stored(new) == stored(old)
        assert answers(new, NAMESPACES, KEYS) == answers(old, NAMESPACES, KEYS)
    finally:
        new.close()
        old.close()


def _fact(subject: str, predicate: str, obj: str) -> AssertOp:
    return AssertOp(
        subject, predicate, obj, None, None, bounded=False, exact=True, cardinality=Cardinality.ONE
    )


def test_a_plan_may_not_end_what_it_did_not_read(memory: Memory) -> None:
    """A planned write's ends of a subject's values must name a subject it read,
    and it takes no write by id: refused before anything is written."""
    memory.apply([_fact("ada", "likes", "tea")])
    for bad in (EndOthersOp("bob", frozenset(), exact=True), RetractOp("x")):
        with pytest.raises(InvalidInput):
            memory.apply_planned(["ada"], lambda rows, bad=bad: [bad])  # type: ignore[misc]
    assert [f.object for f in memory.facts(subjects=["ada"], exact=True)] == ["tea"]


def test_a_plan_reads_the_live_facts_rows_gives(memory: Memory) -> None:
    """What the plan receives is ``Memory.rows``' answer for its subjects at its
    instant, read in the write transaction; its ops and ``then`` are applied."""
    memory.apply([_fact("ada", "likes", "tea"), _fact("ada", "lives_in", "Paris")])
    seen: list[Any] = []

    def plan(rows: list[Any]) -> list[AssertOp]:
        seen.extend(rows)
        return [_fact("ada", "likes", "coffee")]

    expected = memory.rows(["ada"], exact=True)
    memory.apply_planned(
        ["ada"],
        plan,
        then=[_fact("bob", "likes", "tea")],
    )
    assert seen == expected
    assert {(f.subject, f.object) for f in memory.facts(subjects=["ada", "bob"], exact=True)} == {
        ("ada", "coffee"),
        ("ada", "Paris"),
        ("bob", "tea"),
    }


def test_a_single_put_runs_fewer_sqlite_steps_than_the_read_first_put(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Counted with ``tests/statements.py``: the same puts into the same items
    send the same statements through SQLAlchemy (the reads go to the driver
    straight), and SQLite runs fewer virtual machine steps for each, the item's
    own read being gone (a new item's put and an overwrite)."""
    index = {"dims": 16, "embed": CharEmbeddings(dims=16), "fields": ["text"]}
    new = ChronomemStore(str(tmp_path / "new.db"), clock=clock, index=index)  # type: ignore[arg-type]
    old = _ReadFirst(str(tmp_path / "old.db"), clock=clock, index=index)  # type: ignore[arg-type]
    try:
        for store in (new, old):
            store.batch([PutOp(("users", "u1"), f"k{i}", {"text": f"item {i}"}) for i in range(20)])
        for key in ("new", "k3"):
            clock.advance(seconds=1)
            costs = []
            for store in (new, old):
                with counting(store.memory) as cost:
                    store.put(("users", "u1"), key, {"text": "green tea"})
                costs.append(cost)
            assert len(costs[0].statements) == len(costs[1].statements), key
            assert costs[0].vm_steps < costs[1].vm_steps, (
                key,
                costs[0].vm_steps,
                costs[1].vm_steps,
            )
    finally:
        new.close()
        old.close()
