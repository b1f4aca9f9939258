"""One SQLAlchemy schema for every backend, and its migrations.

Every table carries the tenant and every key and index leads with it, so the
same schema distributes by tenant (Citus). Timestamps are BIGINT microseconds
since the Unix epoch (UTC); ``NULL`` in a ``*_to``/``superseded_at`` column means
unbounded.

Migrations are a list of small functions with a version table (``meta``)
instead of alembic: core depends on numpy and SQLAlchemy only, the schema is
small, and each step is tested by opening an older database. The steps say
what changes; each database's DDL for them (text indexes, constraints, catalog
lookups, locks) is its ``Backend``'s, passed to ``migrate``."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Connection,
    Float,
    FunctionElement,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    bindparam,
    column,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.schema import CreateIndex
from sqlalchemy.types import TypeDecorator

from .errors import CorruptStore, SchemaMismatch
from .scope import Scope
from .slotkeys import SPECIAL, legacy_slot_key, slot_key
from .timeutil import MIN_US

if TYPE_CHECKING:
    from .backends import Backend

log = logging.getLogger("chronomem.schema")

_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


class SafeText(TypeDecorator[str]):
    """Text that round-trips any Unicode on every backend.

    PostgreSQL text cannot hold NUL, so there (only) ``\\`` and NUL are escaped
    on the way in and restored on the way out. Comparisons against the column
    bind through the same type, so equality and prefixes stay exact."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None or dialect.name != "postgresql":
            return value
        if "\\" in value or "\x00" in value:
            return value.replace("\\", "\\\\").replace("\x00", "\\0")
        return value

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None or dialect.name != "postgresql" or "\\" not in value:
            return value
        return _ESCAPED.sub(lambda m: "\x00" if m.group(1) == "0" else m.group(1), value)


metadata = MetaData()

