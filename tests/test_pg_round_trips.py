"""PostgreSQL writes in few round trips (issue #32 item 4): a single ``remember``
waits for the server at most three times (``BEGIN``; the stamp, slot locks and
slot load sent together; the inserts sent with the ``COMMIT``), counted on the
wire (libpq's protocol trace), not timed. And the statements sent together keep
the one-by-one semantics: a load queued behind a lock that waits sees what the
lock's holder committed, and a registration made by another process since this
one cached the registry still decides the slot."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError

from chronomem import Memory, State
from chronomem.backends import pgpipeline

from .conftest import ManualClock


class Wire:
    """libpq's trace of every connection of a store's pool: the round trips of
    a call are the turns from frontend messages to backend messages (a
    pipeline's statements go out together and their results come back
    together: one turn), not counting the pool's pre-ping (an empty query
    each checkout, the pool's and not the write's)."""

    def __init__(self, memory: Memory) -> None:
        import psycopg

        self.fd, self.path = tempfile.mkstemp()
        self.flags = psycopg.pq.Trace.SUPPRESS_TIMESTAMPS
        self.conns: list[Any] = []
        engine = memory.backend.engine
        engine.dispose()  # every connection from here on is traced

        def traced(dbapi: Any, _record: Any) -> None:
            self.conns.append(dbapi.pgconn)
            self._on(dbapi.pgconn)

        event.listen(engine, "connect", traced)

    def _on(self, pgconn: Any) -> None:
        pgconn.trace(self.fd)
        pgconn.set_trace_flags(self.flags)

    def round_trips(self, call: Any) -> int:
        for c in self.conns:
            c.untrace()  # flushes the trace so far
        start = os.lseek(self.fd, 0, os.SEEK_END)
        for c in self.conns:
            self._on(c)
        call()
        for c in self.conns:
            c.untrace()
        with open(self.path, "rb") as f:
            f.seek(start)
            lines = f.read().decode("utf-8", "replace").splitlines()
        turns, last, ping = 0, "", False
        for line in lines:
            side, _, rest = line.partition("\t")
            if side not in ("F", "B"):
                continue
            if side == "F":
                ping = rest.split("\t")[1:3] == ["Query", ' ";"']
            elif last == "F" and not ping:
                turns += 1
            last = side
        return turns

    def close(self) -> None:
        os.close(self.fd)
        os.unlink(self.path)


@pytest.fixture
def pg_memory(pg_url: str, clock: ManualClock) -> Iterator[Memory]:
    m = Memory(pg_url, clock=clock)
    try:
        yield m
    finally:
        m.close()


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_one_remember_is_three_round_trips(pg_memory: Memory) -> None:
    wire = Wire(pg_memory)
    try:
        pg_memory.remember("ada", "lives_in", "Paris")  # the registry is cached from here
        # a new slot, a supersession (close + insert), an unchanged repeat, a MANY value
        calls = [
            lambda: pg_memory.remember("bob", "lives_in", "Rome"),
            lambda: pg_memory.remember("ada", "lives_in", "Berlin"),
            lambda: pg_memory.remember("ada", "lives_in", "Berlin"),
            lambda: pg_memory.remember("ada", "likes", "tea"),
        ]
        counts = [wire.round_trips(c) for c in calls]
        assert counts == [3, 3, 3, 3]
        # a batch of new slots, too
        facts = [{"subject": f"s{i}", "predicate": "likes", "obj": f"o{i}"} for i in range(50)]
        assert wire.round_trips(lambda: pg_memory.remember_many(facts)) == 3
    finally:
        wire.close()
    live = {(f.subject, f.object) for f in pg_memory.facts(predicate="lives_in")}
    assert live == {("ada", "Berlin"), ("bob", "Rome")}


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_one_remember_with_pgvector_is_three_round_trips(
    pgvector_url: str, clock: ManualClock
) -> None:
    """With pgvector, the vector column's update goes out queued behind the vector
    rows' insert, with the ``COMMIT``: still three round trips, and the column is
    set (the vector leg finds the fact)."""
    m = Memory(pgvector_url, clock=clock)
    wire = Wire(m)
    try:
        m.remember("ada", "lives_in", "Paris")  # the registry is cached from here
        calls = [
            lambda: m.remember("bob", "lives_in", "Rome"),
            lambda: m.remember("ada", "lives_in", "Berlin"),
        ]
        assert [wire.round_trips(c) for c in calls] == [3, 3]
        with m.backend.read() as conn:
            unset, total = conn.execute(
                text(
                    "SELECT count(*) FILTER (WHERE embedding IS NULL), count(*) "
                    "FROM cm_vectors WHERE tenant = :t"
                ),
                {"t": m.scope.tenant},
            ).one()
        assert total >= 3 and unset == 0
    finally:
        wire.close()
        m.close()


def test_load_sent_behind_a_waiting_lock_sees_the_holder_commit(
    pg_url: str, clock: ManualClock
) -> None:
    """Writer A remembers Paris and keeps its transaction open (the tenant's clock
    row locked) until writer B's remember of Berlin, whose stamp, locks and load
    went out together, has been waiting on it; then A commits. B's load runs
    after the wait and sees Paris (a snapshot from before the wait would not,
    and B would store a second current version over Paris's interval)."""
    a, b = Memory(pg_url, clock=clock), Memory(pg_url, clock=clock)
    try:
        b.remember("warm", "likes", "up")  # b's registry is cached: its next write pipelines
        started, done = threading.Event(), threading.Event()
        receipts: dict[str, Any] = {}
        real_write = a._engine.backend.write

        @contextmanager
        def slow_write() -> Iterator[Any]:
            with real_write() as conn:
                yield conn
                started.set()  # A's write is done but not committed
                deadline = time.monotonic() + 30
                while not _waiting_on_lock(a) and time.monotonic() < deadline:
                    time.sleep(0.02)
                time.sleep(0.1)

        def run_b() -> None:
            started.wait(30)
            receipts["b"] = b.remember("ada", "lives_in", "Berlin")
            done.set()

        a._engine.backend.write = slow_write  # type: ignore[method-assign]
        tb = threading.Thread(target=run_b)
        tb.start()
        try:
            receipts["a"] = a.remember("ada", "lives_in", "Paris")
        finally:
            a._engine.backend.write = real_write  # type: ignore[method-assign]
        tb.join(30)
        assert done.is_set()
        assert receipts["b"].superseded == receipts["a"].added  # B saw A's version, cut it
        live = [f.object for f in b.facts(subject="ada", predicate="lives_in")]
        assert live == ["Berlin"]
        assert b.check().i1_violations == 0
    finally:
        a.close()
        b.close()


def _waiting_on_lock(m: Memory) -> bool:
    with m.backend.engine.connect() as conn:
        n = conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
        ).scalar()
    return bool(n)


