"""A batch of puts costs what the batch holds, not what the store holds (issue #19).

Speed is measured in ``benchmarks/speed.py``; these tests pin down the
structure that keeps it flat: the number of SQL statements a batch issues does
not depend on how many items the store already has (no per-put or per-item
queries), and on SQLite every read of ``cm_versions`` the put path makes goes
through a subject or slot index, never a scan of the tenant's rows."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.store.base import PutOp
from sqlalchemy import event

from langgraph.store.chronomem import ChronomemStore

from .conftest import StoreFactory


@contextmanager
def captured(store: ChronomemStore) -> Iterator[list[tuple[str, Any]]]:
    """Every statement (and its parameters) run on the store's engine meanwhile."""
    seen: list[tuple[str, Any]] = []
    engine = store.memory.backend.engine

    def note(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        seen.append((statement, params))

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", note)


def _puts(start: int, n: int, *, ns_count: int = 10) -> list[PutOp]:
    """New items, plus an overwrite of an existing key every third put."""
    ops = []
    for i in range(start, start + n):
        ns = ("users", f"u{i % ns_count}")
        key = f"k{i}" if i % 3 else f"k{i % 30}"
        ops.append(PutOp(ns, key, {"text": f"item {i} likes tea", "n": i}))
    return ops


def _statements(store: ChronomemStore, ops: list[PutOp]) -> list[str]:
    with captured(store) as seen:
        store.batch(ops)
    return [s for s, _ in seen if not s.lstrip().upper().startswith("ANALYZE")]


def test_statements_per_batch_do_not_grow_with_the_store(make_store: StoreFactory) -> None:
    store = make_store()
    first = _statements(store, _puts(0, 60))
    for start in range(60, 1260, 300):  # grow the store to ~1,200 items
        store.batch(_puts(start, 300))
    later = _statements(store, _puts(5000, 60))
    assert len(later) <= len(first) + 2, (len(first), len(later))
    # a handful of round trips, not several per put
    assert len(later) < 40, len(later)


def test_statements_per_batch_do_not_grow_with_the_batch(make_store: StoreFactory) -> None:
    store = make_store()
    small = _statements(store, _puts(0, 20))
    big = _statements(store, _puts(100, 400))
    assert len(big) <= len(small) + 6, (len(small), len(big))


def test_every_read_of_versions_uses_an_index(make_store: StoreFactory, backend: str) -> None:
    """SQLite without statistics once read subjects through the ``superseded_at``
    index (every current row of the tenant) — a cost that grew with the store."""
    if backend != "sqlite":
        return  # the planner's choice there depends on statistics (ANALYZE)
    store = make_store()
    store.batch(_puts(0, 300))
    with captured(store) as seen:
        store.batch([*_puts(300, 60), PutOp(("users", "u1"), "k3", None)])
        store.get(("users", "u2"), "k2")
    reads = [
        (s, p)
        for s, p in seen
        if s.lstrip().upper().startswith("SELECT") and "FROM cm_versions" in s
    ]
    assert reads
    with store.memory.backend.read() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        for statement, params in reads:
            plan = [r[3] for r in raw.execute("EXPLAIN QUERY PLAN " + statement, params)]
            on_versions = [p for p in plan if "cm_versions" in p and "cm_versions_fts" not in p]
            assert on_versions, (statement, plan)
            for step in on_versions:
                assert "cm_versions_superseded" not in step, (statement, plan)
                assert not step.startswith("SCAN cm_versions"), (statement, plan)
