"""What a PostgreSQL search costs in round trips (issue #32, item 5): counted
statements, never seconds. A search reads the clock (with the registry's version),
runs one statement per SQL leg (the mirror re-scores a small store's vector
candidates itself) and fetches the kept rows with their sources in one more; it runs outside a transaction (autocommit: no BEGIN, no COMMIT) and
without a savepoint around each leg. A leg whose SQL fails still fails alone."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event

from chronomem import Memory
from chronomem.backends import pgpipeline
from chronomem.retrieval import legs

from .test_pg_round_trips import Wire


@pytest.fixture(params=["postgres", "pgvector"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def filled(memory: Memory) -> Memory:
    ep = memory.add_episode("Ann told me she moved to Lisbon.")
    for i in range(40):
        memory.remember(f"user{i}", "lives_in", f"city{i % 7} north", source=ep.id)
    memory.remember("ann", "lives_in", "Lisbon", source=ep.id)
    return memory


class Seen:
    def __init__(self) -> None:
        self.statements: list[str] = []
        self.autocommit: list[bool] = []


def _watch(memory: Memory) -> Iterator[Seen]:
    seen = Seen()
    engine = memory.backend.engine

    def note(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.statements.append(statement)
        seen.autocommit.append(bool(conn.connection.driver_connection.autocommit))

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", note)


def _count(memory: Memory, query: str, **kw: Any) -> tuple[Seen, Any]:
    gen = _watch(memory)
    seen = next(gen)
    try:
        hits = memory.search(query, **kw)
    finally:
        gen.close()
    return seen, hits


def test_a_search_is_a_few_statements_outside_a_transaction(filled: Memory, backend: str) -> None:
    filled.search("where does user3 live city3")  # the mirror's first sync; HNSW settings
    seen, hits = _count(filled, "where does user5 live city5", k=10)
    assert hits and "user5" in [h.fact.subject for h in hits if h.fact is not None]
    sql = seen.statements
    assert not [s for s in sql if s.lstrip().upper().startswith(("SAVEPOINT", "RELEASE"))], sql
    # every statement on an autocommit connection: psycopg sends no BEGIN or COMMIT
    assert seen.autocommit and all(seen.autocommit), sql
    # the clock (with the registry's version); the lexical leg; with pgvector the
    # HNSW leg (without it the mirror re-scores its vector candidates from its own
    # float32 copy: no statement); the kept rows with their sources. The HNSW
    # settings are set once per pooled connection.
    settings = [s for s in sql if "set_config" in s]
    assert len(sql) - len(settings) == (4 if backend == "pgvector" else 3), sql
    assert sum("cm_vectors" in s for s in sql) == (backend == "pgvector")
    assert len(settings) <= 1
    assert sum("cm_txclock" in s for s in sql) == 1  # no second read for the registry
    assert sum("cm_sources" in s for s in sql) == 1  # the sources with the rows


def test_the_hits_carry_their_sources_in_order(filled: Memory) -> None:
    second = filled.add_episode("Ann confirmed Lisbon again.")
    filled.remember("ann", "lives_in", "Lisbon", source=second.id)  # a repeat: one more source
    hit = next(h for h in filled.search("ann lisbon") if h.fact and h.fact.subject == "ann")
    assert hit.fact is not None
    assert hit.fact.source_episode_ids == filled.facts(subject="ann")[0].source_episode_ids
    assert len(hit.fact.source_episode_ids) == 2


def test_a_leg_whose_sql_fails_fails_alone(filled: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No savepoint: the failed statement aborts no transaction the other legs
    run in (there is none), so they still run and the search is degraded only."""
    real = legs.lexical_facts

    def broken(conn: Any, *args: Any, **kw: Any) -> Any:
        conn.exec_driver_sql("SELECT 1 / 0")  # division by zero, on the server
        return real(conn, *args, **kw)

    monkeypatch.setattr(legs, "lexical_facts", broken)
    res = filled.search("where does ann live lisbon")
    assert set(res.failed_legs) == {"fact_lexical"}
    assert "DivisionByZero" in res.failed_legs["fact_lexical"] or "division" in (
        res.failed_legs["fact_lexical"].lower()
    )
    assert any(h.fact is not None and h.fact.subject == "ann" for h in res)
    monkeypatch.setattr(legs, "lexical_facts", real)
    assert not filled.search("where does ann live lisbon").degraded


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_a_search_waits_for_the_server_twice(filled: Memory, backend: str) -> None:
    """Counted on the wire (libpq's trace): the clock read goes out with the fact
    lexical leg's statement, in its round trip (``prepared.Ahead``), then the kept
    rows: two round trips (three before: the clock alone first). With pgvector the
    HNSW leg, which needs the synced mirror, is one more."""
    wire = Wire(filled)
    try:
        filled.search("where does user3 live city3")  # the mirror's first sync; HNSW settings
        trips = [
            wire.round_trips(lambda q=q: filled.search(q, k=10))
            for q in ("where does user5 live city5", "ann lisbon", "user7 north")
        ]
        assert trips == [3 if backend == "pgvector" else 2] * 3
    finally:
        wire.close()


