"""PostgreSQL: for when one machine's embedded file is not enough.

Writers take a transaction-scoped advisory lock per slot and read the slot's
current versions ``FOR UPDATE``; invariant I1 is also an exclusion constraint
(see ``schema``)."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    Integer,
    LargeBinary,
    String,
    Text,
    and_,
    any_,
    bindparam,
    case,
    cast,
    create_engine,
    event,
    func,
    literal_column,
    null,
    select,
    text,
    union_all,
)
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSQUERY

from ..errors import ChronomemError, MissingDriver, StoreUnavailable
from ..keycodec import SEP_FIELD, join
from ..schema import INDEX_MAX_CHARS, SafeText, meta, metadata, txclock, versions
from . import pgarrays, pgping, pgpipeline
from .base import UNPREPARED, Backend, Run, _simple_path

if TYPE_CHECKING:
    from ..prepared import ShapedTerms

# PostgreSQL plans the writer's set-wise reads (``slot = ANY(…)``, ``subject_hash =
# ANY(…)``) from table statistics; a table that grew since its last ANALYZE is
# planned as if it were tiny (a scan of every row per read), so each write would
# cost the store's size until autovacuum catches up. The writer analyzes
# ``cm_versions`` itself after every doubling of the rows this process inserted
# (from ANALYZE_FIRST rows on): a bounded number of ANALYZEs, each on a sample.
ANALYZE_FIRST = 2000
# Only the columns the read plans take statistics from are analyzed (what they
# filter, join and order on, and the lexical leg's tsvector): the texts, metadata
# and the expression indexes' statistics were half of each ANALYZE, and no plan
# needs them right after a load (tests/test_pg_analyze_plans). The writer's ANALYZEs
# of a 10k-fact load: 206 -> 115 ms. A column list leaves autovacuum's count of the
# changes since the last ANALYZE as it was, so its full ANALYZE still follows.
ANALYZED_COLUMNS = {
    "cm_versions": ", ".join(
        [
            *(
                c.name
                for c in (
                    versions.c.tenant,
                    versions.c.user_id,
                    versions.c.agent_id,
                    versions.c.session_id,
                    versions.c.id,
                    versions.c.fact_id,
                    versions.c.slot,
                    versions.c.subject_hash,
                    versions.c.predicate,
                    versions.c.valid_from,
                    versions.c.valid_to,
                    versions.c.recorded_at,
                    versions.c.superseded_at,
                    versions.c.closed_reason,
                )
            ),
            "tsv",  # the generated text search column (not in the table's metadata)
        ]
    ),
    "cm_vectors": "tenant, kind, item_id",  # not the vectors (1 kB each)
}
# The text search configuration: 'simple' in schema v1/v2, English stemming since v3
# (the lexical query parses its terms with the same).
TEXT_CONFIG = "simple"
TEXT_CONFIG_STEMMED = "english"
log = logging.getLogger("chronomem.schema")  # migration messages
_inserted: weakref.WeakKeyDictionary[Engine, list[int]] = weakref.WeakKeyDictionary()
_vectors_inserted: weakref.WeakKeyDictionary[Engine, list[int]] = weakref.WeakKeyDictionary()

# PostgreSQL ranks at most this many GIN matches (the most recently recorded):
# ts_rank_cd reads every ranked row's tsvector, so ranking every row that shares
# one common word with the query cost ~0.6 s at 100k facts.
PG_RANK_CANDIDATES = 2000
# GIN's fast-update pending list: rows inserted since its last merge sit in an
# unsorted list that every text search reads whole, and the planner prices an index
# with a long list so high that it scans the table instead (10k facts just after a
# load: a sequential scan of every tsvector, 5-18 ms, against 1 ms once merged). The
# list is bounded to 64 kB (the least PostgreSQL allows; its default is 4 MB, which
# only autovacuum empties): the writer that fills it merges it into the index.
GIN_PENDING_KB = 64
TEXT_INDEX_TABLES = ("cm_versions", "cm_episodes")
# The read log's commits need not wait for the WAL flush (``relax_durability``).
_ASYNC_COMMIT = text("SET LOCAL synchronous_commit = off")

# Inserts: one statement for any number of rows of one tenant (``insert_rows``).
# ARRAYS: a batch's varying text and integer columns go as one binary array each
# (``_array_insert``), not as JSON rows (False: the JSON form alone, to compare).
ARRAYS = True
_SETWISE: dict[tuple[str, tuple[str, ...], tuple[str, ...], bool], tuple[Any, list[Any]]] = {}

# Closings: one statement for any number of versions (arrays of ids, successors
# and reasons zipped by unnest), instead of one Bind/Execute per row.
_CLOSE = text(
    "UPDATE cm_versions SET superseded_at = :tx, superseded_by = u.by, "
    "closed_reason = u.reason "
    "FROM unnest(CAST(:vids AS text[]), CAST(:bys AS text[]), CAST(:reasons AS text[])) "
    "AS u(vid, by, reason) "
    "WHERE cm_versions.tenant = :t AND cm_versions.id = u.vid"
)


# The writer's stamp (``advance_clock``): a new row starts at the write's instant;
# an existing one moves to max(now, last + 1), or for an import's ``at`` to
# max(last, at) (the clock never goes back).
_ADVANCE = text(
    "INSERT INTO cm_txclock (tenant, last_us) VALUES (:tenant, :now) "
    "ON CONFLICT (tenant) DO UPDATE SET last_us = GREATEST(cm_txclock.last_us + 1, :now) "
    "RETURNING last_us, registry_us"
)
_ADVANCE_AT = text(
    "INSERT INTO cm_txclock (tenant, last_us) VALUES (:tenant, :now) "
    "ON CONFLICT (tenant) DO UPDATE SET last_us = CASE WHEN EXCLUDED.last_us > "
    "cm_txclock.last_us THEN EXCLUDED.last_us ELSE cm_txclock.last_us + 1 END, "
    "erased_us = CASE WHEN EXCLUDED.last_us > cm_txclock.last_us "
    "THEN cm_txclock.erased_us ELSE cm_txclock.last_us + 1 END "
    "RETURNING last_us, registry_us"
)

# Invariant I1 as a database constraint: current versions of a slot never overlap in
# valid time. The GiST index behind it leads with a 64-bit hash of the slot: equal
# slots have equal hashes, so the constraint is exactly "same tenant, same slot,
# overlapping interval", but the tree is organised by a well-spread integer instead
# of by btree_gist's variable-length keys (one tenant's rows all share the first
# column). Checking and maintaining it per inserted version cost about half of a
# LangGraph batch's insert in the v1 shape ``(tenant, slot, range)``, measured on
# 3,000 rows into 10k (benchmarks/HISTORY.md, schema v7).
I1_COLUMNS = (
    "hashtextextended(slot, 0) WITH =, tenant WITH =, slot WITH =, "
    "int8range(valid_from, valid_to) WITH &&"
)
I1_COLUMNS_V1 = "tenant WITH =, slot WITH =, int8range(valid_from, valid_to) WITH &&"


def _add_i1(columns: str) -> Any:
    return text(
        f"ALTER TABLE cm_versions ADD CONSTRAINT cm_versions_i1 EXCLUDE USING gist ({columns}) "
        "WHERE (superseded_at IS NULL)"
    )


def _extra_picked(extra: tuple[tuple[str, str], ...], flat: bool, rows: str) -> list[str]:
    """The select list of a set-wise insert's ``extra`` columns (pgvector's
    ``embedding``), read from the alias ``rows``: each cast from its own ``text[]``
    element, or (``flat``) a slice of one ``real[]`` by the row's ordinal ``n``."""
    if not flat:
        return [f"CAST({rows}.{c} AS {t})" for c, t in extra]
    return [
        f"CAST((%(f4_{c})b::real[])[(CAST({rows}.n AS integer) - 1) * %(dim_{c})s + 1 "
        f": CAST({rows}.n AS integer) * %(dim_{c})s] AS {t})"
        for c, t in extra
    ]


