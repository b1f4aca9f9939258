"""PostgreSQL statements sent together: psycopg's pipeline mode under SQLAlchemy.

A write's statements used to wait for the server one by one: a single
``remember`` was seven round trips (``BEGIN``, stamp, slot locks, slot load,
version insert, vector insert, ``COMMIT``). Three things here cut that to two
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
  with the transaction's next statement, whatever runs it, in that statement's
  round trip (an engine ``before_cursor_execute`` listener puts it in a pipeline
  the statement joins: the statements keep their order), or with the ``COMMIT``
  when it is the last thing (``PostgresBackend.write``). A write's slot locks
  on the ordinary path are queued too, and go with the slots' load; so is its
  stamp (``advance_clock_later``), which goes with its first read, its row kept
  by its check once the results are in.
* ``begun_by_queue``: the transaction's ``BEGIN`` is queued too, so it goes out
  with the first statements instead of alone.
* ``send`` with ``meanwhile`` (a search's clock read and lexical leg, the client
  ranking the mirror meanwhile) sends the pipeline's sync before that work, not at
  its exit: the server keeps a pipeline's results until the sync, so a sync sent
  after the work woke a server long done (``_sync_now``, ``_close_synced``; with
  a psycopg lacking the pipeline's parts they use, the sync goes at the exit).
* ``launch``: a batch's closes and version insert are sent as soon as they are
  queued, in a pipeline left open (no sync, nothing waited for), so the server
  inserts while the client embeds the batch; the pipeline's results come back
  in the round trip of the next statement, which joins it (the ``COMMIT``).

Every statement still goes through SQLAlchemy's ``Connection._cursor_execute``:
cursor events (statement counting, the tests' Citus guard) see each one, and a
driver error becomes SQLAlchemy's, passing the backend's ``handle_error``.
Without pipeline support in the driver's libpq (``supported``), or with
``ENABLED`` set to False, nothing is queued and statements run one by one."""

from __future__ import annotations

import functools
import itertools
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
_NOTE = "chronomem.queue_note"  # conn.info: a note on the queue (``note``), gone with it
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


def send(
    conn: Connection,
    items: Sequence[Queued],
    *,
    commit: bool = False,
    meanwhile: Callable[[], None] | None = None,
    prepare: bool = False,
) -> list[Any]:
    """Run ``items`` (and then ``COMMIT`` when ``commit``) in one round trip; their
    cursors, in order, results read. Statements already on their way (``launch``)
    go first: ``items`` join their pipeline, whose results come back with theirs.
    A failing statement raises as it would have alone (the ones after it did not
    run; the transaction is aborted). ``meanwhile`` runs once they are sent,
    before their results are waited for (client work done while the server
    runs them; it must not use ``conn``). ``prepare``: ``items`` become
    server-side prepared statements on their first run (``_Preparing``)."""
    import psycopg

    run = [*items, ("COMMIT", None, None)] if commit else list(items)
    fresh = _LAUNCHED not in conn.info
    block, sent, cursors, before = _sent_in_pipeline(conn, run, prepare)
    synced = None
    if meanwhile is not None:
        try:
            if fresh:
                synced = _sync_now(conn)
            meanwhile()
        except BaseException as exc:
            block.__exit__(type(exc), exc, exc.__traceback__)
            if isinstance(exc, psycopg.Error):
                _raise_failed(conn, exc, sent, cursors)
            raise
    # one sync (``raw.commit()`` would add one of its own)
    try:
        if synced is not None:
            _close_synced(conn, synced, block)
        else:
            block.__exit__(None, None, None)
    except psycopg.Error as exc:
        _raise_failed(conn, exc, sent, cursors)
    for (_, _, check), cur in zip(sent, cursors, strict=False):
        if check is not None:
            check(cur)
    return cursors[before : before + len(items)]


#: The psycopg releases whose pipeline internals ``_sync_now`` was checked against
#: (3.1 to 3.3): a later one keeps the public path (the sync at the exit) until it is
#: checked too, whatever names it still has.
EARLY_SYNC_BEFORE = (3, 4)


