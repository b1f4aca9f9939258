"""``store.get`` outside a run goes straight to the item's point read
(``ChronomemStore._item``): no ``GetOp``, no batch. It must answer what the
general batch path (``_run`` reading several items at once) answers, at every
step of any sequence of puts, deletes, TTL expiries and clock moves."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, PutOp

from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock

NAMESPACES = [("a",), ("a", "b"), ("x", "y")]
KEYS = ["k0", "k1", "k\\0"]
VALUES = [None, {"text": "one"}, {"text": "two", "n": [1, 2]}]
_tenants = itertools.count()

PUT = st.tuples(
    st.integers(0, len(NAMESPACES) - 1),
    st.sampled_from(KEYS),
    st.sampled_from(VALUES),
    st.sampled_from([None, 1.0]),  # a TTL of a minute: expires on a tick
)
STEP = st.one_of(
    st.tuples(st.just("batch"), st.lists(PUT, min_size=1, max_size=4)),
    st.tuples(st.just("tick"), st.integers(1, 90)),
)


def _shape(item: Any) -> Any:
    if item is None:
        return None
    return (tuple(item.namespace), item.key, item.value, item.created_at, item.updated_at)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(STEP, min_size=1, max_size=8))
def test_get_answers_what_the_batch_path_answers(
    url: str | None, steps: list[tuple[Any, ...]]
) -> None:
    # a clock that stands still between steps, so both paths read at one instant;
    # refresh_on_read off: a read never writes, so they read the same state
    clock = ManualClock()
    store = ChronomemStore(
        url, clock=clock, tenant=f"get{next(_tenants)}", ttl={"refresh_on_read": False}
    )
    try:
        for step in steps:
            if step[0] == "batch":
                store.batch([PutOp(NAMESPACES[n], k, v, ttl=t) for n, k, v, t in step[1]])
            else:
                clock.advance(seconds=step[1])
            handles = [(ns, k) for ns in NAMESPACES for k in KEYS]
            # two or more gets in one batch take the general path (``_run``)
            general = store.batch([GetOp(ns, k, refresh_ttl=False) for ns, k in handles])
            for (ns, k), want in zip(handles, general, strict=True):
                assert _shape(store.get(ns, k)) == _shape(want), (ns, k)
    finally:
        store.close()


def test_get_outside_a_run_builds_no_batch(
    store: ChronomemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put(("a", "b"), "k", {"text": "one"})

    def no_batch(*_: Any, **__: Any) -> Any:
        raise AssertionError("store.get went through a batch")

    monkeypatch.setattr(store, "_batch", no_batch)
    monkeypatch.setattr(store, "_run", no_batch)
    monkeypatch.setattr(store, "_get", no_batch)
    item = store.get(("a", "b"), "k")
    assert item is not None and item.value == {"text": "one"}
    assert store.get(("a", "b"), "missing") is None
