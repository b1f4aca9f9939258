"""Every statement a call runs on a store, the driver's own included.

``tests.statements.counting`` sees the statements that pass SQLAlchemy's cursor
events; on SQLite a prepared read (``chronomem.prepared``: a transcript's id
lookup) goes straight to the driver's cursor and a read's ``BEGIN`` too. Here,
on SQLite, the connection's own trace (``set_trace_callback``) records each
statement as it starts, values written in, and what it runs inside (FTS5's
shadow-table writes, triggers: the lines starting with ``--``), with the
virtual machine's instructions; on PostgreSQL every statement passes
SQLAlchemy, so ``counting`` is used as it is. Episode rows decoded are counted
on both."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event

from chronomem import Memory, reads

from ..statements import counting


@dataclass
class Trace:
    statements: list[str] = field(default_factory=list)  # run by the caller's code
    params: list[Any] = field(default_factory=list)  # SQLite: none (values written in)
    nested: list[str] = field(default_factory=list)  # SQLite: run inside a statement
    episode_rows: int = 0
    vm_steps: int = 0  # SQLite: virtual machine instructions, nested ones included
    sqlite: bool = False

    @property
    def shape(self) -> tuple[int, int, int]:
        """(statements, nested statements, episode rows)."""
        return (len(self.statements), len(self.nested), self.episode_rows)


@contextmanager
def tracing(memory: Memory) -> Iterator[Trace]:
    """What runs on ``memory``'s engine meanwhile (see the module docstring)."""
    engine = memory.backend.engine
    trace = Trace(sqlite=engine.dialect.name == "sqlite")
    if not trace.sqlite:
        with counting(memory) as cost:
            yield trace
        trace.statements, trace.params = cost.statements, cost.params
        trace.episode_rows = cost.episode_rows
        return

    touched: dict[int, Any] = {}

    def seen(sql: str) -> None:
        if sql.startswith("--"):
            trace.nested.append(sql)
        else:
            trace.statements.append(sql)
            trace.params.append(())

    def step() -> int:
        trace.vm_steps += 1
        return 0

    def install(raw: Any) -> None:
        if id(raw) not in touched:
            touched[id(raw)] = raw
            raw.set_trace_callback(seen)
            raw.set_progress_handler(step, 1)

    def on_checkout(dbapi_conn: Any, *_: Any) -> None:
        install(dbapi_conn)

    def before(conn: Any, *_: Any) -> None:  # a connection checked out before the call
        install(conn.connection.driver_connection)

    decode = reads.to_episode

    def counted(row: Any) -> Any:
        trace.episode_rows += 1
        return decode(row)

    event.listen(engine, "checkout", on_checkout)
    event.listen(engine, "before_cursor_execute", before)
    reads.to_episode = counted  # type: ignore[assignment]
    try:
        yield trace
    finally:
        reads.to_episode = decode  # type: ignore[assignment]
        event.remove(engine, "checkout", on_checkout)
        event.remove(engine, "before_cursor_execute", before)
        for raw in touched.values():
            raw.set_trace_callback(None)
            raw.set_progress_handler(None, 1)


def episode_plans(memory: Memory, trace: Trace) -> list[str]:
    """The database's plan for each SELECT on ``cm_episodes`` the traced call
    ran (``EXPLAIN QUERY PLAN`` of the statement as run on SQLite, ``EXPLAIN``
    after ``ANALYZE`` on PostgreSQL), one text per statement."""
    engine = memory.backend.engine
    out = []
    with engine.connect() as conn:
        if not trace.sqlite:
            conn.exec_driver_sql("ANALYZE cm_episodes")
        for sql, params in zip(trace.statements, trace.params, strict=True):
            if not sql.lstrip().upper().startswith("SELECT") or "cm_episodes" not in sql:
                continue
            explain = "EXPLAIN QUERY PLAN " if trace.sqlite else "EXPLAIN "
            rows = conn.exec_driver_sql(explain + sql, params or None).all()
            out.append("\n".join(str(r[-1]) for r in rows))
    return out
