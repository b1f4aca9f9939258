"""SQLite: the embedded, zero-configuration default.

WAL for concurrent readers, ``BEGIN IMMEDIATE`` for writers (so a write never
fails half-way on a lock upgrade), a busy timeout, and ``secure_delete`` so an
erased fact's bytes are overwritten in the file."""

from __future__ import annotations

import collections
import logging
import operator
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qs, quote, unquote

from sqlalchemy import Connection, Engine, Float, LargeBinary, create_engine, event, insert
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from ..errors import ChronomemError, CorruptStore, ReadOnlyStore, StoreUnavailable
from ..schema import SafeText
from . import fts5
from .base import Backend, Run
from .fts5 import FTS_TABLES
from .walcheckpoint import Checkpointer

if TYPE_CHECKING:
    from ..prepared import ShapedTerms

# FTS5 refuses a structure deeper than 2000 levels; each optimize adds up to 2.
REBUILD_AT_LEVELS = 500
BUSY_TIMEOUT_S = 30.0


def _to_wal(cur: sqlite3.Cursor) -> None:
    """Puts the database in WAL mode unless it is already (the mode persists in the
    file). The switch needs the database to itself, and SQLite may answer "database
    is locked" at once, without its busy handler, while another connection opens the
    same fresh file (workers starting together): that answer is retried until the
    busy timeout, as the handler would have waited."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            if cur.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


POINT_KEEP = 4  # pooled connections a file store keeps between point reads (_take)
# A file store's page cache per connection, in KiB (SQLite's default: 2,000). A batch
# of 1,000 facts dirties about 900 pages of ``cm_versions`` and its indexes (most in
# the indexes keyed by hex hashes, where 1,000 rows land on nearly every leaf) and
# 350 of ``cm_vectors``: past 2 MB the transaction spilled dirty pages to the WAL
# mid-way and read them back. Pages are allocated as they are read, so a connection
# that reads a few pages holds a few pages.
CACHE_KIB = 16384
# Pages of WAL after which a file store checkpoints (SQLite's default: 1,000, 4 MB). A
# batch of 1,000 facts writes about 5 MB of WAL, so at SQLite's default every batch
# commit checkpointed (copying the WAL into the file and syncing both, with
# synchronous=NORMAL); at 4,000 a checkpoint comes every few batches and writes an
# index leaf rewritten by each of them once. The store's writers ask its checkpoint
# thread for it after they commit (``walcheckpoint.Checkpointer``), so no write waits
# for it; the connections' own ``wal_autocheckpoint`` stays as a backstop at four
# times that, should the thread fall behind. Crash safety does not depend on either:
# a commit is in the WAL either way, and a checkpoint only moves committed pages
# (``maintenance_after_erase`` still truncates the WAL after an erase).
CHECKPOINT_PAGES = 4000
WAL_AUTOCHECKPOINT = 4 * CHECKPOINT_PAGES
CHECKPOINT_WAIT_MS = 200
log = logging.getLogger("chronomem.sqlite")
# insert_rows: the compiled INSERT text of (table, columns) and each column's bind processor.
_INSERTS: dict[tuple[str, tuple[str, ...]], tuple[str, tuple[str, ...], list[Any]]] = {}
# Tables whose rows an AFTER INSERT trigger copies into an FTS5 index. A trigger
# makes every execution of an INSERT open a statement savepoint, and FTS5 writes
# its pending terms out as a new segment at each savepoint: an ``executemany`` of
# 1,000 rows wrote 1,000 one-row segments (and merged them), 0.1 ms per row, two
# thirds of a batched write. So a batch goes first into an untyped TEMP table of
# the connection (no trigger, no index), then into the table with one INSERT ...
# SELECT: one statement, one savepoint, one segment (``_staging``).
# A batch of a few rows (a put that cuts a version: two) needs no staging: one
# INSERT of several VALUES rows is one statement as well, where staging takes four
# (``_values``; 32 rows of ``cm_versions`` bind 736 values, under SQLite's oldest
# limit of 999).
FTS_SOURCES = frozenset(t.removesuffix("_fts") for t in FTS_TABLES)
_STAGING: dict[tuple[str, tuple[str, ...], tuple[int, ...]], tuple[str, str, str, str]] = {}
_STAGING_KEEP = 256
FEW_ROWS = 32
_VALUES: dict[tuple[str, int], str] = {}
_CLOSE = (
    "UPDATE cm_versions SET superseded_at = ?, superseded_by = ?, closed_reason = ? "
    "WHERE tenant = ? AND id = ?"
)


# The writer's stamp (``advance_clock``) as one upsert, as on PostgreSQL: create the
# clock row at the write's instant, or advance it to max(last + 1, now) (``_AT``: an
# import's chosen instant, never moving the clock back; one at or before the last
# stamp ticks the clock and the rewrite marker instead, ``Backend.advance_clock``),
# and return it. ``BEGIN IMMEDIATE`` already holds the database's write lock.
# RETURNING needs SQLite 3.35; an older library takes the plain three statements.
_ADVANCE = (
    "INSERT INTO cm_txclock (tenant, last_us) VALUES (?, ?) ON CONFLICT (tenant) "
    "DO UPDATE SET last_us = MAX(cm_txclock.last_us + 1, excluded.last_us) "
    "RETURNING last_us, registry_us"
)
_ADVANCE_AT = (
    "INSERT INTO cm_txclock (tenant, last_us) VALUES (?, ?) ON CONFLICT (tenant) "
    "DO UPDATE SET last_us = CASE WHEN excluded.last_us > cm_txclock.last_us "
    "THEN excluded.last_us ELSE cm_txclock.last_us + 1 END, "
    "erased_us = CASE WHEN excluded.last_us > cm_txclock.last_us "
    "THEN cm_txclock.erased_us ELSE cm_txclock.last_us + 1 END "
    "RETURNING last_us, registry_us"
)
_RETURNING = sqlite3.sqlite_version_info >= (3, 35, 0)


def _staging(
    table: Any, cols: tuple[str, ...], same: tuple[int, ...] = ()
) -> tuple[str, str, str, str]:
    """The statements staging a batch of ``table``'s rows: create the connection's
    TEMP staging table if absent (every column of ``table``, no declared type, so
    values keep the types they were bound with and the table's own affinities
    apply on the copy, as for a direct insert), insert into it (``executemany``),
    copy it into ``table`` in insertion order (rowids follow the rows' order),
    and empty it. Temporary tables are part of the transaction: a rollback undoes
    the staging too. The columns at positions ``same`` (``_same_positions``) are
    not staged: the copy binds their one value, in position order."""
    key = (table.name, cols, same)
    hit = _STAGING.get(key)
    if hit is None:
        if len(_STAGING) >= _STAGING_KEEP:  # a bound on the shapes kept
            _STAGING.clear()
        stage = f"temp.cm_stage_{table.name}"
        names = ", ".join(cols)
        staged = [c for i, c in enumerate(cols) if i not in same]
        picked = ", ".join("?" if i in same else c for i, c in enumerate(cols))
        hit = _STAGING[key] = (
            f"CREATE TEMP TABLE IF NOT EXISTS cm_stage_{table.name} "
            f"({', '.join(c.name for c in table.columns)})",
            f"INSERT INTO {stage} ({', '.join(staged)}) VALUES ({', '.join('?' * len(staged))})",
            f"INSERT INTO main.{table.name} ({names}) SELECT {picked} FROM {stage} ORDER BY rowid",
            f"DELETE FROM {stage}",
        )
    return hit


def _same_positions(rows: list[dict[str, Any]], order: tuple[str, ...]) -> tuple[int, ...]:
    """The positions (in ``order``, the statement's columns) holding one value, of
    one type, in every row of a staged batch (a batch's scope, its transaction
    time, a new version's NULLs; 11 of a version's 23 columns in a batch of new
    facts), all but one at most (a staged row keeps a column). Each is bound once,
    to the copy, instead of once per row to the staging insert. Compared in C
    (``list.count``, then the types: ``1``, ``1.0`` and ``True`` are equal, not the
    same value to SQLite); the first and last rows rule out most columns first."""
    first, last = rows[0], rows[-1]
    out = []
    for i, c in enumerate(order):
        v, w = first[c], last[c]
        if w is not v and (w != v or type(w) is not type(v)):
            continue
        values = list(map(operator.itemgetter(c), rows))
        if values.count(v) == len(values) and (v is None or len(set(map(type, values))) == 1):
            out.append(i)
    if len(out) == len(order):
        out.pop(0)
    return tuple(out)


def _stage(
    conn: Connection, table: Any, order: tuple[str, ...], rows: list[dict[str, Any]]
) -> None:
    """Insert ``rows`` (more than ``FEW_ROWS``; their values bound as they are, in
    the statement's column ``order``) into ``table`` through its staging table
    (``_staging``): each row's staged values taken from its dict at once, the
    columns alike in every row (``_same_positions``) bound once, to the copy."""
    same = _same_positions(rows, order)
    create, staged, copy, empty = _staging(table, order, same)
    kept = [c for i, c in enumerate(order) if i not in same]
    take = operator.itemgetter(*kept)
    conn.exec_driver_sql(create)
    conn.exec_driver_sql(
        staged, list(map(take, rows)) if len(kept) > 1 else [(take(r),) for r in rows]
    )
    if same:
        conn.exec_driver_sql(copy, tuple(rows[0][order[i]] for i in same))
    else:
        conn.exec_driver_sql(copy)
    conn.exec_driver_sql(empty)


def _values(sql: str, n: int) -> str:
    """``sql`` (an ``INSERT ... VALUES (?, ...)``) inserting ``n`` rows at once."""
    key = (sql, n)
    hit = _VALUES.get(key)
    if hit is None:
        head, sep, row = sql.partition(" VALUES ")
        assert sep and row.startswith("(") and row.endswith(")"), sql
        hit = _VALUES[key] = f"{head} VALUES {', '.join([row] * n)}"
    return hit


def _floats(column_type: Any, rows: list[dict[str, Any]], name: str) -> bool:
    """Whether a ``Float`` column's values are floats already in every row (its bind
    processor, ``float(value)``, would change none of them: ``cm_vectors.norm``)."""
    return isinstance(column_type, Float) and set(
        map(type, map(operator.itemgetter(name), rows))
    ) <= {float}


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """SQLite's big-endian varint (FTS5 uses it in its structure record)."""
    value = 0
    for k in range(9):
        byte = buf[i]
        i += 1
        if k == 8:
            return (value << 8) | byte, i
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, i
    raise AssertionError("unreachable")


_STRUCTURE_V2 = b"\xff\x00\x00\x01"  # marker after the cookie (SQLite >= 3.44)


def fts_levels(conn: Connection, fts: str) -> int:
    """How many levels the FTS5 index's structure record holds (its first
    varint after a 4-byte cookie and an optional format marker); a record that
    is missing or unreadable counts as too deep, so the caller rebuilds."""
    block: Any = conn.exec_driver_sql(f"SELECT block FROM {fts}_data WHERE id = 10").scalar()
    try:
        buf = bytes(block)
        i = 8 if buf[4:8] == _STRUCTURE_V2 else 4
        return _varint(buf, i)[0]
    except (TypeError, IndexError):
        return 1 << 30


def writable(path: str) -> bool:
    """Whether this process may write the file (and so the store's WAL)."""
    return os.access(path, os.W_OK)


def is_read_only_url(url: str) -> bool:
    return "ro" in parse_qs(url.partition("?")[2]).get("mode", [])


def file_path(url: str) -> str | None:
    """The file a ``sqlite://`` URL names: ``sqlite:///x.db?mode=ro`` and the URI form
    ``sqlite:///file:x.db?mode=ro&uri=true`` both name ``x.db`` (None: in memory)."""
    db = make_url(url).database
    if not db or db == ":memory:":
        return None
    if db.startswith("file:"):
        db = unquote(db[len("file:") :].partition("?")[0])
        if db.startswith("//"):  # file://host/path or file:///path
            db = "/" + db[2:].partition("/")[2]
        if not db or db == ":memory:" or "mode=memory" in url:
            return None
    return db


def check_openable(path: str, *, read_only: bool) -> None:
    """Refuse, with a chronomem error, a path SQLite would fail on obscurely or that a
    read-only URL would create: a directory, a device (``/dev/null``), a missing file."""
    if os.path.isdir(path):
        raise StoreUnavailable(
            f"cannot open the SQLite database {path!r}: it is a directory; give a file path"
        )
    if os.path.exists(path) and not os.path.isfile(path):
        raise StoreUnavailable(
            f"cannot open the SQLite database {path!r}: it is not a regular file "
            "(a device or a pipe); give the path of a database file"
        )
    if read_only and not os.path.isfile(path):
        raise StoreUnavailable(
            f"no SQLite database at {path!r}: a read-only URL (mode=ro) opens an existing "
            "file and never creates one"
        )


class _PointConnection:
    """A pooled DBAPI connection standing in for a ``Connection`` in a point read:
    what a prepared statement uses (``dialect``, ``connection.driver_connection``:
    ``SqliteBackend.fetch``) is its own; anything else (a statement run through
    SQLAlchemy, such as a registry reload or ``fetch``'s error path) goes to a
    ``Connection`` opened on first use."""

    def __init__(self, engine: Engine, connection: Any):
        self.engine = engine
        self.dialect = engine.dialect
        self.connection = connection  # a pooled DBAPI connection (``SqliteBackend._take``)
        self.driver = connection.driver_connection  # the sqlite3 connection (``fetch``)
        self._full: Connection | None = None

    def __getattr__(self, name: str) -> Any:
        if self._full is None:
            self._full = self.engine.connect()
        return getattr(self._full, name)

    def close(self) -> None:
        """Close the ``Connection`` opened on first use (the DBAPI connection is the
        backend's to keep or return: ``SqliteBackend._give``)."""
        if self._full is not None:
            self._full.close()


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, url_or_path: str | None):
        if url_or_path is None:
            url, memory = "sqlite://", True
        elif url_or_path.startswith("sqlite"):
            url = url_or_path
            memory = url in ("sqlite://", "sqlite:///:memory:")
        else:
            url, memory = f"sqlite:///{url_or_path}", False
        self.path = None if memory else file_path(url)
        # A file this process cannot write is opened read-only: reads work, and
        # opening it writes nothing (writes raise ReadOnlyStore).
        self.read_only = bool(
            self.path
            and (is_read_only_url(url) or (os.path.isfile(self.path) and not writable(self.path)))
        )
        if self.path:
            check_openable(self.path, read_only=self.read_only)
        kwargs: dict[str, Any] = {
            "connect_args": {"check_same_thread": False, "timeout": BUSY_TIMEOUT_S}
        }
        if self.read_only:  # one spelling SQLite honours: a URI naming mode=ro
            assert self.path is not None
            url = f"sqlite:///file:{quote(os.path.abspath(self.path))}?mode=ro&uri=true"
        if memory:
            kwargs["poolclass"] = StaticPool
        else:
            kwargs["pool_size"] = 8
            kwargs["max_overflow"] = 16
        engine = create_engine(url, **kwargs)
        self.memory = memory

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            if not memory and not self.read_only:
                _to_wal(cur)
                cur.execute("PRAGMA synchronous=NORMAL")
                cur.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT}")
            if not memory:
                cur.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            cur.execute("PRAGMA secure_delete=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
            if mode == "DEFERRED":
                # a read's BEGIN takes no lock and cannot fail: straight to the
                # driver (through SQLAlchemy it cost as much as the read's statement)
                raw: Any = conn.connection.driver_connection
                raw.execute("BEGIN DEFERRED")
            else:
                conn.exec_driver_sql(f"BEGIN {mode}")

        super().__init__(engine, serialize=memory)
        self.driver_point_reads = not memory  # (``point_read``: no transaction)
        # pooled connections kept between point reads (a file store's: ``_take``)
        self._kept: collections.deque[Any] = collections.deque()
        event.listen(engine, "engine_disposed", lambda _engine: self._release_kept())
        # a writable file store's WAL checkpoints, off the write path (``write``)
        self.checkpointer = (
            Checkpointer(self.path, CHECKPOINT_PAGES) if self.path and not self.read_only else None
        )

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """The base class's write transaction; after it commits, the checkpoint
        thread is woken if ``CHECKPOINT_PAGES`` frames wait in the WAL."""
        with super().write() as conn:
            yield conn
        if self.checkpointer is not None:
            self.checkpointer.after_commit()

    def dispose(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.stop()
        super().dispose()

    @contextmanager
    def point_read(
        self, *, on_end: Callable[[Connection], None] | None = None
    ) -> Iterator[Connection]:
        """No transaction: the driver runs each statement in autocommit, one
        snapshot per statement, and a ``BEGIN``/``COMMIT`` through SQLAlchemy cost
        as much as the statement. Nor a SQLAlchemy ``Connection`` unless one is
        needed (``_PointConnection``): building one cost about what the statement
        does. Anything run through SQLAlchemy inside still begins a (deferred)
        transaction, rolled back when the connection closes.

        With ``on_end`` (a logged read: its instant must come from the statement's
        snapshot) the statement and ``on_end`` share one deferred transaction begun
        on the driver connection itself; an in-memory store needs none, since its
        one connection is held for the whole block (``_guarded``) and no write can
        come between."""
        if on_end is None and self._guard is None:  # a file store's plain point read
            pooled = self._take()
            conn = _PointConnection(self.engine, pooled)
            try:
                yield cast(Connection, conn)
            finally:
                try:
                    conn.close()
                finally:
                    self._give(pooled)
            return
        with self._guarded():
            pooled = self._take()
            conn = _PointConnection(self.engine, pooled)
            raw: Any = pooled.driver_connection
            snapshot = on_end is not None and self._guard is None
            try:
                if snapshot:
                    raw.execute("BEGIN DEFERRED")
                yield cast(Connection, conn)
                if on_end is not None:
                    on_end(cast(Connection, conn))
            finally:
                try:
                    if snapshot and raw.in_transaction:
                        raw.execute("ROLLBACK")  # it only read
                finally:
                    try:
                        conn.close()
                    finally:
                        self._give(pooled)

    def point_fetch(self, sql: str, params: Any) -> list[Any]:
        """``point_read`` of a file store, its one statement run on the kept driver
        connection itself (no context manager, no ``_PointConnection``): the
        same connection, statement and autocommit snapshot. A driver error runs
        it again through ``point_read`` and ``fetch``, which raise it as any
        read's (a read has no side effect to repeat)."""
        if self._guard is not None:  # an in-memory store: held for the read
            return super().point_fetch(sql, params)
        pooled = self._take()
        raw = pooled.driver_connection
        try:
            return raw.execute(sql, params).fetchall()
        except sqlite3.Error:
            pass
        finally:
            self._give(pooled, raw)
        return super().point_fetch(sql, params)

    def _take(self) -> Any:
        """A pooled DBAPI connection for a point read: one kept from an earlier point
        read, else one checked out of the pool. A point read is one statement of
        a few microseconds; a pool checkout and check-in (with its reset) cost
        several times that, so a file store keeps up to ``POINT_KEEP`` of them
        checked out between point reads (returned when the engine is disposed:
        ``close``, ``drain``)."""
        try:
            return self._kept.pop()
        except IndexError:
            return self.engine.raw_connection()

    def _give(self, pooled: Any, raw: Any = None) -> None:
        """Keep ``pooled`` for the next point read, or return it to the pool
        (``raw``: its driver connection, when the caller holds it already)."""
        if raw is None:
            raw = pooled.driver_connection
        if (
            not self.memory
            and len(self._kept) < POINT_KEEP
            and raw is not None
            and not raw.in_transaction
            and pooled.is_valid
        ):
            self._kept.append(pooled)
        else:
            pooled.close()  # back to the pool (its reset rolls back what is open)

    def _release_kept(self) -> None:
        while self._kept:
            try:
                self._kept.pop().close()
            except IndexError:
                break
            except Exception:  # a connection that cannot close is dropped with its pool
                log.debug("closing a kept point-read connection failed", exc_info=True)

    def _connect_write(self) -> Connection:
        # read-only: a deferred transaction (the open path only reads; a write fails)
        mode = "DEFERRED" if self.read_only else "IMMEDIATE"
        return self.engine.connect().execution_options(sqlite_begin=mode)

    def translate_error(self, exc: BaseException, *, connecting: bool) -> ChronomemError | None:
        if not isinstance(exc, sqlite3.Error):
            return None
        msg = str(exc)
        where = repr(self.path) if self.path else "the in-memory store"
        if "unable to open database file" in msg:
            return StoreUnavailable(
                f"cannot open the SQLite database {where}: its directory does not exist or is "
                "not accessible (a read-only WAL store also needs its -shm file, or a writable "
                "directory). Create the directory, or fix the path or the permissions."
            )
        if "file is not a database" in msg:
            return CorruptStore(
                f"{where} is not a SQLite database (a wrong file, or its header is damaged or "
                "encrypted). Check the path; restore the store from a backup."
            )
        if "malformed" in msg or "vtable constructor failed" in msg:
            cli = (
                f"chronomem --url {self.path} doctor --repair"
                if self.path
                else "Memory.check(repair=True)"
            )
            return CorruptStore(
                f"the database {where} is damaged ({msg}). Run `{cli}` (rebuilds the text "
                "indexes); if it still fails, restore the store from a backup."
            )
        if "readonly database" in msg:
            return ReadOnlyStore(
                f"{where} is open read-only (this process cannot write the file): reads work. "
                "To write, make the file and its directory writable and open it again."
            )
        return None

    def after_erase(self, conn: Connection) -> None:
        # Merge the FTS segments so deleted tokens leave the index's shadow tables.
        # Before SQLite 3.41 every 'optimize' adds a level to the index's structure
        # and FTS5 corrupts the index past its level limit (about 1,460 erases), so
        # an index with many levels is rebuilt from its content instead: that also
        # leaves no deleted token behind, and starts again from one level.
        for fts in FTS_TABLES:
            command = "rebuild" if fts_levels(conn, fts) >= REBUILD_AT_LEVELS else "optimize"
            conn.exec_driver_sql(f"INSERT INTO {fts}({fts}) VALUES ('{command}')")

    def maintenance_after_erase(self) -> None:
        if self.memory:
            return
        quiet = self.checkpointer.quiet() if self.checkpointer is not None else None
        with self._guarded(), quiet or nullcontext(), self.engine.connect() as conn:
            # Move the WAL's copies of erased pages into the (zeroed) file, then truncate
            # it. A reader holding an old snapshot would make TRUNCATE wait out the busy
            # timeout while blocking writers, so wait briefly; if busy, the next
            # checkpoint (SQLite runs them as the WAL grows) finishes the job. The
            # store's checkpoint thread waits meanwhile (``quiet``): a checkpoint of
            # its own running then would make this one busy at once.
            conn.exec_driver_sql(f"PRAGMA busy_timeout={CHECKPOINT_WAIT_MS}")
            try:
                busy, _, _ = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").one()
            finally:
                conn.exec_driver_sql(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            if busy:
                log.warning(
                    "erase: a reader held the WAL; erased bytes stay in %s-wal until the next checkpoint",
                    self.engine.url.database,
                )

    # -- the dialect's write SQL -------------------------------------------------------
    @classmethod
    def advance_clock(
        cls, conn: Connection, tenant: str, now_us: int, at: int | None
    ) -> tuple[int, int | None]:
        """One upsert (``_ADVANCE``) where the plain form takes three statements."""
        if not _RETURNING:
            return super().advance_clock(conn, tenant, now_us, at)
        sql = _ADVANCE_AT if at is not None else _ADVANCE
        last, registry_us = conn.exec_driver_sql(sql, (tenant, now_us if at is None else at)).one()
        return (at if at is not None else int(last)), registry_us

    @classmethod
    def insert_rows(cls, conn: Connection, table: Any, rows: list[dict[str, Any]]) -> None:
        """Insert many rows (the same keys in every row): one ``executemany`` of a
        prepared INSERT over plain tuples. sqlite3 steps the statement in C; the
        generic form added SQLAlchemy building a parameter dict per row
        (``construct_params``: 0.18 s against SQLite's own 0.57 s in a profiled
        1,000-put LangGraph batch). Values pass through each column's bind
        processing first, as with ``table.insert()``."""
        if not rows:
            return
        cols = tuple(rows[0])
        key = (table.name, cols)
        hit = _INSERTS.get(key)
        if hit is None:
            stmt = insert(table).compile(dialect=conn.dialect, column_keys=list(cols))
            # the placeholders follow the table's column order, not the keys'
            order = tuple(stmt.positiontup or ())
            if sorted(order) != sorted(cols):  # never expected: a key that is no column
                super().insert_rows(conn, table, rows)
                return
            # SafeText binds unchanged outside PostgreSQL, and sqlite3 takes bytes as
            # they are (LargeBinary's processor only wrapped each vector in a copy):
            # their processors are skipped
            procs = [
                None if isinstance(t, SafeText | LargeBinary) else t.bind_processor(conn.dialect)
                for t in (table.c[c].type for c in order)
            ]
            hit = _INSERTS[key] = (str(stmt), order, procs)
        sql, order, procs = hit
        fix = [
            (i, p)
            for i, p in enumerate(procs)
            if p is not None and not _floats(table.c[order[i]].type, rows, order[i])
        ]
        if not fix and len(rows) > FEW_ROWS and table.name in FTS_SOURCES:
            _stage(conn, table, order, rows)
            return
        values = operator.itemgetter(*order)  # a row's values in the statement's order
        params = list(map(values, rows)) if len(order) > 1 else [(values(r),) for r in rows]
        if fix:
            for n, row in enumerate(params):
                fixed = list(row)
                for i, p in fix:
                    fixed[i] = p(fixed[i])
                params[n] = tuple(fixed)
        if len(params) > 1 and table.name in FTS_SOURCES:
            if len(params) <= FEW_ROWS:
                flat = tuple(v for row in params for v in row)
                conn.exec_driver_sql(_values(sql, len(params)), flat)
                return
            # bind-processed values: staged from rows of them
            _stage(conn, table, order, [dict(zip(order, row, strict=True)) for row in params])
            return
        conn.exec_driver_sql(sql, params)

    @classmethod
    def close_versions(
        cls, conn: Connection, tenant: str, tx: int, closes: list[dict[str, Any]]
    ) -> None:
        """The same UPDATE as the base form, stepped by sqlite3 over plain tuples."""
        if closes:
            conn.exec_driver_sql(
                _CLOSE, [(tx, c["by"], c["reason"], tenant, c["vid"]) for c in closes]
            )

    # -- the dialect's read SQL and upkeep ---------------------------------------------
    @classmethod
    def fetch(cls, conn: Connection, sql: str, params: Any) -> list[Any]:
        """Straight to the driver's cursor: a point read's statement costs SQLite a
        few microseconds, SQLAlchemy's execution path (a result metadata build over
        every column) ten times that. A driver error re-runs the statement through
        SQLAlchemy, which raises it as it raises any other (wrapped, and translated
        by ``translate_error``); a read has no side effect to repeat."""
        try:
            raw: Any = getattr(conn, "driver", None) or conn.connection.driver_connection
            return raw.execute(sql, params).fetchall()
        except sqlite3.Error:
            return super().fetch(conn, sql, params)

    @classmethod
    def lexical(
        cls,
        conn: Connection,
        tbl: Any,
        terms: Sequence[str],
        filters: ShapedTerms,
        n: int,
        tiebreak: list[Any],
        run: Run,
    ) -> list[tuple[str, float]]:
        """FTS5's bm25 (``fts5.lexical``); a higher score is better."""
        return fts5.lexical(conn, tbl, terms, filters, n, tiebreak, run, cls.fetch)

    @classmethod
    def check_text_indexes(
        cls, conn: Connection, *, repair: bool
    ) -> tuple[dict[str, str], list[str]]:
        """FTS5's integrity check of both indexes; repair rebuilds from the text."""
        return fts5.check(conn, repair=repair)

    # -- the dialect's DDL -------------------------------------------------------------
    @classmethod
    def create_v1_objects(cls, conn: Connection) -> None:
        fts5.create_contentless(conn)

    @classmethod
    def rebuild_text_indexes(
        cls, conn: Connection, bodies: Sequence[tuple[str, str]], *, stemmed: bool
    ) -> None:
        tokenize = fts5.TOKENIZE_STEMMED if stemmed else fts5.TOKENIZE
        for table, body in bodies:
            fts5.create_external(conn, table, body, tokenize)