meta = Table(
    "cm_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

txclock = Table(
    "cm_txclock",
    metadata,
    Column("tenant", String(255), primary_key=True),
    Column("last_us", BigInteger, nullable=False),
    # when this tenant last erased something (or was written at or before its last
    # stamp: an import of the past, Backend.advance_clock) / changed its predicate
    # registry: other processes' caches (search mirror, registry) reload when these move
    Column("erased_us", BigInteger, nullable=True),
    Column("registry_us", BigInteger, nullable=True),
)

predicates = Table(
    "cm_predicates",
    metadata,
    Column("tenant", String(255), nullable=False),
    Column("name", SafeText, nullable=False),  # a canonical name or an alias
    Column("canonical", SafeText, nullable=False),
    Column("cardinality", String(8), nullable=False),
    Column("volatility", String(8), nullable=False),
    Column("origin", String(32), nullable=False, server_default="user"),
    PrimaryKeyConstraint("tenant", "name"),
)

_SCOPE_COLUMNS = ("user_id", "agent_id", "session_id")


def _scope_columns() -> list[Column[str]]:
    return [Column(c, String(255), nullable=False, server_default="") for c in _SCOPE_COLUMNS]


versions = Table(
    "cm_versions",
    metadata,
    Column("tenant", String(255), nullable=False),
    Column("id", String(32), nullable=False),
    Column("fact_id", String(32), nullable=False),
    *_scope_columns(),
    Column("slot", String(40), nullable=False),
    Column("subject", SafeText, nullable=False),
    Column("subject_key", SafeText, nullable=False),
    Column("subject_hash", String(40), nullable=False),  # sha1 of subject_key, for indexes
    Column("predicate", SafeText, nullable=False),
    Column("object", SafeText, nullable=False),
    Column("object_key", SafeText, nullable=False),
    Column("valid_from", BigInteger, nullable=False),
    Column("valid_to", BigInteger, nullable=True),
    Column("recorded_at", BigInteger, nullable=False),
    Column("superseded_at", BigInteger, nullable=True),
    Column("superseded_by", String(32), nullable=True),
    Column("closed_reason", String(16), nullable=True),
    Column("extractor", SafeText, nullable=True),
    Column("metadata", Text, nullable=False, server_default="{}"),
    Column("content_hash", String(40), nullable=False),
    # What the lexical and vector legs index: NULL = "subject predicate object",
    # '' = not indexed (an adapter's ``index=False``).
    Column("index_text", SafeText, nullable=True),
    PrimaryKeyConstraint("tenant", "id"),
)


class SubjectHead(FunctionElement[str]):
    """The first ``SUBJECT_HEAD`` characters of a subject key, compared in code
    point order (UTF-8 byte order) on both databases: what ``cm_versions_subject_head``
    indexes, so a ``subject_prefix`` read is a range scan of its prefix instead of
    a scan of the tenant (``reads.subject_range``). Keys themselves are too long
    for a btree; their heads are not."""

    name = "cm_subject_head"
    inherit_cache = True
    type = Text()


SUBJECT_HEAD = 200


@compiles(SubjectHead)
def _subject_head_sqlite(element: SubjectHead, compiler: Any, **kw: Any) -> str:
    (column,) = (compiler.process(c, **kw) for c in element.clauses)
    return f"substr({column}, 1, {SUBJECT_HEAD})"  # BINARY collation: byte order


@compiles(SubjectHead, "postgresql")
def _subject_head_pg(element: SubjectHead, compiler: Any, **kw: Any) -> str:
    (column,) = (compiler.process(c, **kw) for c in element.clauses)
    return f'(substr({column}, 1, {SUBJECT_HEAD}) COLLATE "C")'  # byte order, any locale


class _EntryFrom(FunctionElement[int]):
    """``valid_from`` as ``entry_term`` compares it: ``valid_from + 0`` on SQLite, so
    that no other statement's ``valid_from = ?`` is compared with the partial index's
    literal (SQLite would re-prepare it at every execution, as
    ``Backend.partial_index_term`` explains); the column itself on PostgreSQL."""

    name = "cm_entry_from"
    inherit_cache = True
    type = BigInteger()


@compiles(_EntryFrom)
def _entry_from_sqlite(element: _EntryFrom, compiler: Any, **kw: Any) -> str:
    (column,) = (compiler.process(c, **kw) for c in element.clauses)
    return f"({column} + 0)"


@compiles(_EntryFrom, "postgresql")
def _entry_from_pg(element: _EntryFrom, compiler: Any, **kw: Any) -> str:
    (column,) = (compiler.process(c, **kw) for c in element.clauses)
    return str(column)


def entry_term(valid_from: Any) -> ColumnElement[bool]:
    """A version is valid from the start of the calendar (``MIN_US``): an adapter's
    index entry (``Memory.live_entries``; nothing starts earlier, so it says what
    ``valid_from <= MIN_US`` says). The ``WHERE`` of schema v17's partial index of
    entries (``cm_versions_entries``), which a statement repeats to walk it."""
    return _EntryFrom(valid_from) == literal_column(str(MIN_US))


# Schema v17 (issue #32, where ``Backend.long_index_keys``): what a ``list_namespaces``
# page reads, each entry and its probe for a live fact, is in two indexes, so it reads
# no table row. ``cm_versions_subject_head`` keeps (tenant, head) and then holds the
# columns a live probe tests (scope and both clocks), and ``cm_versions_entries`` holds
# the entries, valid from ``MIN_US``, with every column their walk reads, in head order.
HEAD_COVERS = (
    "user_id",
    "agent_id",
    "session_id",
    "superseded_at",
    "valid_from",
    "valid_to",
    "recorded_at",
)
ENTRY_COLUMNS = (
    "predicate",
    "user_id",
    "agent_id",
    "session_id",
    "superseded_at",
    "valid_from",
    "valid_to",
    "subject_key",
    "object_key",
    "subject_hash",
    "id",
)


Index("cm_versions_slot_current", versions.c.tenant, versions.c.slot, versions.c.superseded_at)
Index("cm_versions_fact", versions.c.tenant, versions.c.fact_id)
subject_head_index = Index(
    "cm_versions_subject_head", versions.c.tenant, SubjectHead(versions.c.subject_key)
)
# A subject's versions by predicate, then ``superseded_at`` (so the current ones, NULL,
# are one range of each): the history reads' index and, since v12, the current reads'
# too (v1's partial ``cm_versions_current`` held the same key over the current versions
# only). A hex key lands 1,000 new versions on nearly every leaf, so each such index
# cost a batch of writes about a seventh of SQLite's work and of the pages its commit
# wrote (issue #32).
subject_index = Index(
    "cm_versions_subject",
    versions.c.tenant,
    versions.c.subject_hash,
    versions.c.predicate,
    versions.c.superseded_at,
)
Index("cm_versions_recorded", versions.c.tenant, versions.c.recorded_at)
# The closed versions by when they were closed (the search mirror's catch-up reads the
# versions closed since its last sync, ``superseded_at > since``). Partial since v16:
# a current version (NULL) is not in it, so a new version costs no entry here and a
# close adds one instead of moving one; a read of current versions never took it
# for the right plan (``tests/test_versions_subject_index.py``).
superseded_index = Index(
    "cm_versions_superseded",
    versions.c.tenant,
    versions.c.superseded_at,
    sqlite_where=versions.c.superseded_at.is_not(None),
    postgresql_where=versions.c.superseded_at.is_not(None),
)
# A predicate's current versions newest first (``reads.newest_facts``: CrewAI's storage
# fills a search page with them, issue #32), in that read's order as far as a btree can
# hold it (the subject key's head, not the key), so its page is an index walk, not a sort
# of every current version of the predicate. Valid from and recorded at are negated (the
# order descends), so no other read's ``valid_from`` range can use this index: SQLite
# without statistics would otherwise prefer it to a subject's own index for the
# subject's current value (two equalities and a range over three equalities).
NEWEST_KEY = (
    -versions.c.valid_from,
    -versions.c.recorded_at,
    SubjectHead(versions.c.subject_key),
)
newest_index = Index(
    "cm_versions_newest",
    versions.c.tenant,
    versions.c.predicate,
    *NEWEST_KEY,
    sqlite_where=versions.c.superseded_at.is_(None),
    postgresql_where=versions.c.superseded_at.is_(None),
)

# One predicate's current versions ordered by an instant in their metadata (issue #32):
# index name -> (predicate, metadata path). Partial (that predicate's current versions
# only: other facts pay nothing) expression indexes over ``instant_key`` and the subject
# key's head, created by ``_v13``, walked backwards by ``reads.newest_by_instant``.
# ``crewai_record`` is the CrewAI storage's predicate and ``created_at`` its records'
# creation instant (``crewai_chronomem.storage``), as ``EPISODE_TAGS`` names the
# adapters' transcript key.
INSTANT_ORDERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cm_versions_record_created": ("crewai_record", ("created_at",)),
}


