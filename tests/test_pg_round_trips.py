"""PostgreSQL writes in few round trips (issue #32 item 4): a single ``remember``
waits for the server twice (``BEGIN``, the stamp, slot locks and slot load sent
together; the inserts sent with the ``COMMIT``), counted on the wire (libpq's
protocol trace), not timed; a batch sends as many statements as one fact does,
and pgvector's embedding goes in with the vector rows' insert. And the statements sent together keep
the one-by-one semantics: a load queued behind a lock that waits sees what the
lock's holder committed, and a registration made by another process since this
one cached the registry still decides the slot. A write that ends a subject's
other facts (a LangGraph put) reads the subject's live slots with its stamp,
locks and load (three round trips for the put, its point read included); on
the ordinary path (writes by id) the stamp goes with the first read; either
read, sent behind a stamp that waits, sees what the clock row's holder
committed."""

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
from chronomem.backends import pgpipeline, postgres
from chronomem.ops import EndOp, RetractOp

from .conftest import ManualClock
from .statements import counting


class Wire:
    """libpq's trace of every connection of a store's pool: the round trips of
    a call are the times the client waits for the server, counted from the
    frontend messages that end a wait's request: a ``Sync`` (a pipeline's
    statements go out together, end with one, and their results come back
    together: one round trip), a simple ``Query``, or a ``Flush`` that asks for
    a pipeline's results without a sync. Not counted: the pool's pre-ping (an
    empty query each checkout, the pool's and not the call's), and the
    ``Flush`` psycopg sends right behind a ``Sync`` (the same wait). Results a
    server sends before a sync (its output buffer full) and the client reads
    while still sending are no wait of their own: counting the turns from
    frontend to backend messages instead counted such a read as one, and made
    the counts depend on timing."""

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
        waits, previous = 0, ""
        for line in lines:
            side, _, rest = line.partition("\t")
            if side != "F":
                continue
            message = rest.split("\t")[1:3]
            kind = message[0] if message else ""
            ping = message == ["Query", ' ";"']
            waits += kind == "Sync" or (kind == "Query" and not ping)
            waits += kind == "Flush" and previous != "Sync"
            previous = kind
        return waits

    def close(self) -> None:
        os.close(self.fd)
        os.unlink(self.path)


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_results_read_while_the_client_still_sends_are_no_round_trip(pg_memory: Memory) -> None:
    """A pipeline's first statement returns more than the server's output buffer
    holds, so the server sends it before the sync; the client, slowed before the
    second statement, reads those results while it still sends. It never waited:
    one round trip, whatever the timing (the count by turns from frontend to
    backend messages said two here, as it did now and then under load)."""
    big = "SELECT repeat('x', 65536) FROM generate_series(1, 4)"
    late = "SELECT 2"

    def slow(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement == late:
            time.sleep(0.3)  # the first statement's rows are in the socket by now

    wire = Wire(pg_memory)
    event.listen(pg_memory.backend.engine, "before_cursor_execute", slow)
    try:
        with pg_memory.backend.statement_read() as conn:
            conn.exec_driver_sql("SELECT 1")  # the pool's checkout and ping are behind us
            rows: list[Any] = []

            def both() -> None:
                rows.extend(pg_memory.backend.fetch_together(conn, [(big, None), (late, None)]))

            assert wire.round_trips(both) == 1
        assert [len(r) for r in rows] == [4, 1] and rows[1][0][0] == 2
    finally:
        event.remove(pg_memory.backend.engine, "before_cursor_execute", slow)
        wire.close()


@pytest.fixture
def pg_memory(pg_url: str, clock: ManualClock) -> Iterator[Memory]:
    m = Memory(pg_url, clock=clock)
    try:
        yield m
    finally:
        m.close()


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_one_remember_is_two_round_trips(pg_memory: Memory) -> None:
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
        assert counts == [2, 2, 2, 2]
        # a batch of new slots, too
        facts = [{"subject": f"s{i}", "predicate": "likes", "obj": f"o{i}"} for i in range(50)]
        assert wire.round_trips(lambda: pg_memory.remember_many(facts)) == 2
    finally:
        wire.close()
    live = {(f.subject, f.object) for f in pg_memory.facts(predicate="lives_in")}
    assert live == {("ada", "Berlin"), ("bob", "Rome")}


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_one_remember_with_pgvector_is_two_round_trips(
    pgvector_url: str, clock: ManualClock
) -> None:
    """With pgvector, the vector column is set in the vector rows' insert, sent
    with the ``COMMIT``: still two round trips, and the column is set."""
    m = Memory(pgvector_url, clock=clock)
    wire = Wire(m)
    try:
        m.remember("ada", "lives_in", "Paris")  # the registry is cached from here
        calls = [
            lambda: m.remember("bob", "lives_in", "Rome"),
            lambda: m.remember("ada", "lives_in", "Berlin"),
        ]
        assert [wire.round_trips(c) for c in calls] == [2, 2]
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


def _held_until_the_other_waits(m: Memory, started: threading.Event) -> Any:
    """``m``'s write, whose transaction stays open (the tenant's clock row
    locked) until another connection waits on a lock, then commits."""
    real_write = m._engine.backend.write

    @contextmanager
    def slow_write() -> Iterator[Any]:
        with real_write() as conn:
            yield conn
            started.set()  # the write is done but not committed
            deadline = time.monotonic() + 30
            while not _waiting_on_lock(m) and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.1)

    return real_write, slow_write


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
@pytest.mark.parametrize("by_id", [False, True], ids=["early", "ordinary"])
def test_a_live_read_sent_behind_a_waiting_stamp_sees_the_holder_commit(
    pg_url: str, clock: ManualClock, by_id: bool
) -> None:
    """Writer A remembers a value of ``likes`` (many-valued) and holds its
    transaction until writer B's end of every ``likes`` value, whose stamp and
    read of the subject's live values went out together, waits on it; then A
    commits. B's live read runs after the wait and finds A's value, which B
    ends (a snapshot from before the wait would miss it, and leave it live).
    Alone, B's end sends its stamp, locks, load and live read together
    (``begin_write``); with a retract by id beside it, B takes the ordinary
    path, whose queued stamp goes with the live read (``advance_clock_later``)."""
    a, b = Memory(pg_url, clock=clock), Memory(pg_url, clock=clock)
    try:
        a.remember("ada", "likes", "tea")
        b.remember("warm", "likes", "up")  # b's registry is cached: its end pipelines
        other = b.remember("cy", "lives_in", "Oslo").fact_ids[0]
        started, done = threading.Event(), threading.Event()
        receipts: dict[str, Any] = {}
        real_write, slow_write = _held_until_the_other_waits(a, started)
        ops: list[Any] = [EndOp("ada", "likes", None, None)]
        if by_id:
            ops.insert(0, RetractOp(other))

        def run_b() -> None:
            started.wait(30)
            receipts["b"] = b.apply(ops)
            done.set()

        a._engine.backend.write = slow_write  # type: ignore[method-assign]
        tb = threading.Thread(target=run_b)
        tb.start()
        try:
            receipts["a"] = a.remember("ada", "likes", "jam")
        finally:
            a._engine.backend.write = real_write  # type: ignore[method-assign]
        tb.join(30)
        assert done.is_set()
        assert len(receipts["a"].added) == 1
        ended = set(receipts["b"].superseded)
        assert set(receipts["a"].added) <= ended  # B saw A's version and ended it
        assert b.facts(subject="ada", predicate="likes") == []
        assert b.check().i1_violations == 0
    finally:
        a.close()
        b.close()


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_racing_puts_of_one_new_item_leave_one_put_live(pg_url: str, clock: ManualClock) -> None:
    """Two stores put one new key, indexed on fields a, b and c: A puts {a, b},
    B {a, c}. B reads the item (absent) while A's put is written but not
    committed, so B plans a new item's put, which ends whatever else the
    subject holds; B's stamp waits on A. B's read of the subject's live values,
    sent with its stamp, locks and load, runs after the wait: it finds A's
    ``b`` entry and ends it. The history: A's versions all closed (its document
    and ``a`` superseded by B's, its ``b`` ended), one live version per slot,
    B's alone."""
    store_mod = pytest.importorskip("langgraph.store.chronomem")
    from langgraph.store.chronomem import keys

    from .langgraph.fakes import CharEmbeddings

    index: Any = {"dims": 16, "embed": CharEmbeddings(16), "fields": ["a", "b", "c"]}
    ns, key = ("race",), "doc"
    sa = store_mod.ChronomemStore(pg_url, clock=clock, index=index)
    sb = store_mod.ChronomemStore(pg_url, clock=clock, index=index)
    try:
        sa.put(("warm",), "up", {"a": "x"})
        sb.put(("warm",), "up", {"a": "y"})
        started, done = threading.Event(), threading.Event()
        real_write, slow_write = _held_until_the_other_waits(sa.memory, started)

        def run_b() -> None:
            started.wait(30)
            sb.put(ns, key, {"a": "one", "c": "three"})
            done.set()

        sa.memory._engine.backend.write = slow_write  # type: ignore[method-assign]
        tb = threading.Thread(target=run_b)
        tb.start()
        try:
            sa.put(ns, key, {"a": "one", "b": "two"})
        finally:
            sa.memory._engine.backend.write = real_write  # type: ignore[method-assign]
        tb.join(30)
        assert done.is_set()
        with sb.memory.backend.engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT predicate, object, recorded_at, superseded_at, valid_to "
                    "FROM cm_versions WHERE subject_key = :s ORDER BY recorded_at, predicate"
                ),
                {"s": keys.subject(ns, key)},
            ).all()
        first = min(r.recorded_at for r in rows)
        a_rows = [r for r in rows if r.recorded_at == first]
        b_rows = [r for r in rows if r.recorded_at != first]
        assert {r.predicate for r in a_rows} == {
            keys.DOC, keys.index_predicate("a"), keys.index_predicate("b")
        }  # fmt: skip
        # every version A wrote is closed: superseded (its document, its ``a``), or
        # ended at B's transaction time (its ``b``: a closed version and its cut)
        live = [r for r in rows if r.superseded_at is None and r.valid_to is None]
        assert sorted(r.predicate for r in live) == sorted(
            [keys.DOC, keys.index_predicate("a"), keys.index_predicate("c")]
        )
        assert all(r.recorded_at != first for r in live)
        ended_b = [r for r in b_rows if r.predicate == keys.index_predicate("b")]
        assert ended_b and all(r.valid_to is not None for r in ended_b)
        item = sb.get(ns, key)
        assert item is not None and item.value == {"a": "one", "c": "three"}
        assert sb.memory.check().i1_violations == 0
    finally:
        sa.close()
        sb.close()


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