def _setwise_insert(
    dialect: Any,
    table: Any,
    cols: tuple[str, ...],
    extra: tuple[tuple[str, str], ...] = (),
    same: tuple[str, ...] = (),
    flat: bool = False,
) -> tuple[Any, list[Any]]:
    """The statement inserting ``cols`` of a JSON array of row objects (typed by the
    table's own row type), and each column's bind processor. Binary columns (a
    vector's bytes) do not go through the JSON: each is one ``bytea[]`` parameter
    (``:bin_<column>``, which psycopg sends in binary), zipped with the JSON rows
    by position; as hex text inside the JSON they doubled its size and the
    server's parsing of it was most of a vector insert. ``extra``: columns the
    table has in the database but not in ``schema`` (pgvector's ``embedding``),
    as (column, SQL type) pairs, only beside a binary column: each one ``text[]``
    parameter (``:text_<column>``, sent in binary: no quoting) zipped with the
    binary arrays, its text read by the type's own input function; their
    processor is None (passed as given). As strings inside the JSON,
    pgvector's literals (2-3 kB each) were most of its text: encoded a second
    time by the client and scanned by the server's JSON parser. ``same``: columns
    holding one value in every row (``_same_columns``), read from one JSON object
    (``:same``, by ``json_populate_record``: the conversion the rows' columns get)
    instead of from each row's. ``flat``: each extra column instead comes from one
    ``real[]`` parameter holding every row's components in row order
    (``:f4_<column>``, built by numpy and sent in binary: ``pgarrays.float4s``), row
    ``n``'s slice of ``:dim_<column>`` components cast to the column's type
    (pgvector's cast of a ``real[]``): no text for the client to format nor for
    the server to read."""
    key = (table.name, cols + tuple(c for c, _ in extra), same, flat)
    hit = _SETWISE.get(key)
    if hit is None:
        types = [table.c[c].type for c in cols]
        binary = [c for c, t in zip(cols, types, strict=True) if isinstance(t, LargeBinary)]
        assert binary or not extra, "extra columns are zipped with a binary column"
        names = ", ".join(cols + tuple(c for c, _ in extra))
        picked = ", ".join(
            [
                *(f"b.{c}" if c in binary else f"s.{c}" if c in same else f"u.{c}" for c in cols),
                *_extra_picked(extra, flat, "b"),
            ]
        )
        rows = f"json_populate_recordset(NULL::{table.name}, CAST(:rows AS json))"
        one = (
            f"json_populate_record(NULL::{table.name}, CAST(:same AS json)) AS s, " if same else ""
        )
        stmt: Any
        if binary:
            # psycopg's own placeholders (run by ``exec_driver_sql``): ``%(…)b`` sends
            # the arrays in binary, where its automatic choice quoted every byte as text
            rows = f"json_populate_recordset(NULL::{table.name}, CAST(%(rows)s AS json))"
            one = one.replace(":same", "%(same)s")
            arrays = ", ".join(
                [
                    *(f"%(bin_{c})b::bytea[]" for c in binary),
                    *(() if flat else (f"%(text_{c})b::text[]" for c, _ in extra)),
                ]
            )
            zipped = ", ".join([*binary, *(() if flat else (c for c, _ in extra))])
            stmt = (
                f"INSERT INTO {table.name} (tenant, {names}) SELECT k.tenant, {picked} "
                f"FROM {txclock.name} AS k, {one}ROWS FROM ({rows}) WITH ORDINALITY AS u, "
                f"unnest({arrays}) WITH ORDINALITY AS b({zipped}, n) "
                "WHERE k.tenant = %(tenant)s AND b.n = u.ordinality"
            )
        else:
            stmt = text(
                f"INSERT INTO {table.name} (tenant, {names}) SELECT k.tenant, {picked} "
                f"FROM {txclock.name} AS k, {one}{rows} AS u WHERE k.tenant = :tenant"
            )
        # binary columns are passed as bytes, outside the JSON: no processor
        procs = [
            _BINARY if isinstance(t, LargeBinary) else t.bind_processor(dialect) for t in types
        ] + [None] * len(extra)
        hit = _SETWISE[key] = (stmt, procs)
    return hit


# ``_setwise_insert``'s marker for a binary column (its own array parameter).
_BINARY: Any = object()

# Columns sent as arrays (``_array_insert``): the SQL element type of a column type,
# and the Python type every value (or None) must have to be sent so.
_ARRAY_KINDS: dict[tuple[str, str], tuple[str, type] | None] = {}
_INT8 = (-(2**63), 2**63 - 1)
_INT4 = (-(2**31), 2**31 - 1)
_RANGES = {"bigint": _INT8, "integer": _INT4}


def _array_kind(table: Any, name: str) -> tuple[str, type] | None:
    """How column ``name`` of ``table`` goes as an array (``_array_insert``): its
    element type and the values' Python type; None: not so (a float)."""
    key = (table.name, name)
    if key not in _ARRAY_KINDS:
        t = table.c[name].type
        kind: tuple[str, type] | None = None
        if isinstance(t, BigInteger):
            kind = ("bigint", int)
        elif isinstance(t, Integer):
            kind = ("integer", int)
        elif isinstance(t, (String, SafeText)):  # Text is a String
            kind = ("text", str)
        elif isinstance(t, LargeBinary):  # a vector's bytes
            kind = ("bytea", bytes)
        _ARRAY_KINDS[key] = kind
    return _ARRAY_KINDS[key]


def _column_arrays(
    table: Any, cols: Sequence[str], rows: list[dict[str, Any]], procs: Mapping[str, Any]
) -> tuple[tuple[str, ...], dict[str, list[Any]]] | None:
    """Each column of ``cols`` as one list of its values in row order, each value as
    the column's bind processing gives it (``SafeText``'s escaping, applied only
    where a value holds a backslash or a NUL: otherwise it changes nothing), and
    the columns' element types; None when some column cannot go so (a type
    other than text, an integer or bytes, a value not of the column's Python type,
    an integer outside the column's range): the rows then go as JSON, as before."""
    kinds: list[str] = []
    out: dict[str, list[Any]] = {}
    for c in cols:
        kind = _array_kind(table, c)
        if kind is None:
            return None
        sql, py = kind
        values = list(map(itemgetter(c), rows))
        present = [v for v in values if v is not None]
        if not present or set(map(type, present)) != {py}:
            return None
        proc = procs[c]
        if py is int:
            low, high = _RANGES[sql]
            if min(present) < low or max(present) > high:
                return None
        elif py is bytes:
            pass  # as given (no bind processing: ``_BINARY``)
        elif proc is not None:
            if not isinstance(table.c[c].type, SafeText):
                return None  # a processor other than the escaping: never expected
            joined = "".join(present)
            if "\\" in joined or "\x00" in joined:
                values = [proc(v) for v in values]
        kinds.append(sql)
        out[c] = values
    return tuple(kinds), out


_ARRAY_INSERTS: dict[tuple[Any, ...], str] = {}


def _array_insert(
    table: Any,
    cols: tuple[str, ...],
    same: tuple[str, ...],
    each: tuple[str, ...],
    kinds: tuple[str, ...],
    extra: tuple[tuple[str, str], ...] = (),
    flat: bool = False,
) -> str:
    """``insert_rows``'s statement with each varying column (``each``) as one array
    parameter (``%(a_<column>)b``, sent in binary: psycopg writes each element's
    bytes with its length, no quoting, no JSON for the client to encode nor for the
    server to parse), the arrays zipped by ``unnest`` in row order; the columns
    alike in every row (``same``) from one JSON object, as in ``_setwise_insert``.
    Each array is read as its element type (``text``, ``bigint``, ``integer``,
    ``bytea``) and stored by the insert's own assignment to the column (a
    ``varchar(n)`` too long fails as the JSON form's conversion does). ``extra``
    and ``flat``: pgvector's ``embedding``, as in ``_setwise_insert`` (each extra
    column one ``text[]`` zipped with the others, or a slice of one ``real[]`` by
    the row's ordinal). Driver SQL (psycopg's placeholders)."""
    key = (table.name, cols, same, kinds, extra, flat)
    hit = _ARRAY_INSERTS.get(key)
    if hit is None:
        names = ", ".join(cols + tuple(c for c, _ in extra))
        picked = ", ".join(
            [
                *(f"s.{c}" if c in same else f"u.{c}" for c in cols),
                *_extra_picked(extra, flat, "u"),
            ]
        )
        arrays = ", ".join(
            [
                *(f"%(a_{c})b::{k}[]" for c, k in zip(each, kinds, strict=True)),
                *(() if flat else (f"%(text_{c})b::text[]" for c, _ in extra)),
            ]
        )
        aliases = [*each, *(("n",) if flat else (c for c, _ in extra))]
        one = (
            f"json_populate_record(NULL::{table.name}, CAST(%(same)s AS json)) AS s, "
            if same
            else ""
        )
        ordinal = " WITH ORDINALITY" if flat else ""
        hit = _ARRAY_INSERTS[key] = (
            f"INSERT INTO {table.name} (tenant, {names}) SELECT k.tenant, {picked} "
            f"FROM {txclock.name} AS k, {one}unnest({arrays}){ordinal} "
            f"AS u({', '.join(aliases)}) WHERE k.tenant = %(tenant)s"
        )
    return hit


