"""as_of views (valid time, belief time, both), history, retraction and erasure."""

from __future__ import annotations

from datetime import timedelta

import pytest
from langgraph.store.base import GetOp, PutOp

from chronomem import InvalidTimeSelector, State
from langgraph.store.chronomem import ChronomemStore, ReadOnlyView

from ..conftest import ManualClock
from .conftest import StoreFactory


def _city(store: ChronomemStore) -> str | None:
    item = store.get(("users", "ada"), "profile")
    return None if item is None else item.value.get("city")


def test_views_replay_each_clock(store: ChronomemStore, clock: ManualClock) -> None:
    before = clock.advance(minutes=1)
    clock.advance(minutes=1)
    store.put(("users", "ada"), "profile", {"city": "Paris"})
    in_paris = clock.advance(minutes=1)
    clock.advance(minutes=1)
    store.put(("users", "ada"), "profile", {"city": "Berlin"})
    in_berlin = clock.advance(minutes=1)
    clock.advance(minutes=1)
    store.delete(("users", "ada"), "profile")
    clock.advance(minutes=1)

    assert _city(store) is None
    assert _city(store.as_of(before)) is None
    assert _city(store.as_of(in_paris)) == "Paris"
    assert _city(store.as_of(in_berlin)) == "Berlin"
    # believed then, about now: Berlin was current until the delete
    assert _city(store.as_of(known_at=in_berlin)) == "Berlin"
    # believed now, about then: Paris had ended normally; Berlin was deleted (retracted)
    assert _city(store.as_of(valid_at=in_paris)) == "Paris"
    assert _city(store.as_of(valid_at=in_berlin)) is None
    view = store.as_of(in_paris)
    assert [i.value for i in view.search(("users",))] == [{"city": "Paris"}]
    assert view.list_namespaces() == [("users", "ada")]
    assert view.read_only and not store.read_only


def test_replay_is_exact_after_later_writes(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("a",), "k", {"x": 1, "y": [1, 2]})
    then = clock.advance(seconds=30)
    seen = store.get(("a",), "k")
    store.put(("a",), "k", {"x": 2})
    store.delete(("a",), "k")
    store.put(("a",), "k", {"z": 3})
    replay = store.as_of(then).get(("a",), "k")
    assert seen is not None and replay == seen  # value, created_at and updated_at


def test_views_are_read_only(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("a",), "k", {"v": 1})
    view = store.as_of(clock.advance(seconds=1))
    with pytest.raises(ReadOnlyView):
        view.put(("a",), "k", {"v": 2})
    with pytest.raises(ReadOnlyView):
        view.delete(("a",), "k")
    with pytest.raises(ReadOnlyView):
        view.batch([GetOp(("a",), "k"), PutOp(("a",), "j", {"v": 3})])
    with pytest.raises(ReadOnlyView):
        view.erase(("a",), "k")
    assert store.get(("a",), "j") is None
    item = store.get(("a",), "k")
    assert item is not None and item.value == {"v": 1}


def test_views_never_refresh_ttls(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("a",), "k", {"v": 1}, ttl=1)
    clock.advance(seconds=30)
    view = store.as_of(known_at=clock.advance(seconds=1))
    assert view.get(("a",), "k") is not None  # would refresh on the store itself
    clock.advance(seconds=40)
    assert store.get(("a",), "k") is None


def test_as_of_arguments(store: ChronomemStore, clock: ManualClock) -> None:
    t = clock.advance(seconds=1)
    with pytest.raises(InvalidTimeSelector):
        store.as_of(t, valid_at=t)
    with pytest.raises(InvalidTimeSelector):
        store.as_of()
    with pytest.raises(ValueError, match="naive"):
        store.as_of(t.replace(tzinfo=None))
    assert store.as_of(t).as_of(valid_at=t).read_only


def test_history_labels_every_state(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("a",), "k", {"city": "Paris", "pet": "cat"})
    clock.advance(minutes=1)
    mid = clock.advance(seconds=1)
    store.put(("a",), "k", {"city": "Berlin"})
    clock.advance(minutes=1)
    store.delete(("a",), "k")
    rows = [(v.field, v.value, v.state) for v in store.history(("a",), "k")]
    assert rows == [
        ("city", "Paris", State.ENDED),
        ("pet", "cat", State.ENDED),
        ("city", "Berlin", State.RETRACTED),
    ]
    assert [v.value for v in store.history(("a",), "k", "city", include_retracted=False)] == [
        "Paris"
    ]
    believed_mid = store.history(("a",), "k", known_at=mid)
    assert [(v.field, v.value, v.state) for v in believed_mid] == [
        ("city", "Paris", State.LIVE),
        ("pet", "cat", State.LIVE),
    ]
    assert store.as_of(mid).history(("a",), "k") == believed_mid


def test_erase_is_physical_and_total(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("a",), "k", {"city": "Paris"}, ttl=5)
    store.get(("a",), "k")  # a refresh: more versions
    store.put(("a",), "k", {"city": "Berlin"})
    then = clock.advance(seconds=1)
    store.put(("a",), "other", {"city": "Oslo"})
    counts = store.erase(("a",), "k")
    assert counts["versions"] > 0
    assert store.get(("a",), "k") is None
    assert store.history(("a",), "k") == []
    assert store.as_of(then).get(("a",), "k") is None
    assert store.search(("a",), query="Berlin Paris", limit=5)[0].key == "other"
    assert store.get(("a",), "other") is not None
    assert store.erase(("a",), "k")["versions"] == 0


