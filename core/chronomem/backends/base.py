"""What the store needs from a database, and how a URL picks one."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import ModuleType
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Connection,
    Engine,
    and_,
    bindparam,
    case,
    event,
    func,
    literal_column,
    null,
    or_,
    select,
    update,
)
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import ExceptionContext

from ..errors import ChronomemError
from ..schema import txclock, versions

if TYPE_CHECKING:
    from ..prepared import ShapedTerms

# How a backend's lexical leg runs a statement (``prepared.ByShape.rows``): the
# connection, a key naming the statement's shape, a function building the SELECT
# (called once per key) and the parameters; the rows.
Run = Callable[[Connection, Hashable, Callable[[], Any], Mapping[str, Any]], list[Any]]

_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_]+")

# An execution option a backend honours: the statement is never made a server-side
# prepared statement (PostgreSQL: ``postgres._unprepared``). A read of a list of
# values (``reads._InList``, one array on PostgreSQL) is planned for its values on
# every execution, as when it was too long for psycopg to prepare (which it does to
# a statement run five times on a connection, in a round trip of its own; the server
# may then plan it once for any array).
UNPREPARED = "chronomem_unprepared"


def _simple_path(path: Sequence[str]) -> str:
    """``path`` joined by dots, each key checked to be safe inside SQL text."""
    if not path or not all(isinstance(k, str) and _SIMPLE_KEY.fullmatch(k) for k in path):
        raise ValueError(f"json_key takes simple keys (letters, digits, _), not {path!r}")
    return ".".join(path)


CLOCK_START = -(2**62)  # a new clock row's last stamp: before every instant
_CLOCK_ROW = (
    select(txclock.c.last_us, txclock.c.registry_us)
    .where(txclock.c.tenant == bindparam("tenant"))
    .with_for_update()
)
_CLOCK_SET = (
    update(txclock).where(txclock.c.tenant == bindparam("t")).values(last_us=bindparam("v"))
)
# a write stamped at or before the last stamp: one tick, which the rewrite marker takes
_CLOCK_REWRITE = (
    update(txclock)
    .where(txclock.c.tenant == bindparam("t"))
    .values(last_us=bindparam("v"), erased_us=bindparam("v"))
)


class Backend:
    """A database engine plus the operations that differ per dialect.

    The class methods are the dialect's SQL for one connection (``backends.of(conn)``
    finds the class); the base class holds the plain forms, a database's module
    overrides what it does faster or differently."""

    name = "base"
    dialect: ModuleType = sqlite_dialect  # the SQLAlchemy dialect module (its ``insert``)
    # Whether a failed statement aborts the whole transaction (PostgreSQL): then a
    # statement that may fail without ending the caller's work runs in a savepoint.
    failed_statement_aborts = False
    # Whether text is stored as given, so ``SafeText``'s escaping is the identity
    # here (PostgreSQL escapes NUL and backslash): prepared statements skip it.
    text_as_given = True
    # Whether an index key may be as long as the rows' text (SQLite; PostgreSQL's btree
    # refuses a key over ~2.7 kB): schema v17's covering indexes are built where it may.
    long_index_keys = True
    # Whether a plain ``point_read`` hands out the driver connection (``.driver``),
    # each statement on it its own snapshot, outside any transaction (a SQLite file
    # store's): a read that runs one statement needs no ``BEGIN`` there
    # (``retrieval.within``).
    driver_point_reads = False

    def __init__(self, engine: Engine, *, serialize: bool = False):
        self.engine = engine
        event.listen(engine, "handle_error", self._handle_error)
        # One shared connection (in-memory SQLite) must not be used by two threads at once.
        self._guard: threading.RLock | None = threading.RLock() if serialize else None

    @contextmanager
    def _guarded(self) -> Iterator[None]:
        if self._guard is None:
            yield
        else:
            with self._guard:
                yield

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction, serialized against other writers as the dialect allows."""
        with self._guarded(), self._connect_write() as conn, conn.begin():
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._guarded(), self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def statement_read(self) -> Iterator[Connection]:
        """A read whose statements need no common snapshot (a search: each leg
        filters by the instants it is given, and rows committed after the mirror's
        sync are read as they come). By default a read transaction, as ``read``;
        a database that gives every statement its own snapshot anyway may run them
        without a transaction (one statement each: no ``BEGIN``/``COMMIT`` round
        trips, and a failed statement ends nothing else)."""
        with self.read() as conn:
            yield conn

    @staticmethod
    def statement_at_a_time(conn: Connection) -> bool:
        """Whether ``conn`` runs each statement on its own, outside a transaction
        (an autocommit connection: ``statement_read`` where the database allows it)."""
        return conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT"

    @classmethod
    @contextmanager
    def transaction_block(cls, conn: Connection) -> Iterator[None]:
        """A transaction around what runs on ``conn`` meanwhile, where ``conn`` runs
        its statements outside one (``statement_read``): a server-side cursor
        needs one. Otherwise ``conn`` is in a transaction already: nothing to do."""
        yield

    @contextmanager
    def snapshot_read(self) -> Iterator[Connection]:
        """A read transaction whose statements all see one snapshot (an export that
        counts, then streams). A SQLite read transaction already is one."""
        with self.read() as conn:
            yield conn

    @contextmanager
    def point_read(
        self, *, on_end: Callable[[Connection], None] | None = None
    ) -> Iterator[Connection]:
        """A connection for a read of one prepared statement (``chronomem.prepared``),
        plus at most a lookup whose snapshot need not be the statement's (the
        predicate registry's version): one statement sees one snapshot by itself.
        By default a read transaction, as ``read``.

        ``on_end`` (the read log's instant lookup, ``readlog.instant_hook``) must see
        the statement's snapshot: a backend whose point read is not a SQLAlchemy
        transaction runs it in a snapshot of its own making before that ends; in a
        SQLAlchemy transaction, as here, the engine's ``commit`` listener does that
        job and ``on_end`` is not called."""
        with self.read() as conn:
            yield conn

    def point_fetch(self, sql: str, params: Any) -> list[Any]:
        """The rows of one compiled SELECT (``fetch``'s arguments) run as a point
        read of its own (``point_read``): one statement, one snapshot. A backend
        that hands out its driver connection for one (``driver_point_reads``)
        runs it there without the context manager and connection wrapper."""
        with self.point_read() as conn:
            return self.fetch(conn, sql, params)

    def walk_read(self) -> AbstractContextManager[Connection]:
        """A point read whose one statement walks an index in its order and stops once
        its LIMIT is met (``prefixes.live_entries``), which a planner must not trade for
        reading the whole range and sorting it. By default ``point_read``."""
        return self.point_read()

    def _connect_write(self) -> Connection:
        return self.engine.connect()

    def _handle_error(self, ctx: ExceptionContext) -> BaseException | None:
        if ctx.is_pre_ping:  # the pool handles stale connections itself
            return None
        return self.translate_error(ctx.original_exception, connecting=ctx.connection is None)

    def translate_error(self, exc: BaseException, *, connecting: bool) -> ChronomemError | None:
        """The chronomem error (saying what to do) for a driver error this backend
        recognises; None keeps the driver's error."""
        return None

    def lock_slots(self, conn: Connection, tenant: str, slots: Sequence[str]) -> None:
        """Serialize writers of the same slots until the transaction ends."""

    @classmethod
    def lock_read_log(cls, conn: Connection, tenants: Sequence[str], *, erasing: bool) -> None:
        """Serialize a read-log batch write (shared) with an erasure's pass over the
        log (exclusive) of the same tenants until the transaction ends, so a batch
        either commits before the erasure marks the log or checks what is stored
        after the erasure committed. A database that serializes writers already
        (SQLite) needs nothing."""

    def after_erase(self, conn: Connection) -> None:
        """Make physically deleted text unrecoverable from indexes (dialect work)."""

    def maintenance_after_erase(self) -> None:
        """Work that must run outside a transaction after an erase."""

    @property
    def for_update(self) -> bool:
        return False

    def dispose(self) -> None:
        self.engine.dispose()

    # -- the dialect's write SQL -------------------------------------------------------
    @classmethod
    def advance_clock(
        cls, conn: Connection, tenant: str, now_us: int, at: int | None
    ) -> tuple[int, int | None]:
        """Create (if absent), lock until commit and advance the tenant's clock row;
        return this write's transaction time (``at``, or ``max(now_us, last + 1)``)
        and the row's ``registry_us``. The clock never goes back: ``at`` at or
        before the last stamp (an import of the past) is returned but not stored;
        the clock ticks once instead and ``erased_us``, the marker every process's
        search mirror reloads on, takes that tick. A mirror follows the clock
        (rows recorded or closed after the stamp it synced to), so rows stamped at
        or before that stamp would otherwise stay out of it for good. The plain
        form: insert if absent, read ``FOR UPDATE``, update."""
        cls.insert_ignore(conn, txclock, [{"tenant": tenant, "last_us": CLOCK_START}])
        last, registry_us = conn.execute(_CLOCK_ROW, {"tenant": tenant}).one()
        value = at if at is not None else max(now_us, last + 1)
        if value > last:
            conn.execute(_CLOCK_SET, {"t": tenant, "v": value})
        else:
            conn.execute(_CLOCK_REWRITE, {"t": tenant, "v": last + 1})
        return value, registry_us

    @classmethod
    def advance_clock_later(
        cls, conn: Connection, tenant: str, now_us: int, at: int | None
    ) -> Callable[[], tuple[int, int | None]] | None:
        """``advance_clock`` queued to go to the server with the transaction's next
        statement (its reads behind the clock row, in its round trip): a call that
        returns what ``advance_clock`` does (sending the stamp then if nothing took
        it); None where statements are not queued (call ``advance_clock``)."""
        return None

    @classmethod
    def sends_together(cls) -> bool:
        """Whether ``begin_write`` sends its statements together (PostgreSQL's
        pipeline mode); False: the writer runs them one by one."""
        return False

    @classmethod
    def begin_write(
        cls,
        conn: Connection,
        tenant: str,
        now_us: int,
        at: int | None,
        slots: Sequence[str],
        live: tuple[dict[str, str], Sequence[str]] | None = None,
    ) -> tuple[int, int | None, list[dict[str, Any]], list[tuple[Any, ...]]] | None:
        """``advance_clock``, the slot locks (``lock_slots``'), the slots' current
        versions (``FOR UPDATE``) and, with ``live`` (a scope's columns and subject
        hashes), the live (subject key, slot, predicate) of those subjects in that
        scope, in one round trip, in that order: the stamp, ``registry_us``, the
        version rows and the live rows; None where statements are not sent together."""
        return None

    @classmethod
    def slot_rows(
        cls, conn: Connection, tenant: str, slots: Sequence[str], for_update: bool
    ) -> list[Any] | None:
        """The current version rows of ``slots`` (tuples in ``cm_versions``' column
        order, values as SQLAlchemy returns them; ``FOR UPDATE`` when
        ``for_update``) in one statement, however many the slots; None where the
        writer reads them in parts of a bounded ``IN`` list (the default)."""
        return None

    @classmethod
    def deferring(cls, conn: Connection) -> AbstractContextManager[None]:
        """A block whose ``close_versions`` and ``insert_rows`` may be sent later
        (PostgreSQL: with the next statement or the ``COMMIT``); run at once by default."""
        return nullcontext()

    @classmethod
    def insert_ignore(cls, conn: Connection, table: Any, rows: list[dict[str, Any]]) -> None:
        """INSERT … ON CONFLICT DO NOTHING."""
        if rows:
            conn.execute(cls.dialect.insert(table).on_conflict_do_nothing(), rows)

    @classmethod
    def upsert(
        cls,
        conn: Connection,
        table: Any,
        rows: list[dict[str, Any]],
        keys: Sequence[str],
        columns: Sequence[str],
    ) -> None:
        """Insert the rows, or set ``columns`` of the ones whose ``keys`` exist: an
        insert-if-absent that never collides with a concurrent insert."""
        if not rows:
            return
        stmt = cls.dialect.insert(table)
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=[table.c[k] for k in keys],
                set_={c: stmt.excluded[c] for c in columns},
            ),
            rows,
        )

    @classmethod
    def insert_rows(cls, conn: Connection, table: Any, rows: list[dict[str, Any]]) -> None:
        """Insert many rows (the same keys in every row): one ``executemany``."""
        if rows:
            conn.execute(table.insert(), rows)

    @classmethod
    def close_versions(
        cls, conn: Connection, tenant: str, tx: int, closes: list[dict[str, Any]]
    ) -> None:
        """Mark versions superseded at ``tx``: ``closes`` holds ``vid``, ``by``, ``reason``."""
        if not closes:
            return
        conn.execute(
            update(versions)
            .where(versions.c.tenant == bindparam("t"), versions.c.id == bindparam("vid"))
            .values(
                superseded_at=tx,
                superseded_by=bindparam("by"),
                closed_reason=bindparam("reason"),
            ),
            [{"t": tenant, **c} for c in closes],
        )

    @classmethod
    def after_insert_versions(cls, conn: Connection, n_inserted: int) -> None:
        """Planner upkeep after a write inserted ``n_inserted`` versions."""

    @classmethod
    def after_insert_vectors(cls, conn: Connection, n_inserted: int) -> None:
        """Planner upkeep after a write inserted ``n_inserted`` vectors."""

    @classmethod
    def run_write(cls, conn: Connection, stmt: Any, params: Any) -> None:
        """A write statement whose result nobody reads (pgvector's column update):
        run now; PostgreSQL queues it with the writer's closes and inserts when
        they are queued (``pgpipeline``), so it costs no round trip of its own."""
        conn.execute(stmt, params)

    # -- the dialect's read SQL and upkeep ---------------------------------------------
    @classmethod
    def fetch(cls, conn: Connection, sql: str, params: Any) -> list[Any]:
        """The rows of one compiled SELECT (``chronomem.prepared``), its parameters
        already processed for the driver: through ``exec_driver_sql``, so the
        statement still passes SQLAlchemy's cursor events and error handling."""
        return list(conn.exec_driver_sql(sql, params).fetchall())

    @classmethod
    def fetch_prepared(cls, conn: Connection, sql: str, params: Any) -> list[Any]:
        """``fetch``, for a statement run on most calls of a path (a search's kept
        rows): where the driver prepares statements on the server, this one is
        prepared from its first run (PostgreSQL). Elsewhere ``fetch``."""
        return cls.fetch(conn, sql, params)

    @classmethod
    def fetch_together(
        cls,
        conn: Connection,
        reads: Sequence[tuple[str, Any]],
        meanwhile: Callable[[], None] | None = None,
    ) -> list[list[Any]]:
        """The rows of each of ``reads`` (``fetch``'s SQL and parameters), run in
        their order: one after the other by default; in one round trip where the
        database takes statements together (PostgreSQL's pipeline mode). A failing
        one raises, as ``fetch`` would. ``meanwhile`` (client work that does not
        use ``conn``) runs once: here after the reads; on PostgreSQL while the
        server runs them."""
        rows = [cls.fetch(conn, sql, params) for sql, params in reads]
        if meanwhile is not None:
            meanwhile()
        return rows

    @classmethod
    def json_text(cls, column: Any, path: Sequence[str]) -> Any:
        """The text at ``path`` (object keys) inside a JSON text ``column``:
        SQLite's ``json_extract`` by default (NULL where there is none)."""
        keys = "".join('."' + k.replace('"', '""') + '"' for k in path)
        return func.json_extract(column, "$" + keys)

    @classmethod
    def json_key(cls, column: Any, path: Sequence[str]) -> Any:
        """The text at a fixed ``path`` of simple keys (letters, digits, ``_``)
        inside a JSON text ``column``, the path written into the SQL (not bound),
        so an expression index over the same expression (schema v9,
        ``schema.EPISODE_TAGS``) serves it: ``json_extract`` by default."""
        return func.json_extract(column, literal_column(f"'$.{_simple_path(path)}'"))

    @classmethod
    def json_key_value(cls, value: str) -> str:
        """A value compared with ``json_key`` as the database holds it (as given
        by default)."""
        return value

    @classmethod
    def partial_index_term(cls, column: Any, value: str) -> Any:
        """The term a partial index holds one value of ``column`` by (``value`` a
        literal; the reads walking the index repeat the term). SQLite: not
        ``column = 'value'``, since SQLite, checking whether a statement's
        ``column = ?`` implies a partial index's ``WHERE``, compares the bound value
        with that literal and then re-prepares the statement at every execution with
        a new value (every statement naming a predicate: measured 15x a LangGraph
        ``list_namespaces`` statement's own cost). ``column || ''`` is the same text,
        and no other statement's term is compared with it."""
        return column.concat(literal_column("''")) == literal_column(f"'{value}'")

    @classmethod
    def utc_iso_text(cls, value: Any) -> Any:
        """``value`` when it reads ``YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`` (a UTC
        instant as ``datetime.isoformat`` writes it: a fraction only when not zero),
        else NULL, the pattern written into the SQL (``schema.instant_key``'s index
        holds it). Such texts sort (in byte order) as their instants do: SQLite's
        ``GLOB`` by default."""
        d2, d4 = "[0-9]" * 2, "[0-9]" * 4
        whole = f"{d4}-{d2}-{d2}T{d2}:{d2}:{d2}"
        fraction: Any = literal_column(f"'{whole}.{'[0-9]' * 6}+00:00'")
        shaped = or_(
            value.op("GLOB")(literal_column(f"'{whole}+00:00'")),
            and_(
                value.op("GLOB")(fraction),
                func.substr(value, literal_column("20"), literal_column("7"))
                != literal_column("'.000000'"),
            ),
        )
        return case((shaped, value), else_=null())

    @classmethod
    def one_of(cls, column: Any, values: Sequence[str]) -> Any:
        """``column`` equals one of ``values`` (a string column, a bounded list: the
        caller chunks it): ``IN (…)`` by default."""
        return column.in_(values)

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
        """The lexical leg's ranking over ``tbl``'s text index: (id, score), best
        first, at most ``n``, only rows passing ``filters``, ties by ``tiebreak``.
        Its statements run through ``run`` (``prepared.ByShape.rows``: built and
        compiled once per shape of the filters, keyed by what decides their SQL)."""
        raise NotImplementedError(f"{cls.name} has no text index")

    @classmethod
    def relax_durability(cls, conn: Connection) -> None:
        """Let this transaction's commit return before it is durable (for rows whose
        loss in a server crash is acceptable, e.g. the read log); a no-op by default."""

    @classmethod
    def check_text_indexes(
        cls, conn: Connection, *, repair: bool
    ) -> tuple[dict[str, str], list[str]]:
        """Check (and with ``repair`` rebuild) text indexes the database can check:
        index name -> "ok" or the error, and what was repaired. None by default
        (PostgreSQL's generated tsvector columns cannot drift from the text)."""
        return {}, []

    # -- the dialect's DDL (schema migrations, ``schema.migrate``) ---------------------
    @classmethod
    def lock_migration(cls, conn: Connection) -> None:
        """Serialize migrations beyond the write transaction (two processes opening
        a new database must not both create it); the write lock suffices by default."""

    @classmethod
    def current_schema(cls, conn: Connection) -> str | None:
        """The schema the store writes to, for catalog lookups (``has_table``) that
        must not see another schema's tables on the search path; None: the default."""
        return None

    @classmethod
    def create_v1_objects(cls, conn: Connection) -> None:
        """Schema v1's database-specific objects, after the tables: the text indexes
        (and whatever the database enforces itself)."""
        raise NotImplementedError(f"{cls.name} has no text index")

    @classmethod
    def reshape_i1(cls, conn: Connection) -> None:
        """Schema v7: bring the database's own I1 constraint to its current shape
        (PostgreSQL); nothing where I1 is kept by the write lock alone."""

    @classmethod
    def byte_order(cls, conn: Connection, columns: Mapping[str, Sequence[str]]) -> None:
        """Schema v15: the text ``columns`` (table -> column names) compare as bytes
        (``memcmp``), whatever the database's default collation; nothing where text
        compares so already (SQLite's ``BINARY``)."""

    @classmethod
    def rebuild_text_indexes(
        cls, conn: Connection, bodies: Sequence[tuple[str, str]], *, stemmed: bool
    ) -> None:
        """(Re)create each table's text index over the first ``INDEX_MAX_CHARS`` of
        its body (``bodies``: table, SQL template over a row prefix ``{r}``), built
        from the stored text; ``stemmed``: English stemming (schema v3 on)."""
        raise NotImplementedError(f"{cls.name} has no text index")

    @classmethod
    def has_pgvector(cls, conn: Connection) -> bool:
        """Whether the database has (or could create) pgvector's ``vector`` type."""
        return False

    @classmethod
    def tune_indexes(cls, conn: Connection) -> None:
        """Bring the search indexes' settings up to date on open (PostgreSQL: the
        text indexes' pending list); nothing elsewhere."""