_ELEMENTS = {"bigint": pgarrays.INT8, "integer": pgarrays.INT4}


def _as_array(conn: Connection, kind: str, values: list[Any]) -> Any:
    """A varying column's values (``_column_arrays``: ``kind`` its element type) as
    the array parameter ``_array_insert`` sends (``pgarrays``)."""
    if kind == "text":
        return pgarrays.texts(conn, values)
    if kind == "bytea":
        return pgarrays.blobs(conn, values)
    return pgarrays.integers(conn, values, _ELEMENTS[kind])


_ESCAPES_ONLY: dict[tuple[str, tuple[str, ...]], bool] = {}


def _escapes_only(table: Any, cols: tuple[str, ...], converted: list[tuple[str, Any]]) -> bool:
    """Whether the only processing of ``cols`` on the way in is ``SafeText``'s
    escaping (which leaves text without a backslash or a NUL as it is)."""
    key = (table.name, cols)
    hit = _ESCAPES_ONLY.get(key)
    if hit is None:
        hit = _ESCAPES_ONLY[key] = all(isinstance(table.c[c].type, SafeText) for c, _ in converted)
    return hit


def _same_columns(rows: list[dict[str, Any]], cols: Sequence[str]) -> tuple[str, ...]:
    """The columns of ``cols`` holding one value, of one type, in every row of a
    batch of two or more (a batch's tenant's scope, its transaction time, the
    NULLs of a new version, its vectors' embedder): ``insert_rows`` sends each
    such value once instead of once per row. In a batch of 1,000 new versions 11
    of 23 columns are: they were a third of the rows' JSON, which the client
    encoded and the server parsed for every row. Compared in C (``list.count``,
    then the values' types: ``1``, ``1.0`` and ``True`` are equal, not the same
    JSON)."""
    if len(rows) < 2:
        return ()
    out = []
    for c in cols:
        values = list(map(itemgetter(c), rows))
        if values.count(values[0]) == len(values) and len(set(map(type, values))) == 1:
            out.append(c)
    return tuple(out)


def _same_object(first: dict[str, Any], same: Sequence[str], procs: Mapping[str, Any]) -> str:
    """The JSON object of the columns holding one value in every row (``_same_columns``),
    each value processed as a row's would be."""
    return json.dumps(
        {c: first[c] if procs[c] is None else procs[c](first[c]) for c in same},
        ensure_ascii=False,
    )


def _inserted_all(expected: int, cursor: Any) -> None:
    """A queued ``insert_rows`` inserted every row (``pgpipeline``'s check)."""
    if cursor.rowcount != expected:
        raise ChronomemError(
            f"internal error: a write's insert stored {cursor.rowcount} of {expected} rows"
        )


class _QueuedVectors:
    """A vector insert ``insert_rows`` queued (``pgpipeline``): what it needs to be
    rebuilt with pgvector's ``embedding`` column (``embed_in_queued_insert``): its
    statement's form with extra columns (``with_extra(extra, flat)``), its
    parameters and rows."""

    def __init__(
        self,
        item: Any,
        with_extra: Callable[[tuple[tuple[str, str], ...], bool], str],
        params: dict[str, Any],
        rows: list[dict[str, Any]],
    ) -> None:
        self.item, self.with_extra = item, with_extra
        self.params, self.rows = params, rows


def _setwise_insert_with(
    conn: Connection, table: Any, cols: tuple[str, ...], same: tuple[str, ...]
) -> Callable[[tuple[tuple[str, str], ...], bool], str]:
    """``_setwise_insert``'s binary form of these columns, with extra columns."""
    return lambda extra, flat: _setwise_insert(conn.dialect, table, cols, extra, same, flat=flat)[0]


def _array_insert_with(
    table: Any,
    cols: tuple[str, ...],
    same: tuple[str, ...],
    each: tuple[str, ...],
    kinds: tuple[str, ...],
) -> Callable[[tuple[tuple[str, str], ...], bool], str]:
    """``_array_insert``'s form of these columns, with extra columns."""
    return lambda extra, flat: _array_insert(table, cols, same, each, kinds, extra, flat)


# pgvector's column, set inside the vector rows' insert (``embed_in_queued_insert``)
_EMBEDDING = (("embedding", "vector"),)


def embed_in_queued_insert(
    conn: Connection,
    tenant: str,
    kind: str,
    ids: Sequence[str],
    embeddings: Sequence[str] | None = None,
    *,
    floats: Any = None,
) -> bool:
    """Set pgvector's ``embedding`` of the vector rows (``tenant``, ``kind``, ``ids``)
    inside their insert, when that insert is the last statement queued
    (``insert_rows`` in ``pgpipeline.deferring``) and holds exactly those rows, in
    that order: the rows are then stored once, with their embedding (``embeddings``:
    vector literals, read by the column's own input function, as the ``UPDATE``
    that set it after the insert read them; or ``floats``: the float32 components
    those literals are read as, one row per id, ``pgvector.stored_floats``, sent
    as one binary ``real[]``). True when done; False (nothing done)
    otherwise, and the caller updates the inserted rows. The update wrote every
    vector row twice: a second heap tuple, a second entry in the primary key
    (the embedding is indexed, so not a HOT update) and a dead tuple to vacuum."""
    queued = pgpipeline.noted(conn)
    if (
        not isinstance(queued, _QueuedVectors)
        or not pgpipeline.queueing(conn)
        or pgpipeline.last_queued(conn) is not queued.item
        or len(ids) != len(queued.rows)
        or any(
            r["tenant"] != tenant or r["kind"] != kind or r["item_id"] != i
            for r, i in zip(queued.rows, ids, strict=True)
        )
    ):
        return False
    params: dict[str, Any]
    if floats is not None:
        if len(floats) != len(ids):
            return False
        stmt = queued.with_extra(_EMBEDDING, True)
        params = {
            **queued.params,
            "f4_embedding": pgarrays.float4s(conn, floats),
            "dim_embedding": int(floats.shape[1]),
        }
    else:
        assert embeddings is not None
        stmt = queued.with_extra(_EMBEDDING, False)
        params = {**queued.params, "text_embedding": list(embeddings)}
    check = functools.partial(_inserted_all, len(ids))
    pgpipeline.replace_last(conn, (pgpipeline.driver_sql(conn, stmt), params, check))
    pgpipeline.note(conn, None)
    return True