def test_a_warm_search_ranks_as_a_fresh_one(filled: Memory, url: str) -> None:
    """The clock read riding with the lexical leg changes no result: a store's
    warm mirror (the leg first, the clock with it) and a fresh one (the sync
    first, then the leg, as before) give the same hits, scores and explanations,
    also right after writes the warm mirror has yet to catch up with."""
    fresh = Memory(url)
    try:
        queries = ["where does user5 live city5", "ann lisbon", "north city3", "lives in"]
        for step in range(3):
            at = filled.now() + timedelta(days=1)  # one instant: the same recency
            for q in queries:
                fresh._engine.retrieval.mirrors.clear()  # type: ignore[union-attr]
                want = _shown(fresh.search(q, k=10, valid_at=at))
                assert _shown(filled.search(q, k=10, valid_at=at)) == want
                assert want
            filled.remember(f"late{step}", "lives_in", f"city{step} north")
            filled.remember("ann", "lives_in", ["Porto", "Lisbon", "Faro"][step])
    finally:
        fresh.close()


def _shown(hits: Any) -> list[tuple[Any, ...]]:
    return [
        (h.fact.version_id if h.fact else h.episode.id, h.score, sorted(h.explain.items()))
        for h in hits
    ]


def test_a_read_fetch_keeps_cursor_events_and_errors(filled: Memory) -> None:
    """On an autocommit connection (a search's, a point read's) ``fetch`` runs the
    statement on a driver cursor of its own, past SQLAlchemy's result: the rows
    are those SQLAlchemy's path gives, the statement still passes the cursor
    events (statement counts, the Citus guard), and a failure is still
    SQLAlchemy's error."""
    from sqlalchemy.exc import DBAPIError

    from chronomem.backends.base import Backend

    db = type(filled.backend)
    sql = "SELECT id, subject, valid_from FROM cm_versions WHERE tenant = %(t)s ORDER BY id"
    with filled.backend.statement_read() as conn:
        assert db.statement_at_a_time(conn)
        gen = _watch(filled)
        seen = next(gen)
        try:
            rows = db.fetch(conn, sql, {"t": filled.scope.tenant})
        finally:
            gen.close()
        assert seen.statements == [sql]
        want = Backend.fetch.__func__(db, conn, sql, {"t": filled.scope.tenant})  # type: ignore[attr-defined]
        assert [tuple(r) for r in rows] == [tuple(r) for r in want] and len(rows) == 41
        with pytest.raises(DBAPIError, match="division by zero"):
            db.fetch(conn, "SELECT 1 / 0", {})
        assert db.fetch(conn, "SELECT 2", {}) == [(2,)]  # the connection is usable after it