def _release(version: str) -> tuple[int, ...]:
    """``"3.3.9"`` → ``(3, 3, 9)``; a pre-release's suffix is dropped (``"3.4.0b1"`` → ``(3, 4, 0)``)."""
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(itertools.takewhile(str.isdigit, piece))
        parts.append(int(digits or 0))
    return tuple(parts)


@functools.cache
def _early_sync() -> bool:
    """Whether psycopg's pipeline has the parts ``_sync_now`` and ``_close_synced``
    use (its own ``sync()`` is made of them), in a release they were checked
    against: otherwise the sync goes at the end."""
    import inspect

    import psycopg

    if _release(psycopg.__version__) >= EARLY_SYNC_BEFORE:
        return False
    p = psycopg.Pipeline
    parts = ("_enqueue_sync", "_communicate_gen", "_fetch_gen", "_exit_gen", "level")
    if not all(hasattr(p, n) for n in parts[:-1]):
        return False
    return "flush" in inspect.signature(p._fetch_gen).parameters


def _sync_now(conn: Connection) -> Any:
    """Send the pipeline's sync now, after its statements and before ``meanwhile``;
    the pipeline (None where psycopg lacks the parts, or in a nested pipeline:
    the sync then goes at the end, as before).

    The server holds a pipeline's results in its output buffer until the sync
    (or a flush) arrives. Sent at the end, after ``meanwhile``, the sync found the
    server done and asleep: the results then waited for its wake-up and one more
    turn on the wire, after the client's work instead of during it. Sent now, the
    results leave as the server finishes them and are read after ``meanwhile``.
    The statements and their grouping are the same (they precede the one sync)."""
    if not _early_sync():
        return None
    raw: Any = conn.connection.driver_connection
    pipeline = raw._pipeline
    if pipeline is None or pipeline.level != 1:
        return None
    pipeline._enqueue_sync()
    raw.wait(pipeline._communicate_gen())
    return pipeline


def _no_sync() -> Iterator[None]:
    """A pipeline's exit with nothing left to send or read (``_close_synced``)."""
    yield from ()


def _close_synced(conn: Connection, pipeline: Any, block: Any) -> None:
    """Read the results of a pipeline ``_sync_now`` synced, then leave pipeline
    mode without a second sync (psycopg's exit sends one and waits for it: the
    turn on the wire the early sync saves). On an error the exit is psycopg's."""
    raw: Any = conn.connection.driver_connection
    try:
        raw.wait(pipeline._fetch_gen(flush=False))
    except BaseException as exc:
        block.__exit__(type(exc), exc, exc.__traceback__)
        raise
    if pipeline.result_queue:  # not all read (cannot happen after the sync): psycopg's exit
        block.__exit__(None, None, None)
        return
    pipeline._exit_gen = _no_sync
    try:
        block.__exit__(None, None, None)
    finally:
        del pipeline._exit_gen


def _sent_in_pipeline(
    conn: Connection, items: Sequence[Queued], prepare: bool = False
) -> tuple[Any, list[Queued], list[Any], int]:
    """Send ``items`` in the pipeline ``launch`` left open, or in a new one, without a
    sync: the pipeline, every statement in it so far with their cursors, and how many
    were in it before ``items``. A failing send closes the pipeline and raises (a
    driver error as SQLAlchemy's, naming the statement). ``prepare``: through
    cursors that prepare each statement on its first run (``_Preparing``)."""
    raw: Any = conn.connection.driver_connection
    launched = conn.info.pop(_LAUNCHED, None)
    if launched is None:
        block, before, cursors = raw.pipeline(), [], []
        block.__enter__()
    else:
        block, before, cursors = launched
    sent = [*before, *items]
    try:
        for sql, params, _ in items:
            cur = _preparing_cursor(raw) if prepare else raw.cursor()
            cursors.append(cur)
            conn._cursor_execute(cur, sql, params)
    except BaseException as exc:
        block.__exit__(type(exc), exc, exc.__traceback__)
        import psycopg

        if isinstance(exc, psycopg.Error):
            _raise_failed(conn, exc, sent, cursors)
        raise
    return block, sent, cursors, len(before)