def test_two_stores_on_one_memory_share_it(make_store: StoreFactory) -> None:
    first = make_store()
    second = ChronomemStore(first.memory)
    first.put(("a",), "k", {"v": 1})
    assert second.get(("a",), "k") is not None
    second.close()  # does not close a Memory it was given
    assert first.get(("a",), "k") is not None


def test_scoped_stores_are_isolated(make_store: StoreFactory) -> None:
    base = make_store()
    alice = ChronomemStore(base.memory, user="alice")
    bob = ChronomemStore(base.memory, user="bob")
    alice.put(("prefs",), "k", {"theme": "dark"})
    assert bob.get(("prefs",), "k") is None
    assert bob.search(()) == [] and bob.list_namespaces() == []
    assert alice.list_namespaces() == [("prefs",)]


def test_query_search_through_a_view(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("d",), "k", {"text": "crimson apple orchard"})
    store.put(("d",), "j", {"text": "unrelated"})
    then = clock.advance(seconds=1)
    store.put(("d",), "k", {"text": "zebra crossing"})
    now_score = {h.key: h.score for h in store.search(("d",), query="crimson apple orchard")}
    old = store.as_of(then).search(("d",), query="crimson apple orchard")
    assert old[0].key == "k" and old[0].score is not None
    assert old[0].value == {"text": "crimson apple orchard"}
    assert (now_score["k"] or 0.0) < old[0].score  # today "k" only matches by chance, if at all


def test_a_put_takes_effect_at_its_transaction_time(
    store: ChronomemStore, clock: ManualClock
) -> None:
    """A changed field's old value ends exactly where the new one starts, a removed
    field ends there too, and that instant is the put's transaction time, which
    is also the item's ``updated_at``: ``as_of(item.updated_at)`` shows the put."""
    store.put(("a",), "k", {"city": "Paris", "pet": "cat"})
    created = store.get(("a",), "k")
    clock.advance(minutes=1)
    store.put(("a",), "k", {"city": "Berlin"})
    item = store.get(("a",), "k")
    assert created is not None and item is not None
    hist = {(v.field, v.value): v for v in store.history(("a",), "k")}
    paris, cat, berlin = hist["city", "Paris"], hist["pet", "cat"], hist["city", "Berlin"]
    assert paris.valid_to == cat.valid_to == berlin.valid_from == berlin.recorded_at
    assert item.updated_at == berlin.valid_from and item.created_at == paris.valid_from
    assert created.updated_at == created.created_at == item.created_at
    view = store.as_of(item.updated_at).get(("a",), "k")
    assert view is not None and view.value == {"city": "Berlin"}
    before = store.as_of(item.updated_at - timedelta(microseconds=1)).get(("a",), "k")
    assert before is not None and before.value == {"city": "Paris", "pet": "cat"}


def test_a_frozen_clock_still_reads_its_own_writes(url: str | None) -> None:
    """Writes land at their transaction times, which move on even when the clock
    does not; the store reads no earlier than its last write."""
    clock = ManualClock(tick=timedelta(0))
    store = ChronomemStore(url, clock=clock)
    try:
        for v in range(1, 4):
            store.put(("f",), "k", {"v": v, f"only{v}": True})
            item = store.get(("f",), "k")
            assert item is not None and item.value == {"v": v, f"only{v}": True}
        rows = [(v.field, v.value, v.state) for v in store.history(("f",), "k")]
        assert rows == [  # valid-time order (fields by name within one instant)
            ("only1", True, State.ENDED),
            ("v", 1, State.ENDED),
            ("only2", True, State.ENDED),
            ("v", 2, State.ENDED),
            ("only3", True, State.LIVE),
            ("v", 3, State.LIVE),
        ]
        store.delete(("f",), "k")
        assert store.get(("f",), "k") is None and store.search(("f",)) == []
        store.put(("f",), "t", {"v": 1}, ttl=1)
        assert store.get(("f",), "t") is not None
        clock.advance(minutes=2)
        assert store.get(("f",), "t") is None
    finally:
        store.close()


def test_erase_is_scoped_and_counts_are_complete(make_store: StoreFactory) -> None:
    base = make_store()
    alice = ChronomemStore(base.memory, user="alice")
    bob = ChronomemStore(base.memory, user="bob")
    for s in (alice, bob):
        s.put(("p",), "k", {"theme": "dark", "lang": "en"})
        s.put(("p",), "k", {"theme": "light"})
    counts = alice.erase(("p",), "k")
    assert set(counts) == {"versions", "episodes", "vectors", "sources"}
    # the item's document: the first put's version, its ended copy, the second's
    assert counts["versions"] >= 3
    assert alice.history(("p",), "k") == [] and alice.get(("p",), "k") is None
    kept = bob.get(("p",), "k")
    assert kept is not None and kept.value == {"theme": "light"}
    assert len(bob.history(("p",), "k")) == 3
    assert alice.erase(("p",), "never") == dict.fromkeys(counts, 0)