@contextmanager
def _failing_queue(monkeypatch: pytest.MonkeyPatch, after: str = "") -> Iterator[None]:
    """Inside the block, a failing statement is queued behind each queued statement
    whose SQL contains ``after`` (every one by default); the real queue after it."""
    real = pgpipeline.enqueue

    def and_fail(conn: Any, stmt: Any, params: Any, check: Any = None) -> None:
        real(conn, stmt, params, check)
        if after in pgpipeline.driver_sql(conn, stmt):
            real(conn, "SELECT 1 / 0", None)

    monkeypatch.setattr(pgpipeline, "enqueue", and_fail)
    try:
        yield
    finally:
        monkeypatch.setattr(pgpipeline, "enqueue", real)


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_failing_queued_statement_writes_nothing(
    pg_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A queued statement that fails (here one added behind the inserts) fails the
    write at its commit with the database's error; nothing of it is stored, and
    the next write on the same pool works."""
    pg_memory.remember("ada", "lives_in", "Paris")
    with _failing_queue(monkeypatch), pytest.raises(DBAPIError, match="division by zero"):
        pg_memory.remember("ada", "lives_in", "Berlin")
    assert [f.object for f in pg_memory.facts(subject="ada")] == ["Paris"]
    pg_memory.remember("ada", "lives_in", "Rome")
    assert [f.object for f in pg_memory.facts(subject="ada")] == ["Rome"]


def _likes(prefix: str, n: int) -> list[dict[str, Any]]:
    return [{"subject": f"{prefix}{i}", "predicate": "likes", "obj": "tea"} for i in range(n)]


def _lives(n: int, city: str) -> list[dict[str, Any]]:
    return [{"subject": f"p{i}", "predicate": "lives_in", "obj": city} for i in range(n)]


@pytest.mark.parametrize("vector", [False, True], ids=["pg15", "pgvector"])
@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_batch_sends_as_many_statements_as_one_fact(
    vector: bool,
    request: pytest.FixtureRequest,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """New facts, and facts superseding others (closes and inserts), in batches of
    1, 20 and 1,200 facts (over 500: the load's former chunk size): the same
    statements each time, so a batch's statements do not grow with it; and the
    inserts are all there. (No planner upkeep meanwhile: an ``ANALYZE`` takes the
    queue with it, and the ``COMMIT`` then goes alone, uncounted.)"""
    monkeypatch.setattr(postgres, "ANALYZE_FIRST", 10**9)
    url = request.getfixturevalue("pgvector_url" if vector else "pg_url")
    m = Memory(url, clock=clock)
    try:
        m.remember("warm", "likes", "up")  # the registry is cached from here
        new, moved = [], []
        for n in (1, 20, 1200):
            with counting(m) as cost:
                m.remember_many(_likes(f"n{n}-", n))
            new.append(len(cost.statements))
            m.remember_many(_lives(n, "Paris"))
            with counting(m) as cost:
                receipt = m.remember_many(_lives(n, "Rome"))
            moved.append(len(cost.statements))
            assert len(receipt.superseded) == n
            assert not any("UPDATE cm_vectors" in s for s in cost.statements)
        assert new == [new[0]] * 3 and moved == [moved[0]] * 3
        assert new[0] <= 6 and moved[0] <= 7  # lock, load, inserts (+ closes), COMMIT
        assert len(m.facts(predicate="lives_in")) == 1200
    finally:
        m.close()


def _embeddings(m: Memory) -> dict[tuple[str, str], str]:
    with m.backend.read() as conn:
        rows = conn.execute(
            text(
                "SELECT v.subject, v.object, CAST(e.embedding AS text) FROM cm_vectors e "
                "JOIN cm_versions v ON v.tenant = e.tenant AND v.id = e.item_id "
                "WHERE e.tenant = :t AND e.kind = 'v'"
            ),
            {"t": m.scope.tenant},
        ).all()
    return {(s, o): e for s, o, e in rows}


def test_embedding_in_the_insert_is_the_update_s(pgvector_url: str) -> None:
    """The embedding set inside the vector rows' insert is the one the ``UPDATE``
    after it (statements one by one) stores: same text, same vector, for every
    fact, a superseding one and a text with a quote and a backslash too."""

    def stored(enabled: bool) -> dict[tuple[str, str], str]:
        old = pgpipeline.ENABLED
        pgpipeline.ENABLED = enabled
        m = Memory(pgvector_url, clock=ManualClock(), tenant=f"e{int(enabled)}")
        try:
            m.remember_many(_likes("s", 30))
            m.remember("ada", "lives_in", "Paris")
            m.remember("ada", "lives_in", 'Ber"lin\\')
            return _embeddings(m)
        finally:
            m.close()
            pgpipeline.ENABLED = old

    together, alone = stored(True), stored(False)
    assert len(together) == 32 and None not in together.values()
    assert together == alone


def test_text_with_backslash_or_nul_goes_in_as_given(pg_memory: Memory) -> None:
    """A batch whose text holds a backslash or a NUL takes the escaping path, one
    without either the rows-as-given one: both read back exactly."""
    odd = ["a\\b", "nul\x00here", 'quote"d', "tab\tand\nnewline", "plain é ü"]
    pg_memory.remember_many([{"subject": "ada", "predicate": "likes", "obj": o} for o in odd])
    pg_memory.remember_many([{"subject": "bob", "predicate": "likes", "obj": o} for o in odd[2:]])
    got = {(f.subject, f.object) for f in pg_memory.facts(predicate="likes")}
    assert got == {("ada", o) for o in odd} | {("bob", o) for o in odd[2:]}


def test_write_connections_go_back_to_the_pool_as_they_came(
    pg_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write's connection runs its transaction with the driver in autocommit
    (its ``BEGIN`` queued); it is back out of autocommit when it returns to the
    pool, after a commit and after a failed write alike, and a read then sees
    one snapshot again (a read transaction)."""
    seen: list[bool] = []
    engine = pg_memory.backend.engine

    def back(dbapi: Any, _record: Any) -> None:
        seen.append(dbapi.autocommit)

    event.listen(engine, "checkin", back)
    try:
        pg_memory.remember("ada", "lives_in", "Paris")
        with _failing_queue(monkeypatch), pytest.raises(DBAPIError):
            pg_memory.remember("ada", "lives_in", "Berlin")
        pg_memory.remember("ada", "likes", "tea")
    finally:
        event.remove(engine, "checkin", back)
    assert len(seen) >= 3 and not any(seen)
    with pg_memory.backend.read() as conn:
        status = conn.connection.driver_connection.info.transaction_status
        conn.execute(text("SELECT 1"))
        import psycopg

        assert conn.connection.driver_connection.info.transaction_status == (
            psycopg.pq.TransactionStatus.INTRANS
        )
        assert status == psycopg.pq.TransactionStatus.IDLE


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_langgraph_put_round_trips(pg_url: str) -> None:
    """A LangGraph put (its read of the item, then a document write: the stamp,
    the slot locks, the load and the subject's live values sent together, then
    the inserts with the ``COMMIT``) waits for the server three times, a new
    item's (which ends whatever else its subject holds) as an existing one's:
    the read is the point read's statement run first in the write transaction
    (``Memory.apply_planned``), its ``BEGIN`` queued with it (it was one
    autocommit statement before the write, the same count), not a
    ``BEGIN``/``SELECT``/``COMMIT`` of its own (five while the live values and then the locks and
    load went after the stamp, each in a round trip of its own; seven, nine
    before). A ``get`` is one round trip."""
    store_mod = pytest.importorskip("langgraph.store.chronomem")
    store = store_mod.ChronomemStore(pg_url)
    try:
        store.put(("users", "ada"), "prefs", {"food": "tea"})  # registry and pool warm
        memory = store._memory
        wire = Wire(memory)
        try:
            counts = [
                wire.round_trips(lambda: store.put(("users", "bob"), "prefs", {"food": "rice"})),
                wire.round_trips(lambda: store.put(("users", "ada"), "prefs", {"food": "jam"})),
            ]
            got = wire.round_trips(lambda: store.get(("users", "bob"), "prefs"))
        finally:
            wire.close()
        assert counts == [3, 3]
        assert got == 1
        item = store.get(("users", "ada"), "prefs")
        assert item is not None and item.value == {"food": "jam"}
    finally:
        store.close()


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_langgraph_puts_of_indexed_items_round_trips(pg_url: str) -> None:
    """Puts into a store indexing two fields, whose items hold an entry per field
    beside the document (so a put ends the subject's other facts): a new item's
    put and an existing item's with the same fields wait three times (the item's
    read; stamp, locks, load and the subject's live values; inserts and
    ``COMMIT``), one that drops a field four (one text left, it goes in the
    document: the entries' slots, found by the live read, are locked and loaded
    then, and ended); five each while the live read and the locks and load each
    waited after the stamp. The item reads back as put, its entries ended."""
    store_mod = pytest.importorskip("langgraph.store.chronomem")
    from langgraph.store.chronomem import keys

    from .langgraph.fakes import CharEmbeddings

    index: Any = {"dims": 16, "embed": CharEmbeddings(16), "fields": ["a", "b"]}
    store = store_mod.ChronomemStore(pg_url, index=index)
    try:
        store.put(("n",), "warm", {"a": "x", "b": "y"})  # registry and pool warm
        wire = Wire(store.memory)
        try:
            counts = [
                wire.round_trips(lambda: store.put(("n",), "k", {"a": "1", "b": "2"})),
                wire.round_trips(lambda: store.put(("n",), "k", {"a": "3", "b": "4"})),
                wire.round_trips(lambda: store.put(("n",), "k", {"a": "5"})),
            ]
        finally:
            wire.close()
        assert counts == [3, 3, 4]
        item = store.get(("n",), "k")
        assert item is not None and item.value == {"a": "5"}
        with store.memory.backend.engine.connect() as conn:
            live = conn.execute(
                text(
                    "SELECT predicate FROM cm_versions WHERE subject_key = :s "
                    "AND superseded_at IS NULL AND valid_to IS NULL ORDER BY predicate"
                ),
                {"s": keys.subject(("n",), "k")},
            ).scalars()
            assert list(live) == [keys.DOC]  # one text: it goes in the document
    finally:
        store.close()


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_write_by_id_sends_its_stamp_with_its_read(pg_memory: Memory) -> None:
    """A retract by id takes the ordinary path: its stamp is queued and goes to
    the server with the read of the fact it names (``advance_clock_later``), one
    round trip where the stamp took one of its own. The retract's whole write:
    ``BEGIN`` with the fact's ownership checks (two), stamp with the fact's
    read, locks with the load, the close with the ``COMMIT``."""
    facts = [pg_memory.remember("ada", "likes", o).fact_ids[0] for o in ("tea", "jam")]
    wire = Wire(pg_memory)
    try:
        trips = wire.round_trips(lambda: pg_memory.retract(facts[0]))
    finally:
        wire.close()
    assert trips == 5
    assert [f.object for f in pg_memory.facts(subject="ada", predicate="likes")] == ["jam"]


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_write_after_an_autocommit_read_still_queues_its_begin(pg_memory: Memory) -> None:
    """A connection back from a read in autocommit (a point read, a search) or at
    another isolation level (an export's snapshot) is reset by the pool to the
    server's default level: the next write on it still sends its ``BEGIN`` with
    the stamp (two round trips, not three with a ``BEGIN ISOLATION LEVEL`` of
    its own), and a point read is one round trip."""

    def snapshot() -> None:
        with pg_memory.backend.snapshot_read() as conn:
            conn.execute(text("SELECT 1"))

    wire = Wire(pg_memory)
    try:
        pg_memory.remember("ada", "lives_in", "Paris")  # one connection, registry cached
        reads = [
            lambda: pg_memory.rows(["ada"]),
            lambda: pg_memory.search("where does ada live"),
            snapshot,
        ]
        assert wire.round_trips(reads[0]) == 1
        counts = []
        for i, read in enumerate(reads):
            read()
            counts.append(wire.round_trips(lambda i=i: pg_memory.remember("ada", "likes", f"t{i}")))
        assert counts == [2, 2, 2]
    finally:
        wire.close()
    assert {f.object for f in pg_memory.facts(subject="ada", predicate="likes")} == {
        "t0",
        "t1",
        "t2",
    }


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_queued_statement_fails_with_the_statement_it_went_with(
    pg_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An end of every value (the ordinary path: its slot locks are queued and go
    out with the slots' load) whose queued statements include one that fails:
    the write fails with the database's error, writes nothing, and the pool's
    next write and read work (the pipeline the load joined is closed). Without
    the failure, the same end is one round trip fewer than with its locks alone."""
    pg_memory.remember_many([{"subject": "ada", "predicate": "likes", "obj": o} for o in "xyz"])
    wire = Wire(pg_memory)
    try:
        pg_memory.remember("bob", "likes", "tea")
        alone = wire.round_trips(lambda: pg_memory.end("bob", "likes"))
    finally:
        wire.close()
    with (
        _failing_queue(monkeypatch, after="pg_advisory_xact_lock"),
        pytest.raises(DBAPIError, match="division by zero"),
    ):
        pg_memory.end("ada", "likes")
    assert sorted(f.object for f in pg_memory.facts(subject="ada")) == ["x", "y", "z"]
    pg_memory.end("ada", "likes")
    assert pg_memory.facts(subject="ada") == []
    # BEGIN + stamp + the subject's values, locks + load, COMMIT (four while the
    # subject's values were read after the stamp, in a round trip of their own)
    assert alone == 3


def test_vector_literal_is_each_component_at_seven_digits() -> None:
    """pgvector's text of a vector: every component as ``f"{x:.7g}"`` writes it
    (the format the stored embeddings and the queries always had), zeros,
    signs, tiny and huge components included."""
    import numpy as np

    from chronomem.retrieval.pgvector import vector_literal

    rng = np.random.default_rng(7)
    vectors = [
        rng.standard_normal(384).astype(np.float32),
        np.array([0.0, -0.0, 1e-30, -3.4e38, 0.1, 1 / 3, 123456789.0], dtype=np.float32),
    ]
    for v in vectors:
        assert vector_literal(v) == "[" + ",".join(f"{x:.7g}" for x in v.tolist()) + "]"


class _Embedder:
    """The hashing embedder, calling ``before`` first (a test's look at the wire)."""

    def __init__(self, before: Any) -> None:
        from chronomem.embedding import HashingEmbedder

        self.inner = HashingEmbedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.before = before

    def embed(self, texts: Any) -> Any:
        self.before()
        return self.inner.embed(texts)


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_the_version_insert_is_on_its_way_before_the_batch_is_embedded(
    pg_url: str, clock: ManualClock
) -> None:
    """A batch's closes and version insert go to the server as soon as they are
    queued (``pgpipeline.launch``), while the client embeds the batch: when the
    embedder runs, the insert is on the wire, and no result was waited for
    (its results come back with the ``COMMIT``'s). Still two round trips."""
    seen: list[bool] = []
    wire: Wire | None = None

    def look() -> None:
        if wire is None:
            return
        for c in wire.conns:
            c.untrace()  # flushes the trace so far
        with open(wire.path, "rb") as f:
            sent = f.read().decode("utf-8", "replace")
        for c in wire.conns:
            wire._on(c)
        tail = sent[sent.rfind("INSERT INTO cm_txclock") :]  # this write's, from its stamp on
        seen.append("INSERT INTO cm_versions" in tail and "UPDATE cm_versions" in tail)

    m = Memory(pg_url, clock=clock, embedder=_Embedder(look))
    try:
        m.remember_many(_lives(30, "Paris"))  # the registry is cached from here
        wire = Wire(m)
        try:
            assert wire.round_trips(lambda: m.remember_many(_lives(30, "Rome"))) == 2
        finally:
            wire.close()
        assert seen == [True]
        assert {f.object for f in m.facts(predicate="lives_in")} == {"Rome"}
    finally:
        m.close()


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_write_failing_after_its_insert_went_out_writes_nothing(
    pg_url: str, clock: ManualClock
) -> None:
    """An embedder that fails once the batch's version insert is on its way
    (``pgpipeline.launch``) fails the write with its own error: nothing of it is
    stored, the connection goes back to the pool out of pipeline mode and out of
    autocommit, and the next write and read work."""
    import psycopg

    fail = {"on": False}

    def boom() -> None:
        if fail["on"]:
            raise RuntimeError("embedder down")

    m = Memory(pg_url, clock=clock, embedder=_Embedder(boom))
    back: list[tuple[bool, Any]] = []

    def checkin(dbapi: Any, _record: Any) -> None:
        back.append((dbapi.autocommit, dbapi.pgconn.pipeline_status))

    event.listen(m.backend.engine, "checkin", checkin)
    try:
        m.remember_many(_lives(20, "Paris"))
        fail["on"] = True
        with pytest.raises(RuntimeError, match="embedder down"):
            m.remember_many(_lives(20, "Rome"))
        fail["on"] = False
        assert {f.object for f in m.facts(predicate="lives_in")} == {"Paris"}
        m.remember_many(_lives(20, "Oslo"))
        assert {f.object for f in m.facts(predicate="lives_in")} == {"Oslo"}
        assert m.check().i1_violations == 0
    finally:
        event.remove(m.backend.engine, "checkin", checkin)
        m.close()
    off = psycopg.pq.PipelineStatus.OFF
    assert back and all(ac is False and status == off for ac, status in back)


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_langgraph_batch_loads_its_slots_in_one_round_trip(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A LangGraph batch of 700 new items (702 slots: over 500, the former part
    size) loads its slots ``FOR UPDATE`` in one statement (``Backend.slot_rows``,
    sent with the slot locks), where parts of a bounded ``IN`` list (a backend
    without ``slot_rows``) took two statements and one round trip more; either
    way the items, and the same keys put again with one field changed, come out
    the same. On the ordinary path (``Writer._early`` off: a write whose slots
    follow from reads by id), where ``slot_rows`` loads the slots; the early
    path loads them in ``begin_write``'s one statement."""
    store_mod = pytest.importorskip("langgraph.store.chronomem")
    from langgraph.store.base import PutOp

    from chronomem.writer import Writer

    monkeypatch.setattr(Writer, "_early", lambda *_: None)

    n = 700

    def puts(ns: str, b: str) -> list[PutOp]:
        return [PutOp((ns,), f"k{i}", {"a": i, "b": b, "c": [i]}) for i in range(n)]

    store = store_mod.ChronomemStore(pg_url)
    try:
        store.batch(puts("warm", "x")[:3])  # registry and pool warm
        memory = store._memory
        wire = Wire(memory)
        loads, trips = [], []
        try:
            for ns in ("one", "parts"):
                if ns == "parts":
                    monkeypatch.setattr(
                        postgres.PostgresBackend, "slot_rows", classmethod(lambda *_: None)
                    )
                with counting(memory) as cost:
                    trips.append(wire.round_trips(lambda ns=ns: store.batch(puts(ns, "x"))))
                loads.append([s for s in cost.statements if s.endswith("FOR UPDATE")])
                store.batch(puts(ns, "y"))
        finally:
            wire.close()
        assert all(s.startswith("SELECT cm_versions.tenant") for s in loads[0] + loads[1])
        assert [len(x) for x in loads] == [1, 2]
        assert trips[1] == trips[0] + 1
        for ns in ("one", "parts"):
            listed = store.search((ns,), limit=n + 10)
            assert sorted(it.key for it in listed) == sorted(f"k{i}" for i in range(n))
            assert all(
                it.value == {"a": int(it.key[1:]), "b": "y", "c": [int(it.key[1:])]}
                for it in listed
            )
    finally:
        store.close()