@functools.cache
def _preparing_class() -> type:
    import psycopg

    class _Preparing(psycopg.Cursor):
        """A cursor whose statements are server-side prepared statements from their
        first run (psycopg's ``prepare=True``), not from their sixth (its
        ``prepare_threshold``). In a pipeline the ``Parse`` goes out with the
        statement's own messages: no round trip of its own. A search's statements
        (the clock read, the lexical leg) were parsed and planned for their values
        on every run until psycopg prepared them, then planned for their values on
        the server's first five runs of the prepared statement (its
        ``plan_cache_mode=auto``) before its generic plan: a connection's first ten
        searches each paid that planning (~1 ms for the lexical leg's statement
        at 10k), its first five now."""

        def execute(self, query: Any, params: Any = None, **kw: Any) -> Any:
            kw.setdefault("prepare", True)
            return super().execute(query, params, **kw)

    return _Preparing


def _preparing_cursor(raw: Any) -> Any:
    return _preparing_class()(raw)


def _raise_failed(
    conn: Connection, exc: Exception, sent: Sequence[Queued], cursors: list[Any]
) -> None:
    """Raise ``exc`` (a driver error that arrived with a pipeline's results) as
    SQLAlchemy's, naming the failed statement: the first without a result (the
    ones after it were skipped)."""
    failed = next((i for i, c in enumerate(cursors) if c.pgresult is None), len(cursors) - 1)
    failed = max(0, min(failed, len(sent) - 1))
    cur = cursors[failed] if cursors else None
    conn._handle_dbapi_exception(exc, sent[failed][0], sent[failed][1], cur, None)


_STAMPED = "chronomem.stamped"  # conn.info: the writer stamped this transaction


def stamped(conn: Connection) -> None:
    """Mark ``conn``'s transaction as stamped by the writer (``advance_clock``,
    ``begin_write``): its slot locks may travel with its next statement, the
    slots' load (``PostgresBackend.lock_slots``). Gone when the transaction ends."""
    if conn.info.get(_AT_COMMIT):
        conn.info[_STAMPED] = True


def queues_locks(conn: Connection) -> bool:
    """Whether ``conn``'s slot locks are queued: in ``PostgresBackend.write``'s
    transaction (its queue is sure to be sent, with the next statement or the
    ``COMMIT``) once the writer stamped it. A lock taken outside a writer (a
    caller that expects to hold it when the call returns) runs at once."""
    return sends_queue(conn) and bool(conn.info.get(_STAMPED))


def sends_queue(conn: Connection) -> bool:
    """Whether ``conn``'s queue is sure to be sent, with its next statement or the
    ``COMMIT`` (``PostgresBackend.write``'s transaction): the writer's stamp may
    be queued there (``advance_clock_later``)."""
    return supported() and bool(conn.info.get(_AT_COMMIT))


def queueing(conn: Connection) -> bool:
    """Whether a statement on ``conn`` is to be queued (inside ``deferring``)."""
    return bool(conn.info.get(_DEFER))


def enqueue(conn: Connection, stmt: Any, params: Any, check: Check = None) -> None:
    conn.info.setdefault(_QUEUE, []).append((driver_sql(conn, stmt), params, check))


def note(conn: Connection, value: Any) -> None:
    """Keep ``value`` with the queue until it is sent or dropped (what a queued
    statement needs in order to be rebuilt: ``postgres.embed_in_queued_insert``)."""
    conn.info[_NOTE] = value


def noted(conn: Connection) -> Any:
    """The queue's ``note`` (None: none, or the queue it was kept with is gone)."""
    return conn.info.get(_NOTE)


def last_queued(conn: Connection) -> Queued | None:
    """The statement queued last (None: nothing is queued)."""
    queued = conn.info.get(_QUEUE)
    return queued[-1] if queued else None


def replace_last(conn: Connection, item: Queued) -> None:
    """Put ``item`` in place of the statement queued last."""
    conn.info[_QUEUE][-1] = item


_LAUNCHED = "chronomem.launched"  # conn.info: a pipeline sent but not synced (``launch``)