def history_order(name: str) -> str:
    """The index holding *every* version of an ``INSTANT_ORDERS`` entry's predicate,
    closed ones too, in the same order (schema v14): an ``as_of`` page walks it
    (``instant_order``), since a version closed after the instant was believed then."""
    return f"{name}_history"


def instant_key(backend: type[Backend], metadata: Any, path: Sequence[str]) -> Any:
    """The text at ``path`` in a version's ``metadata`` column when it is an instant written as
    ``YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`` (``datetime.isoformat`` of a UTC instant,
    a fraction only when not zero), else NULL: such texts sort as their instants do."""
    return backend.utc_iso_text(backend.json_key(metadata, path))


episodes = Table(
    "cm_episodes",
    metadata,
    Column("tenant", String(255), nullable=False),
    Column("id", String(32), nullable=False),
    *_scope_columns(),
    Column("role", SafeText, nullable=True),
    Column("text", SafeText, nullable=False),
    Column("occurred_at", BigInteger, nullable=False),
    Column("recorded_at", BigInteger, nullable=False),
    Column("metadata", Text, nullable=False, server_default="{}"),
    Column("content_hash", String(40), nullable=False),
    PrimaryKeyConstraint("tenant", "id"),
)
Index("cm_episodes_time", episodes.c.tenant, episodes.c.occurred_at)
# a scope's newest episodes first (a transcript's tail, issue #32)
episodes_recent_index = Index(
    "cm_episodes_recent",
    episodes.c.tenant,
    episodes.c.user_id,
    episodes.c.agent_id,
    episodes.c.session_id,
    episodes.c.recorded_at,
    episodes.c.id,
)
# a tenant's episodes by transaction time: the search mirror's sync reads only
# what was recorded since it last synced, not every episode (issue #32)
episodes_recorded_index = Index("cm_episodes_recorded", episodes.c.tenant, episodes.c.recorded_at)

