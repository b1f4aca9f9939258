"""What a PostgreSQL search costs in round trips (issue #32, item 5): counted
statements, never seconds. A search reads the clock (with the registry's version),
runs one statement per SQL leg (the mirror re-scores a small store's vector
candidates itself) and fetches the kept rows with their sources in one more; it runs outside a transaction (autocommit: no BEGIN, no COMMIT) and
without a savepoint around each leg. A leg whose SQL fails still fails alone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from chronomem import Memory
from chronomem.retrieval import legs


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