def test_a_registration_since_the_cache_still_decides_the_slot(
    pg_url: str, clock: ManualClock
) -> None:
    """``mine`` caches the registry, ``other`` then registers ``works_at2`` as
    single-valued: ``mine``'s writes, resolved first with its cached index
    (MANY: one slot per value), are resolved again once the stamp shows the new
    registry, so the second value supersedes the first."""
    mine, other = Memory(pg_url, clock=clock), Memory(pg_url, clock=clock)
    try:
        mine.remember("warm", "likes", "up")
        other.register_predicate("works_at2", cardinality="one")
        mine.remember("ada", "works_at2", "Acme")
        second = mine.remember("ada", "works_at2", "Initech")
        assert len(second.superseded) == 1
        live = [f.object for f in mine.facts(subject="ada", predicate="works_at2")]
        assert live == ["Initech"]
    finally:
        mine.close()
        other.close()


def test_one_by_one_gives_the_same_history(pg_url: str) -> None:
    """The same writes with statements sent together and one by one store the
    same timeline."""

    def history(enabled: bool) -> list[tuple[Any, ...]]:
        old = pgpipeline.ENABLED
        pgpipeline.ENABLED = enabled
        m = Memory(pg_url, clock=ManualClock(), tenant=f"t{int(enabled)}")
        try:
            m.remember("ada", "lives_in", "Paris")
            m.remember("ada", "lives_in", "Berlin")
            m.remember("ada", "likes", "tea")
            m.remember("ada", "likes", "tea")
            m.end("ada", "likes", "tea")
            m.remember_many(
                [{"subject": "bob", "predicate": "likes", "obj": f"x{i}"} for i in range(5)]
            )
            m.remember("bob", "likes", "x1")
            return sorted(
                (f.subject, f.predicate, f.object, f.valid_from, f.valid_to, str(f.state))
                for f in m.facts(states=list(State))
            )
        finally:
            m.close()
            pgpipeline.ENABLED = old

    assert history(True) == history(False)


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_failing_queued_statement_writes_nothing(
    pg_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A queued statement that fails (here one added behind the inserts) fails the
    write at its commit with the database's error; nothing of it is stored, and
    the next write on the same pool works."""
    pg_memory.remember("ada", "lives_in", "Paris")
    real = pgpipeline.enqueue

    def and_fail(conn: Any, stmt: Any, params: Any, check: Any = None) -> None:
        real(conn, stmt, params, check)
        real(conn, "SELECT 1 / 0", None)

    monkeypatch.setattr(pgpipeline, "enqueue", and_fail)
    with pytest.raises(DBAPIError, match="division by zero"):
        pg_memory.remember("ada", "lives_in", "Berlin")
    monkeypatch.setattr(pgpipeline, "enqueue", real)
    assert [f.object for f in pg_memory.facts(subject="ada")] == ["Paris"]
    pg_memory.remember("ada", "lives_in", "Rome")
    assert [f.object for f in pg_memory.facts(subject="ada")] == ["Rome"]