# Episodes found by a key in their metadata (issue #32): index name -> the path
# (object keys) whose text it holds, per scope. Partial (rows holding the key only)
# expression indexes over ``Backend.json_key`` (the dialect's JSON extraction),
# created by ``_v9``. ``chronomem_transcript`` is the shared transcript's metadata
# key (``chronomem_adapters.transcript.KEY``): its message ids and clear markers.
EPISODE_TAGS: dict[str, tuple[str, ...]] = {
    "cm_episodes_message": ("chronomem_transcript", "message_id"),
    "cm_episodes_marker": ("chronomem_transcript", "marker"),
}

sources = Table(
    "cm_sources",
    metadata,
    Column("tenant", String(255), nullable=False),
    Column("fact_id", String(32), nullable=False),
    Column("episode_id", String(32), nullable=False),
    Column("recorded_at", BigInteger, nullable=False),
    Column("extractor", SafeText, nullable=True),  # who read the fact in this episode
    PrimaryKeyConstraint("tenant", "fact_id", "episode_id"),
)
Index("cm_sources_episode", sources.c.tenant, sources.c.episode_id)

vectors = Table(
    "cm_vectors",
    metadata,
    Column("tenant", String(255), nullable=False),
    Column("kind", String(1), nullable=False),  # 'v' version, 'e' episode
    Column("item_id", String(32), nullable=False),
    Column("embedder", String(255), nullable=False),
    Column("dim", Integer, nullable=False),
    Column("vec", LargeBinary, nullable=False),  # float32, little endian
    Column("norm", Float, nullable=False, server_default="1"),
    PrimaryKeyConstraint("tenant", "kind", "item_id"),
)

# The served-read log (issue #16, ``chronomem.readlog``): one row per read a
# ``Memory(read_log=True)`` served, and one row per item it handed out. No text of
# a fact or episode is stored here, only ids (what ``erase`` must reach); the
# read's own arguments (a query) are blanked when it served something erased.
read_log = Table(
    "cm_reads",
    metadata,
    Column("tenant", String(255), nullable=False),
    Column("id", String(32), nullable=False),
    *_scope_columns(),
    Column("at_us", BigInteger, nullable=False),  # the transaction-clock instant of the read
    Column("op", String(16), nullable=False),  # facts | search | recall
    Column("args", SafeText, nullable=False),  # JSON, instants resolved
    Column("run", SafeText, nullable=True),  # the caller tag's run, for reads(run=...)
    Column("tag", SafeText, nullable=False, server_default="{}"),  # JSON caller tag
    Column("erased", Integer, nullable=False, server_default="0"),
    PrimaryKeyConstraint("tenant", "id"),
)
Index("cm_reads_at", read_log.c.tenant, read_log.c.at_us)
Index("cm_reads_run", read_log.c.tenant, read_log.c.run, read_log.c.at_us)

read_items = Table(
    "cm_read_items",
    metadata,
    Column("tenant", String(255), nullable=False),
    Column("read_id", String(32), nullable=False),
    Column("pos", Integer, nullable=False),
    Column("kind", String(1), nullable=False),  # 'v' version, 'e' episode
    Column("item_id", String(32), nullable=False),
    Column("score", Float, nullable=True),
    Column("state", String(16), nullable=True),  # the version's state as served
    Column("erased", Integer, nullable=False, server_default="0"),
    PrimaryKeyConstraint("tenant", "read_id", "pos"),
)
Index("cm_read_items_item", read_items.c.tenant, read_items.c.item_id)

SCHEMA_VERSION = 17

