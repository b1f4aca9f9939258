"""Concurrent puts of one item with different field sets, and puts or deletes
planned from a stale read: the fields live afterwards are exactly one put's
set, never the union (removed fields are ended inside the write transaction,
under a subject lock, by ``EndOthersOp``)."""

from __future__ import annotations

import threading
from typing import Any

from chronomem import State
from chronomem.timeutil import to_us
from langgraph.store.chronomem import ChronomemStore, keys
from langgraph.store.chronomem.reading import Reader
from langgraph.store.chronomem.writes import plan_put, prepare

from .conftest import StoreFactory

NS, KEY = ("race",), "doc"
AB, AC = {"a": 1, "b": 2}, {"a": 1, "c": 3}
WORKERS = 4
ROUNDS = 12


def _live_fields(store: ChronomemStore) -> set[str]:
    return {v.field for v in store.history(NS, KEY) if v.state is State.LIVE}


def _overlapping(store: ChronomemStore, x: str, y: str) -> list[tuple[Any, Any]]:
    """Pairs of versions of fields ``x`` and ``y`` that were live at one valid instant."""
    hist = store.history(NS, KEY, include_retracted=False)
    xs = [v for v in hist if v.field == x]
    ys = [v for v in hist if v.field == y]
    return [
        (p, q)
        for p in xs
        for q in ys
        if (q.valid_to is None or p.valid_from < q.valid_to)
        and (p.valid_to is None or q.valid_from < p.valid_to)
    ]


def test_concurrent_puts_leave_exactly_one_field_set(durable_url: str) -> None:
    """Worker stores (one connection each) put {a, b} and {a, c} to one key at
    once, round after round: after every round the live fields are one of the
    two sets, and in valid time b and c were never live together."""
    stores = [ChronomemStore(durable_url) for _ in range(WORKERS)]
    check = stores[0]
    barrier = threading.Barrier(WORKERS + 1)
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        value = AB if i % 2 == 0 else AC
        try:
            for _ in range(ROUNDS):
                barrier.wait()
                stores[i].put(NS, KEY, value)
                barrier.wait()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(WORKERS)]
    for t in threads:
        t.start()
    seen: list[set[str]] = []
    try:
        for _ in range(ROUNDS):
            barrier.wait()  # the workers put
            barrier.wait()  # every put of the round has committed
            seen.append(_live_fields(check))
    finally:
        for t in threads:
            t.join(timeout=60)
        for s in stores:
            s.close()
    assert not errors, errors
    assert all(fields in ({"a", "b"}, {"a", "c"}) for fields in seen), seen
    reopened = ChronomemStore(durable_url)
    try:
        item = reopened.get(NS, KEY)
        assert item is not None and item.value in (AB, AC)
        assert set(item.value) == _live_fields(reopened)
        assert _overlapping(reopened, "b", "c") == []
    finally:
        reopened.close()


def test_a_put_planned_from_a_stale_read_still_ends_the_other_fields(
    make_store: StoreFactory,
) -> None:
    """The race made deterministic: a put of {a, b} planned from a read taken
    before another store's put of {a, c} committed ends c all the same."""
    first = make_store()
    second = ChronomemStore(first.memory)  # another store on the same database
    first.put(NS, KEY, {"a": 0, "b": 0})
    memory = first.memory
    stale = Reader(memory, to_us(memory.now(), "now"), None).record(keys.subject(NS, KEY))
    assert stale is not None and set(stale.value()) == {"a", "b"}
    second.put(NS, KEY, AC)  # commits between the read and the write
    put = prepare(NS, KEY, AB, ("$",), None)
    memory.apply(plan_put(put, stale, to_us(memory.now(), "now")))
    assert _live_fields(first) == {"a", "b"}
    assert _overlapping(first, "b", "c") == []
    item = first.get(NS, KEY)
    assert item is not None and item.value == AB


def test_a_delete_planned_from_a_stale_read_leaves_nothing_live(make_store: StoreFactory) -> None:
    """A delete retracts what it read; a field a concurrent put added after the
    read is ended in the same transaction, so the item is gone either way."""
    first = make_store()
    second = ChronomemStore(first.memory)  # another store on the same database
    first.put(NS, KEY, {"a": 0, "b": 0})
    memory = first.memory
    stale = Reader(memory, to_us(memory.now(), "now"), None).record(keys.subject(NS, KEY))
    second.put(NS, KEY, AC)
    put = prepare(NS, KEY, None, (), None)
    memory.apply(plan_put(put, stale, to_us(memory.now(), "now")))
    assert first.get(NS, KEY) is None
    assert _live_fields(first) == set()
    states = {(v.field, v.value): v.state for v in first.history(NS, KEY)}
    assert states == {
        ("a", 0): State.RETRACTED,  # read by the delete: retracted
        ("b", 0): State.RETRACTED,
        ("a", 1): State.ENDED,  # put after the read: ended by the delete
        ("c", 3): State.ENDED,
    }
