"""TTL: an expiry is the world clock ending, not a deletion — expired items leave
every current read and stay in history; reads refresh per TTLConfig."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from langgraph.store.base import GetOp, PutOp

from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock
from .conftest import StoreFactory


def _lasts(version: Any, minutes: float, clock: ManualClock) -> bool:
    """The version lasts exactly the TTL, counted from its own transaction time
    (core's ``valid_for``), whatever the clock did between planning and writing."""
    assert version.valid_to is not None
    return bool(version.valid_to - version.valid_from == timedelta(minutes=minutes))


def test_supports_ttl(store: ChronomemStore) -> None:
    assert store.supports_ttl is True


def test_expired_items_vanish_from_current_reads(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("t",), "short", {"v": 1}, ttl=1)
    store.put(("t",), "long", {"v": 2}, ttl=10)
    store.put(("t",), "forever", {"v": 3})
    assert store.get(("t",), "short", refresh_ttl=False) is not None
    clock.advance(minutes=2)
    assert store.get(("t",), "short") is None
    assert {i.key for i in store.search(("t",))} == {"long", "forever"}
    assert {i.key for i in store.search(("t",), query="v")} == {"long", "forever"}
    clock.advance(minutes=10)
    assert [i.key for i in store.search(("t",))] == ["forever"]
    assert store.list_namespaces() == [("t",)]
    hist = store.history(("t",), "short")
    assert [(v.field, v.value, v.state.value) for v in hist] == [("v", 1, "ended")]
    assert _lasts(hist[0], 1, clock)


def test_expiry_is_in_valid_time(store: ChronomemStore, clock: ManualClock) -> None:
    start = clock.now
    store.put(("t",), "k", {"v": 1}, ttl=1)
    (version,) = store.history(("t",), "k")
    assert version.valid_to is not None and _lasts(version, 1, clock)
    assert version.valid_from == version.recorded_at  # starts at its transaction
    clock.advance(minutes=5)
    assert store.get(("t",), "k") is None
    assert store.as_of(valid_at=start + (version.valid_to - start) / 2).get(("t",), "k") is not None


def test_reads_refresh_the_ttl(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.advance(seconds=40)
    assert store.get(("t",), "k") is not None  # refreshes: expires 60s from now
    clock.advance(seconds=40)
    assert store.get(("t",), "k", refresh_ttl=False) is not None
    clock.advance(seconds=40)
    assert store.get(("t",), "k") is None
    (version,) = store.history(("t",), "k")
    assert version.state.value == "ended", "refreshes extend one version, never split it"


def test_search_refreshes_what_it_returns(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("t",), "a", {"v": 1}, ttl=1)
    store.put(("t",), "b", {"v": 2}, ttl=1)
    clock.advance(seconds=40)
    assert [i.key for i in store.search(("t",), filter={"v": 1})] == ["a"]
    clock.advance(seconds=40)
    assert [i.key for i in store.search(("t",), refresh_ttl=False)] == ["a"]


def test_refresh_keeps_updated_at(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    before = store.get(("t",), "k")
    clock.advance(seconds=30)
    after = store.get(("t",), "k")
    assert before is not None and after is not None
    assert (after.created_at, after.updated_at) == (before.created_at, before.updated_at)


def test_ttl_config_default_and_refresh_on_read(
    make_store: StoreFactory, clock: ManualClock
) -> None:
    store = make_store(ttl={"default_ttl": 1, "refresh_on_read": False})
    store.put(("t",), "k", {"v": 1})
    store.put(("t",), "keep", {"v": 2}, ttl=None)
    clock.advance(seconds=40)
    assert store.get(("t",), "k") is not None  # no refresh by default
    clock.advance(seconds=40)
    assert store.get(("t",), "k") is None
    assert store.get(("t",), "keep") is not None
    store.put(("t",), "r", {"v": 3})
    clock.advance(seconds=40)
    assert store.batch([GetOp(("t",), "r", refresh_ttl=True)])[0] is not None
    clock.advance(seconds=40)
    assert store.get(("t",), "r") is not None


def test_put_changes_the_ttl(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=10)
    store.put(("t",), "k", {"v": 1}, ttl=1)  # shorter: ends sooner
    clock.advance(minutes=2)
    assert store.get(("t",), "k") is None
    store.put(("t",), "k", {"v": 1}, ttl=1)  # back after expiry: a new life
    store.put(("t",), "k", {"v": 1})  # no ttl: runs forever
    clock.advance(minutes=60)
    item = store.get(("t",), "k")
    assert item is not None and item.value == {"v": 1}
    assert [v.state.value for v in store.history(("t",), "k")] == ["ended", "live"]


def test_sweep_deletes_nothing(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.advance(minutes=2)
    assert store.sweep_ttl() == 1  # as LangGraph's stores: the items that expired (issue #16)
    assert store.sweep_ttl() == 0
    assert len(store.history(("t",), "k")) == 1


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), "5", True])
def test_bad_ttl(store: ChronomemStore, ttl: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        store.put(("t",), "k", {"v": 1}, ttl=ttl)  # type: ignore[arg-type]
    assert store.get(("t",), "k") is None


def test_a_tiny_ttl_is_exact_not_refused(store: ChronomemStore, clock: ManualClock) -> None:
    """A TTL counts from the write's own transaction time, so even one shorter than
    the gap between planning and writing (here one test-clock tick) is exact."""
    store.batch([PutOp(("t",), "ok", {"v": 1}), PutOp(("t",), "k", {"v": 1}, ttl=0.001)])
    assert store.get(("t",), "ok") is not None
    (version,) = store.history(("t",), "k")
    assert version.valid_to - version.valid_from == timedelta(milliseconds=60)
    assert store.get(("t",), "k", refresh_ttl=False) is None  # one tick later: expired