# The text indexes (FTS5 on SQLite, tsvector on PostgreSQL) cover the first this
# many characters of a version's or an episode's text, on both backends: a longer
# text is stored and read back whole, but words past this point are not found by
# the lexical leg (PostgreSQL refuses a tsvector over 1 MB of lexemes).
INDEX_MAX_CHARS = 100_000

Migration = Callable[[Connection, "type[Backend]"], None]


def _v1(conn: Connection, backend: type[Backend]) -> None:
    # No checkfirst: v1 runs only when this schema has no cm_meta, and a
    # visibility check would see another schema's tables on the search_path.
    metadata.create_all(conn, checkfirst=False)
    backend.create_v1_objects(conn)  # text indexes (and I1's constraint on PostgreSQL)
    conn.exec_driver_sql(
        "CREATE INDEX cm_versions_current ON cm_versions (tenant, subject_hash, predicate) "
        "WHERE superseded_at IS NULL"
    )


def _v2(conn: Connection, backend: type[Backend]) -> None:
    """SQLite: the FTS5 indexes become external-content indexes over views of the
    tables, so they can be checked against the text and rebuilt from it (v1's
    contentless indexes could be neither, and SQLite before 3.41 corrupts an index
    that is ``optimize``d after each of ~1,460 erases). Both backends: the text
    indexes cover a bounded prefix (``INDEX_MAX_CHARS``)."""
    backend.rebuild_text_indexes(conn, TEXT_BODIES, stemmed=False)


# What each table's text index covers, as an SQL template over a row prefix.
TEXT_BODIES = (
    (
        "cm_versions",
        "coalesce({r}index_text, {r}subject || ' ' || replace({r}predicate, '_', ' ') || ' ' || {r}object)",
    ),
    ("cm_episodes", "{r}text"),
)


def reset_fts(conn: Connection, fts: str) -> None:
    """Empty an FTS5 index without parsing it: clear its shadow tables and write an
    empty structure record (cookie, no levels, no segments, write counter 0).
    An index whose structure SQLite can no longer read ("vtable constructor
    failed") cannot be queried, rebuilt or dropped until this is done."""
    conn.exec_driver_sql(f"DELETE FROM {fts}_data")
    conn.exec_driver_sql(f"DELETE FROM {fts}_idx")
    conn.exec_driver_sql(f"INSERT INTO {fts}_data(id, block) VALUES (10, X'00000000000000')")


def _v3(conn: Connection, backend: type[Backend]) -> None:
    """The text indexes stem English (issue #13): FTS5 ``porter`` in front of
    ``unicode61`` on SQLite, the ``english`` text search configuration on
    PostgreSQL (both with the same bounded body as v2), so "lived" finds "lives".
    The indexes are rebuilt from the tables' text; v2's erase-safety is kept (the
    same external-content layout, triggers and rebuild path)."""
    backend.rebuild_text_indexes(conn, TEXT_BODIES, stemmed=True)


def _v4(conn: Connection, backend: type[Backend]) -> None:
    """The served-read log (issue #16): ``cm_reads`` and ``cm_read_items``. A store
    created at this version already has them (``_v1`` creates the whole metadata),
    so only a missing table is created (looked up in the schema written to, not
    the search path)."""
    schema = backend.current_schema(conn)
    for table in (read_log, read_items):
        if not conn.dialect.has_table(conn, table.name, schema=schema):
            table.create(conn, checkfirst=False)


def _v5(conn: Connection, backend: type[Backend]) -> None:
    """Slot keys became injective (separator characters inside a key part are
    escaped, issue #14 C); rows an older version keyed with the plain join move to
    their new keys. Ordinary text has the same key in both forms, so this touches
    only rows holding the separator characters."""
    rekey_legacy_slots(conn)