def launch(conn: Connection) -> None:
    """Send the queue now, in a pipeline left open: the server starts on it (a
    batch's version insert, tens of milliseconds of index upkeep) while the
    client goes on (the batch's embeddings and vector rows); its results come
    back with the next statement's, whose round trip it joins (``send``,
    ``_send_first``). No round trip of its own: nothing is waited for here.
    Only in ``PostgresBackend.write``'s transaction (``sent_at_commit``), whose
    end is sure to close the pipeline, with the ``COMMIT`` or before the
    rollback (``closed_on_error``)."""
    if not (supported() and conn.info.get(_AT_COMMIT)) or conn.info.get(_JOINED) is not None:
        return
    queued = take(conn)
    if not queued:
        return
    block, sent, cursors, _ = _sent_in_pipeline(conn, queued)
    conn.info[_LAUNCHED] = (block, sent, cursors)


def launched(conn: Connection) -> bool:
    """Whether statements ``launch`` sent still wait for their results."""
    return _LAUNCHED in conn.info


def _close_launched(conn: Connection, exc: BaseException | None) -> None:
    """Close a pipeline ``launch`` left open (its results read and dropped): an
    error ends the transaction, which then rolls back."""
    hit = conn.info.pop(_LAUNCHED, None)
    if hit is None:
        return
    try:
        hit[0].__exit__(type(exc) if exc else None, exc, exc.__traceback__ if exc else None)
    except Exception:
        if exc is None:
            raise


@contextmanager
def closed_on_error(conn: Connection) -> Iterator[None]:
    """On an error in the block, close a launched pipeline before the
    transaction's rollback."""
    try:
        yield
    except BaseException as exc:
        _close_launched(conn, exc)
        raise


def take(conn: Connection) -> list[Queued]:
    """The queued statements (now no longer queued), to send ahead of others."""
    conn.info.pop(_NOTE, None)
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
        info.pop(_NOTE, None)
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
        info.pop(_STAMPED, None)
        info.pop(_QUEUE, None)
        info.pop(_NOTE, None)
        info.pop(_DEFER, None)
        if _LAUNCHED in info:  # never expected: the COMMIT or ``closed_on_error`` closed it
            _close_launched(conn, RuntimeError("a launched pipeline outlived its transaction"))
            conn.invalidate()
        joined = info.pop(_JOINED, None)
        if joined is not None:  # never expected: a joined statement's events close it
            try:
                joined[0].__exit__(None, None, None)
            except Exception:
                conn.invalidate()


_BEGIN: Queued = ("BEGIN", None, None)


@contextmanager
def begun_by_queue(conn: Connection) -> Iterator[None]:
    """Let the transaction's ``BEGIN`` go out with its first statements instead of
    on its own: psycopg sends the ``BEGIN`` it opens a transaction with alone and
    waits for it (one round trip, also in pipeline mode). Here the driver
    connection is put in autocommit (psycopg then opens nothing itself) and a
    plain ``BEGIN`` is queued, so it goes to the server ahead of whatever the
    transaction sends first, in the same round trip (``begin_write``'s stamp,
    locks and load; ``_send_first``'s queue, alone, otherwise: as before). The
    transaction is then the server's own ``BEGIN`` … ``COMMIT`` (``commit``'s
    queue ends with it; psycopg's commit and rollback act on the server's
    transaction status, not on the autocommit flag). Autocommit is switched off
    again when the block ends (the transaction ended); a connection left in a
    transaction (broken) is invalidated, never pooled in autocommit. Only for
    connections psycopg would open with a plain ``BEGIN`` (no isolation level,
    read-only or deferrable setting of its own); SQLAlchemy still sees an
    ordinary connection (``Backend.statement_at_a_time`` is False)."""
    from psycopg import pq

    raw: Any = conn.connection.driver_connection
    if (
        not supported()
        or raw.autocommit
        or raw.pgconn.transaction_status != pq.TransactionStatus.IDLE
        or (raw.isolation_level, raw.read_only, raw.deferrable) != (None, None, None)
    ):
        yield
        return
    raw.autocommit = True
    conn.info.setdefault(_QUEUE, []).insert(0, _BEGIN)
    try:
        yield
    finally:
        try:
            raw.autocommit = False
        except Exception:  # still in a transaction: the connection is not reusable
            conn.invalidate()