def _lexical(
    conn: Connection,
    tbl: Any,
    terms: Sequence[str],
    filters: ShapedTerms,
    n: int,
    tiebreak: list[Any],
    run: Run,
) -> list[tuple[str, float]]:
    """``ts_rank_cd``'s top ``n`` over a candidate set cut by that ranking, without
    computing it for every match. For chronomem's queries (the terms OR'ed, every
    position weighted alike) ``ts_rank_cd`` is 0.1 per position of a query term in
    the row. So:

    * ``two``: the rows holding at least two of the terms (``lex_two``, the pairs
      AND'ed: GIN intersects the posting lists, so a common word's rows are not
      read), at most ``PG_RANK_CANDIDATES`` (the most recently recorded). When
      there are ``n`` of them, they are the candidates.
    * Otherwise (and for a one-term query) the other matches are added, at most
      ``PG_RANK_CANDIDATES`` (the most recently recorded): those holding one term
      at several positions (``ts_rank``, which weighs a term's repeats, exceeds
      ``ts_rank`` of the row stripped of positions), and the first ``n`` holding a
      single position (rank 0.1, the least: they tie, and the ranking's tiebreak,
      content hash then occurrence and id, orders them).

    With fewer than ``n`` rows holding two terms this is exactly the ranking of
    every match; with ``n`` or more, a row holding one term several times (and no
    second term) is not a candidate. Before, the candidates were the 2,000 most
    recently recorded matches, ranked: at 1M facts a word in every fifth fact
    filled them with rows holding that word alone, and the rows holding every
    term of the query, recorded earlier, were not ranked at all. ``ts_rank_cd``
    costs ~1.7 µs a row, ``ts_rank`` ~0.1 µs. Built and compiled once per shape of
    the filters (``run``)."""
    name = tbl.name
    pairs = len(set(terms)) > 1

    def build() -> Any:
        def tsq(param: str) -> Any:
            return func.to_tsquery(TEXT_CONFIG_STEMMED, bindparam(param, type_=String()))

        def once(param: str) -> Any:  # parsed once per statement, not once per row
            return select(tsq(param)).scalar_subquery()

        tsv: Any = literal_column(f"{name}.tsv")
        ties = [f"t{i}" for i in range(len(tiebreak))]
        lex_n = bindparam("lex_n", type_=Integer())
        q_any = once("lex_match")

        def recent(*where: Any) -> Any:
            return (
                select(
                    tbl.c.id,
                    tsv.label("tsv"),
                    *[c.label(t) for c, t in zip(tiebreak, ties, strict=True)],
                )
                .where(*where, *filters.terms)
                .order_by(tbl.c.recorded_at.desc(), tbl.c.id)
                .limit(PG_RANK_CANDIDATES)
            )

        parts = []
        gate: list[Any] = []
        count_two: Any = 0
        if pairs:
            q_two = _pairs_query()
            two = recent(tsv.op("@@")(q_two)).cte("two")
            parts.append(select(two))
            count_two = select(func.count()).select_from(two).scalar_subquery()
            # the other matches only when fewer than n rows hold two terms (a
            # one-time filter: the scan does not run otherwise); no pair (the
            # terms share one lexeme) holds for no row
            gate = [~func.coalesce(tsv.op("@@")(q_two), False), count_two < lex_n]
        other = recent(tsv.op("@@")(tsq("lex_match")), *gate).cte("other")
        o: Any = other.c
        # whether a row holds a query term at several positions, tested once per row
        # (the repeats and the single-position rows both need it)
        several = func.ts_rank(o.tsv, q_any) > func.ts_rank(func.strip(o.tsv), q_any)
        flagged = select(other, several.label("several")).cte("flagged")
        u: Any = flagged.c
        row = [u.id, u.tsv, *[u[t] for t in ties]]
        repeats = select(*row).where(u.several).cte("repeats")
        parts.append(select(repeats))
        held = count_two + select(func.count()).select_from(repeats).scalar_subquery()
        single = (
            select(*row)
            .where(~u.several, held < lex_n)
            .order_by(*[u[t] for t in ties])
            .limit(lex_n)
        )
        cand = union_all(*parts, single).subquery("cand")
        rank = func.ts_rank_cd(cand.c.tsv, q_any)
        return (
            select(cand.c.id, rank.label("r"))
            .order_by(rank.desc(), *[cand.c[t] for t in ties])
            .limit(lex_n)
        )

    lexemes = list(dict.fromkeys(_pg_lexeme(t) for t in terms))
    params = {**filters.params, "lex_match": " | ".join(lexemes), "lex_n": n}
    if pairs:
        params["lex_terms"] = lexemes
    key = ("tsv", name, pairs, tuple(c.name for c in tiebreak), filters.shape)
    return [(i, float(r)) for i, r in run(conn, key, build, params)]


def _pairs_query() -> Any:
    """The tsquery "two of the terms": every pair of two *different* lexemes of
    the terms (``lex_terms``, each parsed as ``to_tsquery`` parses it), OR'ed,
    built once per statement; NULL when the terms make fewer than two. Pairs of the
    terms as given held the same lexeme twice when two terms stem alike ("live",
    "lives") or one is a stopword: such a pair matched every row holding one
    word (283k rows of 1M for "live"), which filled the candidates with rows of
    rank 0.1 and read them all."""
    arr = bindparam("lex_terms", type_=ARRAY(Text))
    term = func.unnest(arr).column_valued("term")
    one = cast(func.to_tsquery(TEXT_CONFIG_STEMMED, term), Text)
    lex = select(one.label("q")).distinct().subquery("lex")
    a, b = lex.alias("a"), lex.alias("b")
    pair = "(" + a.c.q + ") & (" + b.c.q + ")"
    return (
        select(cast(func.string_agg(pair, " | "), TSQUERY))
        .select_from(a.join(b, a.c.q < b.c.q))
        .where(a.c.q != "", b.c.q != "")
        .scalar_subquery()
    )


def _gin_index(table: str) -> Any:
    return text(
        f"CREATE INDEX {table}_tsv ON {table} USING gin (tsv) "
        f"WITH (gin_pending_list_limit = {GIN_PENDING_KB})"
    )


def _analyze_on_doubling(
    conn: Connection, counts: weakref.WeakKeyDictionary[Engine, list[int]], table: str, n: int
) -> None:
    """ANALYZE ``table`` (its ANALYZED_COLUMNS) once this process has inserted
    ANALYZE_FIRST rows into it, and again after every doubling of that count
    (``counts``: per engine, rows inserted and the next threshold)."""
    if n <= 0:
        return
    state = counts.setdefault(conn.engine, [0, ANALYZE_FIRST])
    state[0] += n
    if state[0] >= state[1]:
        state[1] = state[0] * 2
        conn.exec_driver_sql(f"ANALYZE {table} ({ANALYZED_COLUMNS[table]})")


def _pg_lexeme(term: str) -> str:
    return "'" + term.replace("'", "''").replace("\\", "\\\\") + "'"


def _extension(conn: Connection, name: str) -> bool:
    """Create the extension if the server has it; True when it is installed."""
    have = conn.execute(
        text("SELECT 1 FROM pg_available_extensions WHERE name = :n"), {"n": name}
    ).scalar()
    if not have:
        return False
    conn.execute(text(f"CREATE EXTENSION IF NOT EXISTS {name}"))
    return True


# A table's columns of the given names: name, type (with its length) and collation
# (``byte_order``), in the schema written to (the search path's first table).
_COLUMN_COLLATIONS = text(
    "SELECT a.attname, format_type(a.atttypid, a.atttypmod), c.collname "
    "FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation "
    "WHERE a.attrelid = CAST(:t AS regclass) AND a.attname = ANY(CAST(:names AS text[])) "
    "AND NOT a.attisdropped ORDER BY a.attnum"
)
_RELTUPLES = text("SELECT reltuples FROM pg_class WHERE oid = CAST(:t AS regclass)")
READ_LOG_LOCK = "read log"  # not a slot key (those are hex digests): its own lock
# Tables an erasure deletes from: vacuumed and re-analysed after it.
ERASED_TABLES = ("cm_versions", "cm_episodes", "cm_vectors", "cm_sources", "cm_reads",
                 "cm_read_items", "cm_predicates", "cm_txclock")  # fmt: skip


def lock_key(tenant: str, slot: str) -> str:
    """The advisory-lock name of a slot: an injective join of tenant and slot key."""
    return join((tenant, slot), SEP_FIELD)


SLOT_LOCK_BUCKETS = 128
# Advisory locks are database-wide; the tables are per schema. Seeding the lock's
# hash with the store's clock table (its OID) keeps two stores in two schemas of one
# database (the same tenant in each) off each other's locks: their writers do not
# serialize on one clock row, so a transaction of several writes (an import) in one
# could otherwise wait for a bucket the other holds while holding one it wants.
_LOCK_SEED = "CAST(CAST(CAST('cm_txclock' AS regclass) AS oid) AS bigint)"


# The slot locks of a write: its buckets' advisory locks, in sorted order (no deadlock
# between writers of overlapping slot sets), in one statement.
_LOCK_SLOTS = text(
    f"SELECT pg_advisory_xact_lock(hashtextextended(k, {_LOCK_SEED})) "
    "FROM unnest(CAST(:keys AS text[])) AS k ORDER BY k"
)
# A write's slots' current versions, locked (``begin_write``; the writer's ``_load``).
_LOAD_SLOTS = (
    select(versions)
    .where(
        versions.c.tenant == bindparam("tenant"),
        versions.c.slot == any_(bindparam("slots", type_=ARRAY(Text))),
        versions.c.superseded_at.is_(None),
    )
    .with_for_update()
)
_LOAD_COLUMNS = tuple(c.name for c in _LOAD_SLOTS.selected_columns)
# the same rows without row locks (``slot_rows``): one text array parameter
_SLOT_ROWS = select(versions).where(
    versions.c.tenant == bindparam("tenant"),
    versions.c.slot == any_(bindparam("slots", type_=ARRAY(Text))),
    versions.c.superseded_at.is_(None),
)


# The live slots of some subjects in one scope, by subject hash: what a write that
# ends a subject's other facts or every value of a predicate reads to find its
# slots (the writer's ``_Found``), sent with ``begin_write``'s statements.
_LIVE_SLOTS = select(versions.c.subject_key, versions.c.slot, versions.c.predicate).where(
    versions.c.tenant == bindparam("tenant"),
    versions.c.user_id == bindparam("user_id"),
    versions.c.agent_id == bindparam("agent_id"),
    versions.c.session_id == bindparam("session_id"),
    versions.c.subject_hash == any_(bindparam("hashes", type_=ARRAY(Text))),
    versions.c.superseded_at.is_(None),
)


