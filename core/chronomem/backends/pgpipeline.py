"""PostgreSQL statements sent together: psycopg's pipeline mode under SQLAlchemy.

A write's statements used to wait for the server one by one: a single
``remember`` was seven round trips (``BEGIN``, stamp, slot locks, slot load,
version insert, vector insert, ``COMMIT``). Two things here cut that to three
(docs/design.md §3, "Following a write"):

* ``send`` runs several statements in one round trip (psycopg's pipeline mode:
  every message goes out, then one sync). The server still runs them one after
  another, each a statement of its own: under READ COMMITTED each takes its
  snapshot when its turn comes (at its Bind message, processed only after the
  statement before it finished), so a load sent behind a lock that waits sees
  what the lock's holder committed, exactly as when it was sent after the lock
  returned. (One statement that both locks and reads would not: its snapshot
  predates the wait.)
* ``deferring``: the writer's closes and inserts (``close_versions``,
  ``insert_rows``; the vector insert of the indexer's hook too), whose results
  nothing waits for, are queued instead of run; the queue goes to the server
  with the transaction's next statement, whatever runs it (an engine
  ``before_cursor_execute`` listener sends it first: the statements keep their
  order), or with the ``COMMIT`` when it is the last thing
  (``PostgresBackend.write``).

Every statement still goes through SQLAlchemy's ``Connection._cursor_execute``:
cursor events (statement counting, the tests' Citus guard) see each one, and a
driver error becomes SQLAlchemy's, passing the backend's ``handle_error``.
Without pipeline support in the driver's libpq (``supported``), or with
``ENABLED`` set to False, nothing is queued and statements run one by one."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, event

# A statement's check of its cursor once the results are in (an insert's row count).
Check = Callable[[Any], None] | None
Queued = tuple[str, Any, Check]  # driver SQL, its parameters, the check

# Off (``CHRONOMEM_PG_PIPELINE=0``, or False here): statements one by one, as
# before (to compare, and for poolers that refuse pipelining).
ENABLED = os.environ.get("CHRONOMEM_PG_PIPELINE", "1") != "0"
_QUEUE = "chronomem.queued"  # conn.info: statements waiting to be sent
_DEFER = "chronomem.defer"  # conn.info: queue instead of run (inside ``deferring``)
_AT_COMMIT = "chronomem.at_commit"  # conn.info: the transaction's end sends the queue
_DRIVER_SQL: dict[int, tuple[Any, str]] = {}  # id(statement) -> (statement, driver SQL)


@functools.cache
def _libpq_pipelines() -> bool:
    import psycopg

    return bool(psycopg.Pipeline.is_supported())


def supported() -> bool:
    """Whether statements can be sent together (psycopg's libpq has pipeline mode)."""
    return ENABLED and _libpq_pipelines()


def driver_sql(conn: Connection, stmt: Any) -> str:
    """The driver's SQL text of a SQLAlchemy statement (``text()``, ``select()``),
    compiled once for the PostgreSQL dialect; a string is already one."""
    if isinstance(stmt, str):
        return stmt
    hit = _DRIVER_SQL.get(id(stmt))
    if hit is None or hit[0] is not stmt:
        hit = _DRIVER_SQL[id(stmt)] = (stmt, str(stmt.compile(dialect=conn.dialect)))
    return hit[1]


def send(conn: Connection, items: Sequence[Queued], *, commit: bool = False) -> list[Any]:
    """Run ``items`` (and then ``COMMIT`` when ``commit``) in one round trip; their
    cursors, in order, results read. A failing statement raises as it would have
    alone (the ones after it did not run; the transaction is aborted)."""
    import psycopg

    raw: Any = conn.connection.driver_connection
    run = [*items, ("COMMIT", None, None)] if commit else list(items)
    cursors: list[Any] = []
    try:
        # one sync when the block ends (``raw.commit()`` would add one of its own)
        with raw.pipeline():
            for sql, params, _ in run:
                cur = raw.cursor()
                cursors.append(cur)
                conn._cursor_execute(cur, sql, params)
    except psycopg.Error as exc:
        # the error arrives with the results: the failed statement is the first
        # without a result (the ones after it were skipped)
        failed = next((i for i, c in enumerate(cursors) if c.pgresult is None), len(run) - 1)
        conn._handle_dbapi_exception(exc, run[failed][0], run[failed][1], cursors[failed], None)
    for (_, _, check), cur in zip(items, cursors, strict=False):
        if check is not None:
            check(cur)
    return cursors[: len(items)]


def queueing(conn: Connection) -> bool:
    """Whether a statement on ``conn`` is to be queued (inside ``deferring``)."""
    return bool(conn.info.get(_DEFER))


def enqueue(conn: Connection, stmt: Any, params: Any, check: Check = None) -> None:
    conn.info.setdefault(_QUEUE, []).append((driver_sql(conn, stmt), params, check))


def take(conn: Connection) -> list[Queued]:
    """The queued statements (now no longer queued), to send ahead of others."""
    queued: list[Queued] = conn.info.pop(_QUEUE, None) or []
    return queued


@contextmanager
def deferring(conn: Connection) -> Iterator[None]:
    """Queue the writer's closes and inserts made meanwhile (see the module
    docstring). Inside ``PostgresBackend.write`` the queue goes with the next
    statement or the ``COMMIT``; elsewhere it is sent when the block ends. An
    error drops it (the transaction rolls back)."""
    if not supported():
        yield
        return
    info = conn.info
    info[_DEFER] = True
    try:
        yield
    except BaseException:
        info.pop(_QUEUE, None)
        raise
    finally:
        info.pop(_DEFER, None)
    if not info.get(_AT_COMMIT):
        queued = take(conn)
        if queued:
            send(conn, queued)


@contextmanager
def sent_at_commit(conn: Connection) -> Iterator[None]:
    """Mark ``conn``'s transaction as one whose end sends the queue (with its
    ``COMMIT``); the marks and any queue are gone when the block ends."""
    info = conn.info
    info[_AT_COMMIT] = True
    try:
        yield
    finally:
        info.pop(_AT_COMMIT, None)
        info.pop(_QUEUE, None)
        info.pop(_DEFER, None)


def commit(conn: Connection) -> None:
    """Send the queue with the ``COMMIT`` (one round trip); nothing when it is
    empty (the caller's commit then runs as usual)."""
    queued = take(conn)
    if queued:
        send(conn, queued, commit=True)


def _send_first(
    conn: Connection, cursor: Any, statement: str, parameters: Any, context: Any, many: bool
) -> None:
    """Any other statement on a connection with a queue sends the queue first."""
    if _QUEUE in conn.info:
        queued = take(conn)
        if queued:
            send(conn, queued)


def install(engine: Engine) -> None:
    """Keep queued statements ahead of every other statement on ``engine``."""
    event.listen(engine, "before_cursor_execute", _send_first)