def rekey_legacy_slots(conn: Connection) -> int:
    """Move rows keyed by the legacy join to their injective keys; returns how many.

    Only rows whose subject key, predicate or object key holds ``\\x1d`` or
    ``\\x1e`` can differ. Whether a row sits in a single-valued slot or in its
    object's slot is read off the stored key itself (it matches exactly one of
    the two legacy forms); a row matching neither (already re-keyed) is left
    alone, so running this twice changes nothing."""
    cols = (versions.c.subject_key, versions.c.predicate, versions.c.object_key)
    rows = conn.execute(
        select(
            versions.c.tenant,
            versions.c.id,
            versions.c.user_id,
            versions.c.agent_id,
            versions.c.session_id,
            versions.c.slot,
            *cols,
        ).where(or_(*(c.contains(ch, autoescape=True) for c in cols for ch in SPECIAL)))
    ).all()
    changes: list[dict[str, str]] = []
    for r in rows:
        scope = Scope(r.tenant, r.user_id or None, r.agent_id or None, r.session_id or None)
        okey: str | None
        if r.object_key and r.slot == legacy_slot_key(
            scope, r.subject_key, r.predicate, r.object_key
        ):
            okey = r.object_key
        elif r.slot == legacy_slot_key(scope, r.subject_key, r.predicate, None):
            okey = None
        else:
            continue
        new = slot_key(scope, r.subject_key, r.predicate, okey)
        if new != r.slot:
            changes.append({"t": r.tenant, "vid": r.id, "new": new})
    if changes:
        conn.execute(
            update(versions)
            .where(versions.c.tenant == bindparam("t"), versions.c.id == bindparam("vid"))
            .values(slot=bindparam("new")),
            changes,
        )
    return len(changes)


def _v6(conn: Connection, backend: type[Backend]) -> None:
    """Subject-prefix reads (a LangGraph namespace, ``facts(subject_prefix=)``)
    become range scans: an index on the first ``SUBJECT_HEAD`` characters of the
    subject key (``SubjectHead``). A store created at this version has it already
    (``_v1`` creates the whole metadata)."""
    conn.execute(CreateIndex(subject_head_index, if_not_exists=True))


def _v7(conn: Connection, backend: type[Backend]) -> None:
    """PostgreSQL's I1 exclusion constraint leads with a hash of the slot (issue #19:
    its upkeep was most of a batch's insert). The same rule, a cheaper index; the
    constraint is rebuilt over the current versions (the table is locked meanwhile).
    A store created at this version has it already; SQLite has no such constraint."""
    backend.reshape_i1(conn)


def _v8(conn: Connection, backend: type[Backend]) -> None:
    """A transcript reads its tail, not its scope (issue #32): an index on a scope's
    episodes by transaction time (``episodes.latest``). A store created at this
    version has it already (``_v1`` creates the whole metadata)."""
    conn.execute(CreateIndex(episodes_recent_index, if_not_exists=True))


def _v9(conn: Connection, backend: type[Backend]) -> None:
    """A transcript looks up the message ids it is given and its clear markers by
    index, not by a scan of the scope's metadata (issue #32): one partial
    expression index per ``EPISODE_TAGS`` path, over the scope columns and the
    text at the path (``Backend.json_key``: ``json_extract`` on SQLite, ``#>>``
    on PostgreSQL), holding only the episodes that have that key."""
    for name, path in EPISODE_TAGS.items():
        key = backend.json_key(column("metadata"), path)
        expr = key.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})
        conn.exec_driver_sql(
            f"CREATE INDEX IF NOT EXISTS {name} ON cm_episodes "
            f"(tenant, user_id, agent_id, session_id, ({expr})) WHERE ({expr}) IS NOT NULL"
        )


def _v10(conn: Connection, backend: type[Backend]) -> None:
    """The search mirror syncs in time with the writes, not with the store (issue
    #32): an index on a tenant's episodes by transaction time, so its read of the
    episodes recorded since the last sync is a range, not a scan of the tenant. A
    store created at this version has it already (``_v1`` creates the whole
    metadata)."""
    conn.execute(CreateIndex(episodes_recorded_index, if_not_exists=True))


def _v11(conn: Connection, backend: type[Backend]) -> None:
    """A page of a predicate's current facts newest first reads that page (issue #32):
    an index on the current versions by predicate, valid from and recorded at
    descending, then the subject key's head (``newest_index``, ``NEWEST_KEY``), so
    ``Memory.newest_facts`` walks it instead of sorting the predicate's current
    versions. A store created at this version has it already (``_v1`` creates the
    whole metadata)."""
    conn.execute(CreateIndex(newest_index, if_not_exists=True))


