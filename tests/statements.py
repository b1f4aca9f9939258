"""Counting what a call costs the database: the SQL statements it runs on a
store's engine and the episode rows it decodes. Bounded work is asserted with
these counts (issue #32), never with timers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event

from chronomem import Memory, reads


@dataclass
class Cost:
    statements: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    episode_rows: int = 0
    vm_steps: int = 0  # SQLite: virtual machine instructions run (grows with rows examined)

    @property
    def shape(self) -> tuple[int, int]:
        """(statements, episode rows): equal shapes mean equal work."""
        return (len(self.statements), self.episode_rows)


@contextmanager
def counting(memory: Memory) -> Iterator[Cost]:
    """Every statement run on ``memory``'s engine meanwhile (``ANALYZE``,
    savepoint bookkeeping and the ``BEGIN`` a PostgreSQL write sends with its
    first statements, ``pgpipeline.begun_by_queue``, excluded: psycopg's own
    ``BEGIN`` never passed the cursor events) and every episode row decoded. On
    SQLite, ``vm_steps`` also counts the prepared statements run on the driver's
    cursor (``Backend.fetch``), which the statement list does not show."""
    cost = Cost()
    engine = memory.backend.engine
    decode = reads.to_episode

    sqlite = engine.dialect.name == "sqlite"

    def note(conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if not statement.lstrip().upper().startswith(("ANALYZE", "SAVEPOINT", "RELEASE", "BEGIN")):
            cost.statements.append(statement)
            cost.params.append(params)
        if sqlite:
            _watch(conn.connection.driver_connection)

    def counted(row: Any) -> Any:
        cost.episode_rows += 1
        return decode(row)

    backend = type(memory.backend)
    fetch = backend.__dict__.get("fetch")
    patch = sqlite and isinstance(fetch, classmethod)

    def driver_fetch(cls: Any, conn: Any, sql: str, params: Any) -> list[Any]:
        # SQLite runs prepared statements on the driver's cursor, past SQLAlchemy's
        # events: not listed as statements (the tests that count them patch fetch
        # themselves), but their virtual machine work is counted like any other
        _watch(getattr(conn, "driver", None) or conn.connection.driver_connection)
        return fetch.__func__(cls, conn, sql, params)  # type: ignore[union-attr, no-any-return]

    # a file store's point read (``SqliteBackend.point_fetch``) runs its statement on
    # a kept driver connection, past ``fetch`` too: watched as it is taken
    store = memory.backend
    take = getattr(store, "_take", None) if sqlite else None
    outer = store.__dict__.get("_take")  # an enclosing counting's

    def watched_take() -> Any:
        assert take is not None
        pooled = take()
        _watch(pooled.driver_connection)
        return pooled

    _counting.append(cost)
    event.listen(engine, "before_cursor_execute", note)
    reads.to_episode = counted  # type: ignore[assignment]
    if patch:
        backend.fetch = classmethod(driver_fetch)  # type: ignore[assignment, method-assign]
    if take is not None:
        store._take = watched_take  # type: ignore[attr-defined]
    try:
        yield cost
    finally:
        if take is not None:
            if outer is None:
                del store._take  # type: ignore[attr-defined]
            else:
                store._take = outer  # type: ignore[attr-defined]
        if patch:
            backend.fetch = fetch  # type: ignore[method-assign]
        reads.to_episode = decode  # type: ignore[assignment]
        event.remove(engine, "before_cursor_execute", note)
        _counting.remove(cost)
        if not _counting:
            for raw in _watched:
                raw.set_progress_handler(None, 1)
            _watched.clear()


# the costs being counted now (countings nest: each sees every step) and the
# SQLite driver connections whose steps they count
_counting: list[Cost] = []
_watched: list[Any] = []


def _step() -> int:
    for cost in _counting:
        cost.vm_steps += 1
    return 0


def _watch(raw: Any) -> None:
    raw.set_progress_handler(_step, 1)
    _watched.append(raw)


def episode_plans(memory: Memory, cost: Cost) -> list[str]:
    """The database's plan for each SELECT on ``cm_episodes`` the counted call
    ran (``EXPLAIN QUERY PLAN`` on SQLite, ``EXPLAIN`` after ``ANALYZE`` on
    PostgreSQL), one text per statement."""
    engine = memory.backend.engine
    sqlite = engine.dialect.name == "sqlite"
    out = []
    with engine.connect() as conn:
        if not sqlite:
            conn.exec_driver_sql("ANALYZE cm_episodes")
        for sql, params in zip(cost.statements, cost.params, strict=True):
            if not sql.lstrip().upper().startswith("SELECT") or "cm_episodes" not in sql:
                continue
            explain = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN "
            rows = conn.exec_driver_sql(explain + sql, params).all()
            out.append("\n".join(str(r[-1]) for r in rows))
    return out


def versions_plan(memory: Memory, sql: str, params: Any) -> str:
    """The database's plan for one statement on ``cm_versions`` (``EXPLAIN QUERY
    PLAN`` on SQLite, ``EXPLAIN`` after ``ANALYZE`` on PostgreSQL), as one text."""
    engine = memory.backend.engine
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        if not sqlite:
            conn.exec_driver_sql("ANALYZE cm_versions")
        explain = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN "
        rows = conn.exec_driver_sql(explain + sql, params or ()).all()
    return "\n".join(str(r[-1]) for r in rows)


def scans_episodes(plan: str) -> bool:
    """Whether a plan reads ``cm_episodes`` whole (not through an index)."""
    return "SCAN cm_episodes" in plan or "Seq Scan on cm_episodes" in plan


@contextmanager
def decoded_facts() -> Iterator[list[int]]:
    """Counts the fact rows decoded inside the block (``reads.to_fact`` calls): a
    one-item list, read after the block."""
    decode = reads.to_fact
    n = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        n[0] += 1
        return decode(*args, **kwargs)

    reads.to_fact = counted  # type: ignore[assignment]
    try:
        yield n
    finally:
        reads.to_fact = decode  # type: ignore[assignment]