def _slot_locks(tenant: str, slots: Sequence[str]) -> list[str]:
    # each bucket's key made once (at most SLOT_LOCK_BUCKETS), not once per slot
    return sorted({lock_key(tenant, b) for b in {slot_bucket(s) for s in slots}})


_PROCESSORS: dict[tuple[int, type], tuple[tuple[int, Any], ...]] = {}


def _load_processors(dialect: Any, stmt: Any = _LOAD_SLOTS) -> tuple[tuple[int, Any], ...]:
    """The result processors of the columns of ``stmt`` (``_LOAD_SLOTS``,
    ``_LIVE_SLOTS``: module constants) that have one (``SafeText``), per dialect class."""
    hit = _PROCESSORS.get((id(stmt), type(dialect)))
    if hit is None:
        out = []
        for i, c in enumerate(stmt.selected_columns):
            proc = c.type.dialect_impl(dialect).result_processor(dialect, None)
            if proc is not None:
                out.append((i, proc))
        hit = _PROCESSORS[(id(stmt), type(dialect))] = tuple(out)
    return hit


def _processed(rows: Sequence[Any], procs: tuple[tuple[int, Any], ...]) -> list[tuple[Any, ...]]:
    """``rows`` as tuples, each value converted by its column's processor."""
    if not procs:
        return [tuple(r) for r in rows]
    out: list[tuple[Any, ...]] = []
    for r in rows:
        values = list(r)
        for i, proc in procs:
            values[i] = proc(values[i])
        out.append(tuple(values))
    return out


# the pooled DBAPI connection's info: the statements ``fetch_prepared`` prepared on it
_PREPARED_HERE = "chronomem.prepared_here"


def _unprepared(cursor: Any, statement: str, parameters: Any, context: Any) -> bool:
    """Run a statement marked ``backends.base.UNPREPARED`` with psycopg's ``prepare=False``
    (True: run here); any other as SQLAlchemy would (False)."""
    if context is None or not context.execution_options.get(UNPREPARED):
        return False
    cursor.execute(statement, parameters, prepare=False)
    return True


def slot_bucket(slot: str) -> str:
    """The lock a slot's writers take: one of ``SLOT_LOCK_BUCKETS`` per tenant, by a
    stable hash of the slot key (the same in every process; not slot-key shaped)."""
    digest = hashlib.blake2b(slot.encode("utf-8"), digest_size=8).digest()
    return f"slots/{int.from_bytes(digest, 'big') % SLOT_LOCK_BUCKETS}"