def _v12(conn: Connection, backend: type[Backend]) -> None:
    """A batch of writes keeps one subject index, not two (issue #32): ``cm_versions_subject``
    gains ``superseded_at`` after the predicate (``subject_index``), so a subject's (and
    predicate's) current versions are a range of it, and v1's partial
    ``cm_versions_current`` (the same key over the current versions) is dropped. A
    store created at this version gets the new index from ``_v1`` and rebuilds it
    empty here."""
    conn.exec_driver_sql("DROP INDEX IF EXISTS cm_versions_current")
    conn.exec_driver_sql("DROP INDEX IF EXISTS cm_versions_subject")
    conn.execute(CreateIndex(subject_index))


def _v13(conn: Connection, backend: type[Backend]) -> None:
    """A page of one predicate's current versions ordered by an instant in their
    metadata reads that page (issue #32, a CrewAI storage's ``list_records``): one
    partial expression index per ``INSTANT_ORDERS`` entry, over the tenant, the
    instant (``instant_key``) and the subject key's head, holding that predicate's
    current versions only."""
    _instant_order_indexes(conn, backend, history=False)


def _v14(conn: Connection, backend: type[Backend]) -> None:
    """An ``as_of`` page of one predicate ordered by an instant in its metadata reads
    that page too (issue #32, a past view's ``list_records``): beside each
    ``INSTANT_ORDERS`` index (the current versions), the same key over every version
    of that predicate (``history_order``), closed ones too, walked with the
    temporal filter. (A merge of two walks, the current versions' index and one of
    the closed versions, was tried: PostgreSQL sorted every version instead.)"""
    _instant_order_indexes(conn, backend, history=True)


def _instant_order_indexes(conn: Connection, backend: type[Backend], *, history: bool) -> None:
    """One index per ``INSTANT_ORDERS`` entry over (tenant, predicate, the instant,
    the subject key's head), holding that predicate's versions: every one
    (``history``, named by ``history_order``) or the current ones."""
    for name, (predicate, path) in INSTANT_ORDERS.items():
        key, head, held = (
            e.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})
            for e in (
                instant_key(backend, column("metadata"), path),
                SubjectHead(column("subject_key")),
                backend.partial_index_term(column("predicate"), predicate),
            )
        )
        index, kept = (
            (history_order(name), held) if history else (name, f"{held} AND superseded_at IS NULL")
        )
        conn.exec_driver_sql(
            f"CREATE INDEX IF NOT EXISTS {index} ON cm_versions "
            f"(tenant, predicate, ({key}), ({head})) WHERE {kept}"
        )


# The columns holding ids, slot keys and key hashes (ASCII tokens: hex digests, the
# ids ``identity.require_id`` accepts), compared for equality, joined with each
# other and ordered only as tiebreaks: schema v15 has them compared as bytes where
# a database would otherwise use its locale's collation (``Backend.byte_order``).
# Every id column of every table, so a join of two of them compares in one
# collation and each side's index serves it.
BYTE_ORDER_COLUMNS: dict[str, tuple[str, ...]] = {
    "cm_versions": ("id", "fact_id", "slot", "subject_hash", "superseded_by"),
    "cm_episodes": ("id",),
    "cm_sources": ("fact_id", "episode_id"),
    "cm_vectors": ("item_id",),
    "cm_reads": ("id",),
    "cm_read_items": ("read_id", "item_id"),
}


def _v15(conn: Connection, backend: type[Backend]) -> None:
    """A batch of writes compares its keys as bytes (issue #32): the id, slot and key
    hash columns (``BYTE_ORDER_COLUMNS``) use byte order, not the database's
    collation (PostgreSQL: ``COLLATE "C"``; SQLite already compares text as bytes),
    so each of their index entries is placed by ``memcmp``, not the locale's
    ``strcoll``. Their values are ASCII tokens, so an order over them is the one
    SQLite gives and a C or code point collation gave; only a store on a
    linguistic collation sees a tiebreak on mixed-case ids change, to SQLite's."""
    backend.byte_order(conn, BYTE_ORDER_COLUMNS)