def commit(conn: Connection) -> None:
    """Send the queue with the ``COMMIT`` (one round trip); nothing when it is
    empty (the caller's commit then runs as usual), nor when it holds only the
    ``BEGIN`` of a transaction that ran nothing (``begun_by_queue``)."""
    queued = take(conn)
    if launched(conn) or (queued and queued != [_BEGIN]):
        send(conn, queued, commit=True)


_JOINED = "chronomem.joined"  # conn.info: the open pipeline a statement joined


def _send_first(
    conn: Connection, cursor: Any, statement: str, parameters: Any, context: Any, many: bool
) -> None:
    """Any other statement on a connection with a queue sends the queue first, in
    the same round trip as itself: the queue goes out in an open pipeline that
    the statement joins (``_joined_results`` closes it once the statement is
    sent, and the results of all come back together). The server runs them in
    order, one after another, as when the queue went alone first. A statement
    that cannot join one (an ``executemany``, a server-side cursor) sends the
    queue alone first."""
    if _QUEUE not in conn.info and _LAUNCHED not in conn.info:
        return
    queued = take(conn)
    if not queued and _LAUNCHED not in conn.info:
        return
    if many or getattr(cursor, "name", None) or conn.info.get(_JOINED) is not None:
        send(conn, queued)
        return
    block, sent, cursors, _ = _sent_in_pipeline(conn, queued)
    # set only now, the queued statements' own cursor events done: the next
    # ``after_cursor_execute`` is the joining statement's
    conn.info[_JOINED] = (block, sent, cursors)


def _joined_results(
    conn: Connection, cursor: Any, statement: str, parameters: Any, context: Any, many: bool
) -> None:
    """The statement that joined the queue's pipeline (``_send_first``) is sent:
    close the pipeline (one sync; every result comes back, the statement's own
    included, before SQLAlchemy reads it) and check the queued statements. A
    failed queued statement raises here, its error the database's (the
    statement after it did not run; the transaction is aborted)."""
    joined = conn.info.pop(_JOINED, None)
    if joined is None:
        return
    block, queued, cursors = joined
    block.__exit__(None, None, None)
    for (_, _, check), cur in zip(queued, cursors, strict=True):
        if check is not None:
            check(cur)


def _close_joined(ctx: Any) -> None:
    """A statement that joined the queue's pipeline failed before it was sent:
    close the pipeline (the queue's results are read and dropped; the error
    raised is the statement's)."""
    conn = ctx.connection
    joined = conn.info.pop(_JOINED, None) if conn is not None else None
    if joined is not None:
        exc = ctx.original_exception
        joined[0].__exit__(type(exc), exc, exc.__traceback__)


def install(engine: Engine) -> None:
    """Keep queued statements ahead of every other statement on ``engine``, in its
    round trip."""
    event.listen(engine, "before_cursor_execute", _send_first)
    event.listen(engine, "after_cursor_execute", _joined_results)
    event.listen(engine, "handle_error", _close_joined)
    event.listen(engine, "checkin", functools.partial(_plain_begin, engine))


def _plain_begin(engine: Engine, dbapi: Any, _record: Any) -> None:
    """A connection lent to a read in autocommit or at another isolation level
    (``statement_read``, ``point_read``, ``snapshot_read``) comes back with
    SQLAlchemy's reset: the dialect's default level set explicitly on the driver
    connection, so psycopg would open its next transaction with ``BEGIN ISOLATION
    LEVEL READ COMMITTED`` of its own, and a write on it could not queue its
    ``BEGIN`` (``begun_by_queue``): one round trip more. That level is the
    server's default (SQLAlchemy read it from the server), so leaving it unset
    again changes nothing but the ``BEGIN``'s text."""
    from psycopg import pq

    if dbapi is None or dbapi.autocommit or dbapi.isolation_level is None:
        return
    if dbapi.pgconn.transaction_status != pq.TransactionStatus.IDLE:
        return  # not reusable as is anyway: the pool's reset deals with it
    name = getattr(dbapi.isolation_level, "name", "").replace("_", " ")
    if name == engine.dialect.default_isolation_level:
        dbapi.isolation_level = None
