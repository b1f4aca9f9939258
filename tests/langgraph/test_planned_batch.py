"""A batch of puts alone (a load) reads its items inside the write transaction,
by the read that serves the writer too (``ChronomemStore._put_all``,
``Memory.apply_planned``), and a plain put is a ``DocumentOp`` the writer
applies set-wise, where the general path read the items first (``Reader.items``)
and planned every put as asserts and ends through the writer's slot plans.
Both ways must store and answer the same: two stores on clocks moved alike take
the same random batches (new keys, overwrites, re-puts in one batch, deletes,
TTLs, index paths), single puts and gets refreshing a TTL, one through the
store's paths and one through the old ones (``_General``); every version each
holds, in every state, every vector, and every read (``get``, both searches,
``list_namespaces``) agree. On SQLite and PostgreSQL, in a tenant's own scope
and in a user's (which reads its tenant's items too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from chronomem import writer
from langgraph.store.chronomem import ChronomemStore
from langgraph.store.chronomem.writes import PreparedPut

from ..conftest import ManualClock
from ..statements import counting
from ._store_compare import answers, pair, stored
from .fakes import CharEmbeddings
from .test_planned_put import _ReadFirst

NAMESPACES = [("users", "u1"), ("users", "u2"), ("docs",)]
KEYS = ["k1", "k2", "k3"]
PLAIN = st.fixed_dictionaries({"text": st.sampled_from(["tea", "coffee", "green tea"])})
VALUES = st.one_of(
    PLAIN,
    PLAIN,
    PLAIN,
    st.none(),  # a delete: that batch takes the general path
    st.fixed_dictionaries(
        {"text": st.sampled_from(["x", "y"]), "tags": st.lists(st.sampled_from(["p", "q"]))}
    ),
)
PUT = st.tuples(
    st.sampled_from(NAMESPACES),
    st.sampled_from(KEYS),
    VALUES,
    st.sampled_from([None, None, False, ["text"], ["text", "tags[*]"]]),  # index
    st.sampled_from([None, None, None, 1.0, 60.0]),  # ttl (minutes)
)
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("batch"), st.lists(PUT, min_size=2, max_size=7), st.integers(0, 400)),
        st.tuples(st.just("put"), st.lists(PUT, min_size=1, max_size=1), st.integers(0, 400)),
        st.tuples(
            st.just("get"),  # a get refreshing the item's TTL
            st.tuples(st.sampled_from(NAMESPACES), st.sampled_from(KEYS)),
            st.integers(0, 400),
        ),
    ),
    min_size=1,
    max_size=10,
)


class _General(_ReadFirst):
    """The store's puts as they were: a batch read first and planned as asserts
    and ends (``_run``'s general path), the single put read first too."""

    def _plans_in_write(self, puts: dict[int, PreparedPut]) -> bool:
        return False


def _answers(store: ChronomemStore) -> list[Any]:
    found = store.search(("users",), query="tea", refresh_ttl=False)
    return [
        *answers(store, NAMESPACES, KEYS),
        [(i.key, i.value) for i in found],
        store.list_namespaces(max_depth=1),
    ]


@pytest.mark.parametrize("user", [None, "ann"], ids=["tenant scope", "user scope"])
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_a_batch_of_puts_stores_and_answers_what_the_general_path_did(
    url: str | None, user: str | None, steps: list[Any]
) -> None:
    clocks, new, old = pair(url, user, _General)
    try:
        for kind, what, wait in steps:
            for c in clocks:
                c.advance(seconds=wait)
            for store in (new, old):
                if kind == "get":
                    store.get(*what, refresh_ttl=True)
                elif kind == "put":
                    ns, key, value, paths, minutes = what[0]
                    store.put(ns, key, value, paths, ttl=minutes)
                else:
                    store.batch([PutOp(ns, k, v, p, ttl=t) for ns, k, v, p, t in what])
            assert stored(new) == stored(old)
        assert _answers(new) == _answers(old)
    finally:
        new.close()
        old.close()


class _NoPlans(writer.SlotPlan):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("a plain batch plans no slot")


def test_a_plain_batch_is_written_set_wise_in_one_read(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of plain puts, new items and overwrites, in namespaces indexed or
    not: no slot is planned (``SlotPlan``), and the batch reads no item before
    its write: the same writes as the general path's, fewer statements that
    read, and fewer SQLite steps."""
    index = {"dims": 16, "embed": CharEmbeddings(dims=16), "fields": ["text"]}
    new = ChronomemStore(str(tmp_path / "new.db"), clock=clock, index=index)  # type: ignore[arg-type]
    old = _General(str(tmp_path / "old.db"), clock=clock, index=index)  # type: ignore[arg-type]
    try:
        first = [PutOp(("users", f"u{i % 3}"), f"k{i}", {"text": f"item {i}"}) for i in range(30)]
        second = [
            PutOp(("users", f"u{i % 4}"), f"k{i}", {"text": f"new {i}"}) for i in range(20, 50)
        ]
        for batch in (first, second):
            clock.advance(seconds=1)
            costs = []
            for store in (new, old):
                if store is new:
                    monkeypatch.setattr(writer, "SlotPlan", _NoPlans)
                with counting(store.memory) as cost:
                    store.batch(batch)
                monkeypatch.setattr(writer, "SlotPlan", _NoPlans.__mro__[1])
                costs.append(cost)
            writes, reads = ([], []), ([], [])  # type: ignore[var-annotated]
            for i, cost in enumerate(costs):
                for s in cost.statements:
                    (reads if s.lstrip().startswith("SELECT") else writes)[i].append(s)
            assert writes[0] == writes[1]
            assert len(reads[0]) < len(reads[1])
            assert costs[0].vm_steps < costs[1].vm_steps
        assert stored(new)[-1] == stored(old)[-1]  # the vectors
    finally:
        new.close()
        old.close()