def _v16(conn: Connection, backend: type[Backend]) -> None:
    """A new version costs one index entry fewer (issue #32): ``cm_versions_superseded``
    holds the closed versions only (``superseded_index``: partial, ``superseded_at IS
    NOT NULL``), the ones its one read (the versions closed since an instant) can
    return. A store created at this version gets it from ``_v1`` and rebuilds it here."""
    conn.exec_driver_sql("DROP INDEX IF EXISTS cm_versions_superseded")
    conn.execute(CreateIndex(superseded_index))


def _v17(conn: Connection, backend: type[Backend]) -> None:
    """A ``list_namespaces`` page reads indexes only (issue #32): where index keys
    may be long (``Backend.long_index_keys``: SQLite), ``cm_versions_subject_head`` is
    rebuilt holding, after the tenant and the head, the columns a live probe tests
    (``HEAD_COVERS``), and the entries (``entry_term``) get a partial index in head
    order holding every column their walk reads (``ENTRY_COLUMNS``). Elsewhere
    nothing changes."""
    if not backend.long_index_keys:
        return
    head, held = (
        e.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})
        for e in (SubjectHead(column("subject_key")), entry_term(column("valid_from")))
    )
    conn.exec_driver_sql("DROP INDEX IF EXISTS cm_versions_subject_head")
    conn.exec_driver_sql(
        f"CREATE INDEX cm_versions_subject_head ON cm_versions "
        f"(tenant, ({head}), {', '.join(HEAD_COVERS)})"
    )
    conn.exec_driver_sql(
        f"CREATE INDEX IF NOT EXISTS cm_versions_entries ON cm_versions "
        f"(tenant, ({head}), {', '.join(ENTRY_COLUMNS)}) WHERE {held}"
    )


MIGRATIONS: dict[int, Migration] = {
    1: _v1,
    2: _v2,
    3: _v3,
    4: _v4,
    5: _v5,
    6: _v6,
    7: _v7,
    8: _v8,
    9: _v9,
    10: _v10,
    11: _v11,
    12: _v12,
    13: _v13,
    14: _v14,
    15: _v15,
    16: _v16,
    17: _v17,
}


def current_version(conn: Connection, backend: type[Backend]) -> int:
    # only the schema we write to, not the search path
    if not conn.dialect.has_table(conn, "cm_meta", schema=backend.current_schema(conn)):
        return 0
    row = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).first()
    value = row[0] if row else None
    if value is None or not value.isascii() or not value.isdigit() or int(value) < 1:
        # cm_meta and its version row are written in one transaction: a store
        # without the row was damaged (or edited) after it was created
        state = "missing" if row is None else f"unreadable ({value!r})"
        raise CorruptStore(
            f"this store's schema version record (cm_meta 'schema_version') is {state}, so "
            "chronomem cannot tell which migrations it needs. Restore the store from a "
            "backup, or, if you know the chronomem schema version that wrote it, set the "
            "cm_meta row key='schema_version' to that number"
        )
    return int(value)


def migrate(conn: Connection, backend: type[Backend]) -> int:
    """Bring the schema to ``SCHEMA_VERSION``; the caller holds the write lock,
    ``backend.lock_migration`` adds the database's migration lock (PostgreSQL: two
    processes opening a new database at once must not both create it). The steps
    are the database's DDL from ``backend`` (``backends.of(conn)``)."""
    backend.lock_migration(conn)
    have = current_version(conn, backend)
    if have > SCHEMA_VERSION:
        raise SchemaMismatch(
            f"database schema version {have} is newer than this chronomem ({SCHEMA_VERSION}); upgrade chronomem"
        )
    for step in range(have + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[step](conn, backend)
        if step == 1:
            conn.execute(meta.insert().values(key="schema_version", value="1"))
        else:
            conn.execute(
                meta.update().where(meta.c.key == "schema_version").values(value=str(step))
            )
    return SCHEMA_VERSION