class PostgresBackend(Backend):
    name = "postgresql"
    dialect = pg_dialect
    failed_statement_aborts = True
    text_as_given = False
    long_index_keys = False

    def __init__(self, url: str):
        if url.startswith("postgres://"):
            url = "postgresql://" + url[len("postgres://") :]
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url[len("postgresql://") :]
        try:
            # pinged at checkout only after sitting idle (pgping), not every time
            engine = create_engine(url, pool_size=8, max_overflow=16)
        except ImportError as exc:
            raise MissingDriver(
                f"PostgreSQL URLs need the psycopg driver ({exc.name or exc}): "
                "pip install 'chronomem[postgres]'"
            ) from exc
        super().__init__(engine)
        pgping.install(engine)
        pgpipeline.install(engine)  # queued write statements go ahead of any other
        event.listen(engine, "do_execute", _unprepared)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """``Backend.write``, whose end sends the statements the writer queued
        (``pgpipeline.deferring``: closes, inserts) together with the ``COMMIT``,
        in one round trip, and whose ``BEGIN`` goes out with its first statements
        (``pgpipeline.begun_by_queue``): no round trip of its own."""
        with (
            self._guarded(),
            self._connect_write() as conn,
            pgpipeline.sent_at_commit(conn),
            pgpipeline.begun_by_queue(conn),
            conn.begin(),
            pgpipeline.closed_on_error(conn),
        ):
            yield conn
            pgpipeline.commit(conn)

    def lock_slots(self, conn: Connection, tenant: str, slots: Sequence[str]) -> None:
        # One statement, locks taken in sorted order (no deadlock between writers of
        # overlapping slot sets). Writers already serialize per tenant on the clock row;
        # these guard the slots against any writer that does not (maintenance, imports).
        # Slots share SLOT_LOCK_BUCKETS locks per tenant: one lock per slot made a batch
        # of thousands of slots run out of the server's shared lock table ("out of shared
        # memory", max_locks_per_transaction); two slots in one bucket only wait longer.
        # In a writer's transaction (stamped, its queue sure to go out with its next
        # statement: ``pgpipeline.queues_locks``) the locks are queued: they go to the
        # server with the slots' load, in its round trip, and the load still runs
        # (and takes its snapshot) after them. Elsewhere they are taken at once.
        if not slots:
            return
        keys = {"keys": pgarrays.texts(conn, _slot_locks(tenant, slots))}
        if pgpipeline.queues_locks(conn):
            pgpipeline.enqueue(conn, _LOCK_SLOTS, keys)
        else:
            conn.execute(_LOCK_SLOTS, keys)

    @contextmanager
    def statement_read(self) -> Iterator[Connection]:
        """Autocommit: under read committed each statement of a read transaction
        sees its own snapshot anyway, so a search's statements lose nothing outside
        one, and save its ``BEGIN`` and ``COMMIT`` round trips. A failed statement
        aborts only itself, so a search leg needs no savepoint (two more round
        trips a leg) to keep a failure its own. Settings a statement depends on
        are session settings (``retrieval.pgvector``: set once per connection)."""
        conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        with self._guarded(), conn, conn.begin():
            yield conn

    @contextmanager
    def point_read(
        self, *, on_end: Callable[[Connection], None] | None = None
    ) -> Iterator[Connection]:
        """Autocommit, as ``statement_read``: a point read's one statement sees one
        snapshot by itself (as it would in a read committed transaction), so it
        goes out alone, without its ``BEGIN`` and ``COMMIT`` round trips (a
        LangGraph ``get``, or the read a ``put`` plans against: one round trip,
        not three). With ``on_end`` (a logged read whose instant lookup must run
        in the read's transaction) a read transaction, as before."""
        if on_end is not None:
            with super().point_read(on_end=on_end) as conn:
                yield conn
            return
        with self.statement_read() as conn:
            yield conn

    @classmethod
    @contextmanager
    def transaction_block(cls, conn: Connection) -> Iterator[None]:
        """On an autocommit connection (``statement_read``), psycopg's own
        transaction block (``BEGIN`` … ``COMMIT``, rolled back on an error)."""
        if not cls.statement_at_a_time(conn):
            yield
            return
        with conn.connection.driver_connection.transaction():  # type: ignore[union-attr]
            yield

    @contextmanager
    def snapshot_read(self) -> Iterator[Connection]:
        # read committed gives each statement its own snapshot: an export's counts
        # and rows could then disagree under concurrent writes
        snap = self.engine.connect().execution_options(isolation_level="REPEATABLE READ")
        with self._guarded(), snap as conn, conn.begin():
            yield conn

    @contextmanager
    def walk_read(self) -> Iterator[Connection]:
        # The planner multiplies the selectivities of an index entry's conditions
        # (range, predicate, scope, current, valid at every instant) into a handful of
        # rows, so a LIMIT looks like it needs the whole range: it reads and probes
        # every entry, then sorts. Without sorts it walks the head index in order (and
        # without JIT: the sorts' disabling cost would make it compile the statement).
        with self.read() as conn:
            conn.exec_driver_sql(
                "SELECT set_config('enable_sort', 'off', true), set_config('jit', 'off', true)"
            )
            yield conn

    @classmethod
    def lock_read_log(cls, conn: Connection, tenants: Sequence[str], *, erasing: bool) -> None:
        # Without it (issue #31 item 7) a batch written while another process erased
        # an item it served checked the item present (the erase had not committed),
        # and the erase's pass over the log could not see the uncommitted batch.
        if not tenants:
            return
        fn = "pg_advisory_xact_lock" if erasing else "pg_advisory_xact_lock_shared"
        conn.execute(
            text(
                f"SELECT {fn}(hashtextextended(k, {_LOCK_SEED})) FROM unnest(CAST(:keys AS text[])) AS k ORDER BY k"
            ),
            {"keys": sorted({lock_key(t, READ_LOG_LOCK) for t in tenants})},
        )

    def translate_error(self, exc: BaseException, *, connecting: bool) -> ChronomemError | None:
        import psycopg

        if connecting and isinstance(exc, psycopg.OperationalError):
            u = self.engine.url
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return StoreUnavailable(
                f"cannot connect to PostgreSQL at {u.host or 'localhost'}:{u.port or 5432} "
                f"(database {u.database!r}, user {u.username!r}): {reason}. Check the URL's "
                "host, port, user and database, and that the server is running and reachable."
            )
        return None

    @property
    def for_update(self) -> bool:
        return True

    def after_erase(self, conn: Connection) -> None:
        # Dead tuples keep erased text on disk until vacuum; see maintenance.
        pass

    def maintenance_after_erase(self) -> None:
        # VACUUM removes the dead tuples (the rows' text stays in the pages' free
        # space until reused: see SECURITY.md); ANALYZE rewrites the planner
        # statistics (pg_stats most-common values, histograms, most-common lexemes)
        # from the remaining rows, so an erased value does not outlive its row there.
        # The read log (cm_reads, cm_read_items) too: its statistics held erased
        # queries and ids. ANALYZE of a table the erase emptied keeps the old
        # statistics (it has no sample to build new ones from): see _restat_empty.
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for table in ERASED_TABLES:
                conn.execute(text(f"VACUUM (ANALYZE) {table}"))
                # VACUUM counted the live rows (pg_class, a catalog read: no tenant data)
                n = conn.execute(_RELTUPLES, {"t": table}).scalar()
                if n is not None and n <= 0:
                    self._restat_empty(table)
                    conn.execute(text(f"VACUUM {table}"))

    def _restat_empty(self, table: str) -> None:
        """Replace an empty table's statistics: ANALYZE one placeholder row inserted
        and deleted in the same transaction (ANALYZE samples its own transaction's
        rows), so the statistics describe that row instead of erased ones. Needs
        only the table owner's rights (deleting from pg_statistic needs a
        superuser); the caller vacuums the dead placeholder away."""
        cols = {}
        for c in metadata.tables[table].columns:
            if c.nullable or c.server_default is not None:
                continue
            typ = getattr(c.type, "impl", c.type)  # SafeText: a decorated Text
            kind = typ.python_type
            cols[c.name] = {str: "", int: 0, float: 0.0, bytes: b""}[kind]
        ins = metadata.tables[table].insert().values(**cols)
        with self.engine.begin() as conn:
            conn.execute(ins)
            conn.execute(text(f"ANALYZE {table}"))
            conn.execute(
                metadata.tables[table].delete().where(metadata.tables[table].c.tenant == "")
            )

    # -- the dialect's write SQL -------------------------------------------------------
    @classmethod
    def advance_clock(
        cls, conn: Connection, tenant: str, now_us: int, at: int | None
    ) -> tuple[int, int | None]:
        """One upsert creates, locks (``ON CONFLICT DO UPDATE`` locks the row until
        commit, re-reading it after a concurrent writer commits) and advances the
        clock row, and returns it: one round trip where the plain form takes three
        per write."""
        stmt = _ADVANCE_AT if at is not None else _ADVANCE
        params = {"tenant": tenant, "now": now_us if at is None else at}
        queued = pgpipeline.take(conn) if pgpipeline.supported() else []
        if queued:  # the transaction's BEGIN (and anything queued): sent with the stamp
            items = [*queued, (pgpipeline.driver_sql(conn, stmt), params, None)]
            row = pgpipeline.send(conn, items)[-1].fetchone()
        else:
            row = conn.execute(stmt, params).one()
        pgpipeline.stamped(conn)
        return (at if at is not None else int(row[0])), row[1]

    @classmethod
    def advance_clock_later(
        cls, conn: Connection, tenant: str, now_us: int, at: int | None
    ) -> Callable[[], tuple[int, int | None]] | None:
        """The stamp's upsert queued behind whatever is (the transaction's
        ``BEGIN``): the writer's next statement (its reads of the subjects' live
        slots or of the facts it names by id) takes it along, and runs after it,
        behind the clock row, in one round trip (``pgpipeline._send_first``). Its
        row is kept by the queued statement's check once the results are in."""
        if not pgpipeline.sends_queue(conn):
            return None
        stmt = _ADVANCE_AT if at is not None else _ADVANCE
        params = {"tenant": tenant, "now": now_us if at is None else at}
        got: list[Any] = []
        pgpipeline.enqueue(conn, stmt, params, lambda cur: got.append(cur.fetchone()))
        pgpipeline.stamped(conn)

        def stamp() -> tuple[int, int | None]:
            if not got:  # nothing took the queue along: it goes alone
                pgpipeline.send(conn, pgpipeline.take(conn))
            row = got[0]
            return (at if at is not None else int(row[0])), row[1]

        return stamp

    @classmethod
    def sends_together(cls) -> bool:
        return pgpipeline.supported()

    @classmethod
    def fetch(cls, conn: Connection, sql: str, params: Any) -> list[Any]:
        """On an autocommit connection (``statement_read``, ``point_read``: no
        transaction to begin) through a driver cursor of its own, as
        ``fetch_together`` sends its statements: the statement still passes
        SQLAlchemy's cursor events and error handling, without the result
        SQLAlchemy builds around a cursor (its column metadata: a fifth of a
        search's fetch of the kept rows, 24 columns, cost more than reading them)."""
        if not cls.statement_at_a_time(conn):
            return super().fetch(conn, sql, params)
        cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            conn._cursor_execute(cur, sql, params)
            return cur.fetchall()
        finally:
            cur.close()

    @classmethod
    def fetch_prepared(cls, conn: Connection, sql: str, params: Any) -> list[Any]:
        """On an autocommit connection, the statement's first run on this
        connection goes alone in a pipeline, prepared (``pgpipeline.send``'s
        ``prepare``: the ``Parse`` in its one round trip; outside a pipeline psycopg
        waits for a prepare on its own); later runs are ``fetch``'s, and psycopg
        runs its prepared statement. psycopg prepared it on its sixth run (one
        more round trip then), after five parsed and planned anew, and the server
        plans a prepared statement for its values on its first five runs: a
        search's kept rows were planned for their values on a connection's first
        ten searches, its first five now. Should psycopg have dropped its
        prepared statements since (a rollback does), it prepares them again on
        its own terms, as before."""
        if not cls.statement_at_a_time(conn) or not pgpipeline.supported():
            return cls.fetch(conn, sql, params)
        done = conn.connection.info.setdefault(_PREPARED_HERE, set())
        if sql in done or pgpipeline.launched(conn):
            return cls.fetch(conn, sql, params)
        cursors = pgpipeline.send(conn, [(sql, params, None)], prepare=True)
        done.add(sql)
        return list(cursors[0].fetchall())

    @classmethod
    def fetch_together(
        cls,
        conn: Connection,
        reads: Sequence[tuple[str, Any]],
        meanwhile: Callable[[], None] | None = None,
    ) -> list[list[Any]]:
        """In one round trip (``pgpipeline.send``): each still a statement of its
        own, run after the one before it (on a ``statement_read`` connection each
        takes its own snapshot, as when sent one by one); ``meanwhile`` runs once
        they are sent, while the server works, before their results are waited for."""
        if (len(reads) < 2 and meanwhile is None) or not pgpipeline.supported():
            return super().fetch_together(conn, reads, meanwhile)
        items = [(sql, params, None) for sql, params in reads]
        # (``Prepared`` reads: the same few statements on every search, prepared at once)
        cursors = pgpipeline.send(conn, items, meanwhile=meanwhile, prepare=True)
        return [list(cur.fetchall()) for cur in cursors]

    @classmethod
    def deferring(cls, conn: Connection) -> AbstractContextManager[None]:
        return pgpipeline.deferring(conn)

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
        """``advance_clock``, ``lock_slots``, the slots' current versions read
        ``FOR UPDATE`` and, with ``live`` (the scope's columns and subject hashes),
        the live (subject key, slot, predicate) of those subjects, as statements
        sent together with whatever is queued (the transaction's ``BEGIN``): one
        round trip. Each runs after the one before it returned and takes its own
        snapshot then (``pgpipeline``), so the load and the live read see every
        version committed before the clock row and the locks were granted."""
        if not pgpipeline.supported():
            return None
        items = pgpipeline.take(conn)
        first = len(items)
        advance = _ADVANCE_AT if at is not None else _ADVANCE
        params = {"tenant": tenant, "now": now_us if at is None else at}
        items.append((pgpipeline.driver_sql(conn, advance), params, None))
        if slots:
            keys = {"keys": pgarrays.texts(conn, _slot_locks(tenant, slots))}
            items.append((pgpipeline.driver_sql(conn, _LOCK_SLOTS), keys, None))
            # one statement whatever the number of slots (one array parameter):
            # a batch's statements do not grow with it, and a table small enough
            # to be scanned is scanned once, not once per 500 slots
            slots_param = {"tenant": tenant, "slots": pgarrays.texts(conn, list(slots))}
            items.append((pgpipeline.driver_sql(conn, _LOAD_SLOTS), slots_param, None))
        if live is not None:
            own, hashes = live
            live_param = {**own, "tenant": tenant, "hashes": pgarrays.texts(conn, list(hashes))}
            items.append((pgpipeline.driver_sql(conn, _LIVE_SLOTS), live_param, None))
        cursors = pgpipeline.send(conn, items)
        pgpipeline.stamped(conn)
        row = cursors[first].fetchone()
        stamp = at if at is not None else int(row[0])
        rows = [
            dict(zip(_LOAD_COLUMNS, values, strict=True))
            for values in _processed(
                cursors[first + 2].fetchall() if slots else [], _load_processors(conn.dialect)
            )
        ]
        found = (
            _processed(cursors[-1].fetchall(), _load_processors(conn.dialect, _LIVE_SLOTS))
            if live is not None
            else []
        )
        return stamp, row[1], rows, found

    @classmethod
    def slot_rows(
        cls, conn: Connection, tenant: str, slots: Sequence[str], for_update: bool
    ) -> list[Any] | None:
        """One statement over one text array of the slots (``slot = ANY(…)``, as
        ``begin_write``'s load), sent with whatever is queued (the slot locks): one
        round trip for any number of slots, where parts of 500 went one after
        another (a LangGraph batch of 1,000 puts: three round trips)."""
        stmt = _LOAD_SLOTS if for_update else _SLOT_ROWS
        rows = conn.exec_driver_sql(
            pgpipeline.driver_sql(conn, stmt),
            {"tenant": tenant, "slots": pgarrays.texts(conn, list(slots))},
        ).fetchall()
        return _processed(rows, _load_processors(conn.dialect))

    @classmethod
    def insert_rows(cls, conn: Connection, table: Any, rows: list[dict[str, Any]]) -> None:
        """Insert many rows of one tenant (the same keys in every row) in one statement:
        ``INSERT … SELECT k.tenant, u.… FROM cm_txclock k,
        json_populate_recordset(NULL::<table>, <the rows as one JSON array>) u WHERE
        k.tenant = :tenant``, one round trip whatever the number of rows, with a
        constant text that psycopg and the server parse once, and one parameter that
        the json module encodes in C. psycopg's ``executemany`` sends and dumps each
        row separately, SQLAlchemy's multi-row VALUES makes psycopg rewrite a
        statement with thousands of placeholders on every call, and one text array
        per column (the previous form) made psycopg quote every element with a
        regular expression; all cost more than the database work itself. The
        tenant comes from the tenant's clock row (which every write stamps first),
        so the statement is routed to one tenant (one shard on Citus, colocated).
        If that row is absent the statement inserts nothing and the rows go in with
        a plain insert instead: never a lost row. Values pass through each column's
        own bind processing (``SafeText`` escaping, so no NUL reaches the JSON)
        first, as with a plain insert. A column holding one value in every row
        (``_same_columns``) is sent once, as one JSON object beside the rows. The
        columns that vary go as one binary array each (``_array_insert``) when every
        value fits (``_column_arrays``); otherwise the rows go as that JSON array."""
        if not rows:
            return
        tenant = rows[0]["tenant"]
        if any(r["tenant"] != tenant for r in rows):
            super().insert_rows(conn, table, rows)
            return
        cols = tuple(c for c in rows[0] if c != "tenant")
        types = [table.c[c].type for c in cols]
        same = _same_columns(
            rows, [c for c, t in zip(cols, types, strict=True) if not isinstance(t, LargeBinary)]
        )
        stmt, procs = _setwise_insert(conn.dialect, table, cols, same=same)
        each = [c for c in cols if c not in same]  # the columns each row sends
        plain = [c for c, p in zip(cols, procs, strict=True) if p is None and c not in same]
        converted = [(c, p) for c, p in zip(cols, procs, strict=True) if p not in (None, _BINARY)]
        binary = [c for c, p in zip(cols, procs, strict=True) if p is _BINARY]
        if binary and any(r[c] is None for r in rows for c in binary):
            super().insert_rows(conn, table, rows)  # never expected: the columns are NOT NULL
            return
        procs_of = dict(zip(cols, procs, strict=True))
        arrays = (
            _column_arrays(table, each, rows, procs_of)
            if ARRAYS and each and len(rows) > 1
            else None
        )
        if arrays is not None:
            kinds, values = arrays
            sql = _array_insert(table, cols, same, tuple(each), kinds)
            given: dict[str, Any] = {"tenant": tenant}
            given.update(
                (f"a_{c}", _as_array(conn, kind, v))
                for kind, (c, v) in zip(kinds, values.items(), strict=True)
            )
            if same:
                given["same"] = _same_object(rows[0], same, procs_of)
            cls._insert_now_or_queued(conn, table, rows, sql, given, driver=True)
            if binary:
                cls._note_vectors(
                    conn,
                    table,
                    rows,
                    given,
                    _array_insert_with(table, cols, same, tuple(each), kinds),
                )
            return
        dumped = None
        if not binary and _escapes_only(table, cols, converted):
            # The common case in one C call: the rows as given (their ``tenant``
            # key too, which the statement does not read; without the columns
            # sent once) when no value holds a backslash or a NUL (in the JSON
            # text every one of those, and nothing else of a plain value, writes a
            # backslash). ``SafeText``'s escaping, the only processing of these
            # columns, then changes nothing.
            listed = [{c: r[c] for c in each} for r in rows] if same else rows
            try:
                dumped = json.dumps(listed, ensure_ascii=False)
            except (TypeError, ValueError):
                dumped = None
            if dumped is not None and "\\" in dumped:
                dumped = None
        payload = []
        if dumped is None:
            varied = [(c, p) for c, p in converted if c not in same]
            for r in rows:
                item = {c: r[c] for c in plain}
                for c, p in varied:
                    item[c] = p(r[c])
                payload.append(item)
            dumped = json.dumps(payload, ensure_ascii=False)
        params: dict[str, Any] = {"tenant": tenant, "rows": dumped}
        if same:  # one object, each value processed as a row's would be
            params["same"] = _same_object(rows[0], same, procs_of)
        for c in binary:
            params[f"bin_{c}"] = pgarrays.blobs(conn, [bytes(r[c]) for r in rows])
        cls._insert_now_or_queued(conn, table, rows, stmt, params, driver=bool(binary))
        if binary:
            cls._note_vectors(
                conn, table, rows, params, _setwise_insert_with(conn, table, cols, same)
            )

    @classmethod
    def _note_vectors(
        cls,
        conn: Connection,
        table: Any,
        rows: list[dict[str, Any]],
        params: dict[str, Any],
        with_extra: Callable[[tuple[tuple[str, str], ...], bool], str],
    ) -> None:
        """Keep with the queue what a queued vector insert needs to be rebuilt with
        pgvector's ``embedding`` (``embed_in_queued_insert``)."""
        if table.name == "cm_vectors" and pgpipeline.queueing(conn):
            item = pgpipeline.last_queued(conn)
            pgpipeline.note(conn, _QueuedVectors(item, with_extra, params, rows))

    @classmethod
    def _insert_now_or_queued(
        cls,
        conn: Connection,
        table: Any,
        rows: list[dict[str, Any]],
        stmt: Any,
        params: dict[str, Any],
        *,
        driver: bool,
    ) -> None:
        """Queue a set-wise insert (``insert_rows``) in the writer's flush, a version
        insert sent at once; else run it now, and insert the rows plainly if the
        tenant's clock row was absent. ``driver``: ``stmt`` is driver SQL (psycopg's
        placeholders), else a SQLAlchemy statement."""
        if pgpipeline.queueing(conn):
            # the writer's flush: the tenant's clock row is stamped (and locked) by
            # this transaction, so every row goes in; a short count is a bug
            pgpipeline.enqueue(conn, stmt, params, functools.partial(_inserted_all, len(rows)))
            if table.name == "cm_versions":
                # on its way now: the server inserts while the client embeds
                pgpipeline.launch(conn)
            return
        run = conn.exec_driver_sql if driver else conn.execute
        if run(stmt, params).rowcount != len(rows):
            super().insert_rows(conn, table, rows)

    @classmethod
    def close_versions(
        cls, conn: Connection, tenant: str, tx: int, closes: list[dict[str, Any]]
    ) -> None:
        if not closes:
            return
        params = {
            "tx": tx,
            "t": tenant,
            "vids": pgarrays.texts(conn, [c["vid"] for c in closes]),
            "bys": pgarrays.texts(conn, [c["by"] for c in closes]),
            "reasons": pgarrays.texts(conn, [c["reason"] for c in closes]),
        }
        if pgpipeline.queueing(conn):
            pgpipeline.enqueue(conn, _CLOSE, params)
        else:
            conn.execute(_CLOSE, params)

    @classmethod
    def after_insert_versions(cls, conn: Connection, n_inserted: int) -> None:
        _analyze_on_doubling(conn, _inserted, "cm_versions", n_inserted)

    @classmethod
    def run_write(cls, conn: Connection, stmt: Any, params: Any) -> None:
        if pgpipeline.queueing(conn):
            pgpipeline.enqueue(conn, stmt, params)
        else:
            conn.execute(stmt, params)

    @classmethod
    def after_insert_vectors(cls, conn: Connection, n_inserted: int) -> None:
        """``ANALYZE cm_vectors`` after each doubling, as for versions: unanalyzed,
        the vector leg's re-score lookup (``item_id IN …``) was planned as a scan of
        every vector of the tenant, and pgvector's leg as a scan and sort."""
        _analyze_on_doubling(conn, _vectors_inserted, "cm_vectors", n_inserted)

    # -- the dialect's read SQL and upkeep ---------------------------------------------
    @classmethod
    def json_text(cls, column: Any, path: Sequence[str]) -> Any:
        """``(column::jsonb) #>> path``: the text at ``path``, NULL where there is none."""
        return cast(column, JSONB)[tuple(path)].astext

    @classmethod
    def json_key(cls, column: Any, path: Sequence[str]) -> Any:
        """``(column'::jsonb) #>> '{a,b}'`` with the path written into the SQL, so
        the expression index over it (schema v9) serves the lookup. ``column'`` is
        the text with its ``\\u0000`` escapes dropped (an escaped backslash kept):
        ``jsonb`` refuses NUL, and an index that failed on one message would
        refuse to store it."""
        pairs: Any = literal_column(r"'\\'")  # an escaped backslash: two characters
        mark: Any = literal_column("chr(1)")  # never in JSON text (control characters are escaped)
        nul: Any = literal_column(r"'\u0000'")
        kept = func.replace(func.replace(column, pairs, mark), nul, literal_column("''"))
        safe = func.replace(kept, mark, pairs)
        keys: Any = literal_column("'{" + _simple_path(path).replace(".", ",") + "}'")
        return cast(safe, JSONB).op("#>>", return_type=Text)(keys)

    @classmethod
    def json_key_value(cls, value: str) -> str:
        return value.replace("\x00", "")

    @classmethod
    def partial_index_term(cls, column: Any, value: str) -> Any:
        """Plain equality: PostgreSQL plans a prepared statement without comparing its
        parameters with partial indexes' terms, and estimates this term's rows (the
        concatenation SQLite needs would be a guess: the walk then sorted every row)."""
        return column == literal_column(f"'{value}'")

    @classmethod
    def utc_iso_text(cls, value: Any) -> Any:
        """The same test as a regular expression, the text compared in byte order
        (``COLLATE "C"``: a locale's collation would skip the punctuation)."""
        digits = "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
        shaped = and_(
            value.op("~")(literal_column(f"'^{digits}(\\.[0-9]{{6}})?\\+00:00$'")),
            value.op("!~")(literal_column("'\\.000000\\+'")),
        )
        return case((shaped, value), else_=null()).collate("C")

    @classmethod
    def one_of(cls, column: Any, values: Sequence[str]) -> Any:
        """``column = ANY(<one text array>)``: one parameter, where ``IN (…)`` of 500
        values made SQLAlchemy render and psycopg re-parse 500 placeholders per
        statement (a fifth of a LangGraph batch's client time)."""
        return column == any_(bindparam(None, list(values), type_=ARRAY(Text)))

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
        """The generated ``tsv`` column's GIN match, ranked by ``ts_rank_cd``."""
        return _lexical(conn, tbl, terms, filters, n, tiebreak, run)

    @classmethod
    def relax_durability(cls, conn: Connection) -> None:
        conn.execute(_ASYNC_COMMIT)

    # -- the dialect's DDL -------------------------------------------------------------
    @classmethod
    def lock_migration(cls, conn: Connection) -> None:
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtextextended('chronomem:migrate', 0))"))

    @classmethod
    def current_schema(cls, conn: Connection) -> str | None:
        return conn.execute(text("SELECT current_schema()")).scalar()

    @classmethod
    def create_v1_objects(cls, conn: Connection) -> None:
        # I1 as a database constraint (I1_COLUMNS): current versions of a slot never
        # overlap in valid time. It needs btree_gist; a server without it (e.g. the pgvector
        # test server) keeps I1 by slot locks alone, as SQLite does, and says so.
        if _extension(conn, "btree_gist"):
            conn.execute(_add_i1(I1_COLUMNS_V1))  # v7 (reshape_i1) replaces it
        else:
            log.warning("btree_gist is not available: invariant I1 is kept by slot locks only")
            conn.execute(meta.insert().values(key="i1_constraint", value="absent"))
        conn.execute(
            text(
                "ALTER TABLE cm_versions ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
                "(to_tsvector('simple', coalesce(index_text, subject || ' ' || replace(predicate, '_', ' ') || ' ' || object))) STORED"
            )
        )
        conn.execute(_gin_index("cm_versions"))
        conn.execute(
            text(
                "ALTER TABLE cm_episodes ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
                "(to_tsvector('simple', text)) STORED"
            )
        )
        conn.execute(_gin_index("cm_episodes"))

    @classmethod
    def reshape_i1(cls, conn: Connection) -> None:
        """Schema v7: the I1 constraint's index leads with a 64-bit hash of the slot
        (``I1_COLUMNS``); a constraint of the v1 shape is replaced, a missing one
        (no ``btree_gist``) stays missing."""
        row = conn.execute(
            text(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conname = 'cm_versions_i1' AND conrelid = 'cm_versions'::regclass"
            )
        ).first()
        if row is None or "hashtextextended" in row[0]:
            return
        conn.execute(text("ALTER TABLE cm_versions DROP CONSTRAINT cm_versions_i1"))
        conn.execute(_add_i1(I1_COLUMNS))

    @classmethod
    def byte_order(cls, conn: Connection, columns: Mapping[str, Sequence[str]]) -> None:
        """Schema v15: each column ``COLLATE "C"``, its type kept (one ``ALTER TABLE`` a
        table, for the columns not so already). The values stay as they are (no table
        rewrite); the indexes over the columns (the primary keys, the I1 constraint's)
        are rebuilt in the new collation, the table locked meanwhile."""
        for table, names in columns.items():
            rows = conn.execute(_COLUMN_COLLATIONS, {"t": table, "names": list(names)}).all()
            changes = [
                f'ALTER COLUMN {name} TYPE {kind} COLLATE "C"'
                for name, kind, collation in rows
                if collation != "C"
            ]
            if changes:
                conn.exec_driver_sql(f"ALTER TABLE {table} {', '.join(changes)}")

    @classmethod
    def rebuild_text_indexes(
        cls, conn: Connection, bodies: Sequence[tuple[str, str]], *, stemmed: bool
    ) -> None:
        config = TEXT_CONFIG_STEMMED if stemmed else TEXT_CONFIG
        for table, template in bodies:
            body = template.format(r="")
            conn.execute(text(f"ALTER TABLE {table} DROP COLUMN tsv"))  # drops its index too
            conn.execute(
                text(
                    f"ALTER TABLE {table} ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
                    f"(to_tsvector('{config}', left({body}, {INDEX_MAX_CHARS}))) STORED"
                )
            )
            conn.execute(_gin_index(table))

    @classmethod
    def has_pgvector(cls, conn: Connection) -> bool:
        return _extension(conn, "vector")

    @classmethod
    def tune_indexes(cls, conn: Connection) -> None:
        """A store whose text indexes were created before they had a bounded pending
        list (``GIN_PENDING_KB``) gets one: a catalog read on open, an ``ALTER
        INDEX`` once."""
        want = f"gin_pending_list_limit={GIN_PENDING_KB}"
        rows = conn.execute(
            text(
                "SELECT c.relname, c.reloptions FROM pg_class c "
                "WHERE c.relname = ANY(CAST(:names AS text[])) "
                "AND c.relnamespace = CAST(current_schema() AS regnamespace) "
                "AND pg_has_role(c.relowner, 'USAGE')"
            ),
            {"names": [f"{t}_tsv" for t in TEXT_INDEX_TABLES]},
        ).all()
        for name, options in rows:
            if want not in (options or []):
                conn.execute(text(f"ALTER INDEX {name} SET ({want})"))