def test_a_warm_search_builds_no_sqlalchemy_result(
    filled: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its statements (the clock with the lexical leg, the kept rows; with
    pgvector the HNSW leg) are read from driver cursors: SQLAlchemy builds no
    result (column metadata) around any (one per statement on the old code)."""
    from sqlalchemy.engine import cursor

    filled.search("where does user3 live city3")  # the mirror's first sync
    built: list[int] = []
    real = cursor.CursorResult.__init__

    def counted(self: Any, *args: Any, **kw: Any) -> None:
        built.append(1)
        real(self, *args, **kw)

    monkeypatch.setattr(cursor.CursorResult, "__init__", counted)
    hits = filled.search("where does user5 live city5", k=10)
    assert hits and built == []


def _frontend_messages(wire: Wire, start: int) -> list[str]:
    """The frontend messages traced since ``start`` (the trace file's offset), by
    name, in order; the tracing goes on."""
    for c in wire.conns:
        c.untrace()  # flushes the trace so far
    with open(wire.path, "rb") as f:
        f.seek(start)
        lines = f.read().decode("utf-8", "replace").splitlines()
    for c in wire.conns:
        wire._on(c)
    return [ln.split("\t")[2] for ln in lines if ln.startswith("F\t") and ln.count("\t") >= 2]


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_the_lexical_round_trip_is_synced_before_the_client_works(
    filled: Memory, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server keeps a pipeline's results until its sync: the clock read and
    the lexical leg's statement go out with theirs before the mirror's legs rank
    (``meanwhile``), not after, so the results leave while the client works
    instead of one more wake-up and turn later. And no second sync follows (the
    pipeline's exit would send one and wait for it): a search sends as many as
    it has round trips. Counted on the wire (libpq's trace)."""
    wire = Wire(filled)
    try:
        filled.search("where does user3 live city3")  # the mirror's first sync
        os.fsync(wire.fd)
        start = os.lseek(wire.fd, 0, os.SEEK_END)
        before: list[list[str]] = []
        real = pgpipeline.send

        def send(conn: Any, items: Any, **kw: Any) -> Any:
            work = kw.get("meanwhile")
            if work is not None:

                def probe() -> None:
                    before.append(_frontend_messages(wire, start))
                    work()

                kw["meanwhile"] = probe
            return real(conn, items, **kw)

        monkeypatch.setattr(pgpipeline, "send", send)
        hits = filled.search("where does user5 live city5", k=10)
        assert hits
        monkeypatch.setattr(pgpipeline, "send", real)
        sent = _frontend_messages(wire, start)
    finally:
        wire.close()
    assert len(before) == 1  # the lexical leg's round trip, with the clock read
    assert before[0].count("Execute") == 2 and before[0][-1] == "Sync", before[0]
    assert sent.count("Sync") == (3 if backend == "pgvector" else 2), sent


_LATE_FAILURE = "SELECT 1 / (SELECT count(*) - 1 FROM pg_sleep(0.5))"


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_statements_synced_early_fail_as_before(filled: Memory) -> None:
    """A statement failing in a pipeline synced before ``meanwhile`` (the sync is
    on the wire when it runs): SQLAlchemy's error naming it, ``meanwhile`` still
    run, the connection usable after. The statement fails only after half a
    second on the server (a division by zero the planner cannot fold), so its
    error cannot already be in when the early sync goes out: one that is (a quick
    failure read while the sync is sent) raises before ``meanwhile``, which a
    failed search has no use for."""
    from sqlalchemy.exc import DBAPIError

    db = type(filled.backend)
    wire = Wire(filled)
    try:
        filled.search("where does user3 live city3")
        os.fsync(wire.fd)
        start = os.lseek(wire.fd, 0, os.SEEK_END)
        before: list[list[str]] = []
        with filled.backend.statement_read() as conn:
            with pytest.raises(DBAPIError, match="division by zero") as err:
                db.fetch_together(
                    conn,
                    [("SELECT 1", {}), (_LATE_FAILURE, {})],
                    meanwhile=lambda: before.append(_frontend_messages(wire, start)),
                )
            assert str(err.value.statement) == _LATE_FAILURE
            assert len(before) == 1 and before[0][-1] == "Sync", before
            two = db.fetch_together(conn, [("SELECT 2", {}), ("SELECT 3", {})], lambda: None)
            assert two == [[(2,)], [(3,)]]
            assert db.fetch(conn, "SELECT 4", {}) == [(4,)]
    finally:
        wire.close()


def test_a_psycopg_release_not_checked_syncs_at_the_exit(
    filled: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The early sync reaches into psycopg's pipeline internals, checked against
    3.1 to 3.3: a later release (a pre-release too) keeps psycopg's own sync at
    the exit, and a search gives the same hits either way."""
    import psycopg

    assert pgpipeline._release("3.3.9") == (3, 3, 9)
    assert pgpipeline._release("3.4.0b1") == (3, 4, 0)
    assert pgpipeline._release("3.10") == (3, 10)
    checked = pgpipeline._early_sync.__wrapped__
    if pgpipeline.supported():
        assert checked()  # the installed release is one that was checked
    monkeypatch.setattr(psycopg, "__version__", "3.4.0b1")
    assert not checked()

    at = filled.now() + timedelta(days=1)
    queries = ["where does user5 live city5", "ann lisbon", "lives in"]
    early = [_shown(filled.search(q, k=10, valid_at=at)) for q in queries]
    monkeypatch.setattr(pgpipeline, "_early_sync", lambda: False)
    assert [_shown(filled.search(q, k=10, valid_at=at)) for q in queries] == early
    assert any(early)


@pytest.mark.skipif(not pgpipeline.supported(), reason="libpq without pipeline mode")
def test_the_lexical_round_trip_prepares_its_statements_at_once(filled: Memory) -> None:
    """The clock read and the lexical leg's statement are server-side prepared
    statements from their first run in a pipeline (``pgpipeline._Preparing``),
    not from psycopg's sixth: until then each was parsed and planned anew, and the
    server plans a prepared statement for its values on its first five runs
    before its generic plan, so a connection's first ten searches paid the
    lexical statement's planning, its first five now. Checked on the server
    (``pg_prepared_statements``) after one search that pipelined them; the
    statements, and so the hits, are the same. Likewise the kept rows' statement,
    which runs alone: prepared in a pipeline of its own on its first run."""
    filled.search("where does user3 live city3")  # the mirror's first sync
    used: list[Any] = []

    def note(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        used.append(conn.connection.driver_connection)

    engine = filled.backend.engine
    event.listen(engine, "before_cursor_execute", note)
    try:
        hits = filled.search("where does user5 live city5", k=10)
    finally:
        event.remove(engine, "before_cursor_execute", note)
    assert hits and used and all(c is used[0] for c in used)
    rows = (
        used[0]
        .execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        .fetchall()
    )
    lexical = [n for s, n in rows if "ts_rank_cd" in s]
    clock = [n for s, n in rows if s.startswith("SELECT cm_txclock.last_us")]
    assert lexical == [1], rows  # the lexical leg's, run once
    assert clock == [1], rows  # the clock read, run once
    # the kept rows' statement (``Backend.fetch_prepared``): prepared on its first
    # run, in the first search (one statement per length of its id list)
    kept = [n for s, n in rows if "_source_episode_id" in s]
    assert kept and sum(kept) == 2, rows
