"""The read predicates of docs/design.md §4 as SQL, the facts() and get() statements
built once per shape (``facts_query``; run as ``Prepared`` statements), and rows
turned into values.

known at t : recorded_at <= t AND (superseded_at IS NULL OR superseded_at > t)
live       : known at t AND valid_from <= v AND (valid_to IS NULL OR valid_to > v)
ended      : known at t AND valid_to <= v
scheduled  : known at t AND valid_from > v
retracted  : a version recorded <= t was closed as retracted at or before t,
             and no version of that fact is known at t
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    ColumnElement,
    Connection,
    FunctionElement,
    Integer,
    LargeBinary,
    Select,
    String,
    Table,
    Text,
    TypeDecorator,
    and_,
    any_,
    bindparam,
    case,
    exists,
    false,
    func,
    literal,
    null,
    or_,
    select,
    type_coerce,
)
from sqlalchemy.ext.compiler import compiles

from .backends.base import UNPREPARED, Backend
from .batching import chunks
from .identity import key_hash
from .model import CloseReason, Episode, Fact, FactRow, State
from .prepared import Prepared, PreparedIn
from .schema import NEWEST_KEY, SUBJECT_HEAD, SubjectHead, txclock, versions
from .schema import episodes as episodes_table
from .schema import sources as sources_table
from .schema import vectors as vectors_table
from .scope import Scope
from .timeutil import end_dt, from_us, opt_dt, to_us

SCOPE_LEVELS = ("user_id", "agent_id", "session_id")  # a scope's levels, as columns
# An instant in a read predicate: a value, or the bind parameter a cached
# statement takes it through (``facts_query``).
Instant = int | ColumnElement[Any]


def scope_rule(table: Table, tenant: Any, values: Sequence[Any]) -> ColumnElement[bool]:
    """Rows of a scope and of its ancestors; never a sibling's. Equality only.
    ``values``: the user, agent and session, each a value or a bind parameter, or
    None where the scope leaves that level unset (the row's level must be '')."""
    conds: list[ColumnElement[bool]] = [table.c.tenant == tenant]
    for column, value in zip(SCOPE_LEVELS, values, strict=True):
        col = table.c[column]
        conds.append(col.in_(["", value]) if value is not None else col == "")
    return and_(*conds)


def scope_visible(table: Table, scope: Scope) -> ColumnElement[bool]:
    """``scope_rule`` with this scope's values in it."""
    return scope_rule(table, scope.tenant, [v or None for v in scope_values(scope)])


def scope_bound(table: Table, levels: Sequence[bool]) -> ColumnElement[bool]:
    """``scope_rule`` over the bind parameters ``tenant`` and, for each level set
    (``levels``, from ``scope_params``), ``user_id``/``agent_id``/``session_id``: one
    statement per shape serves every scope of that shape."""
    binds = [
        bindparam(column, type_=table.c[column].type) if on else None
        for column, on in zip(SCOPE_LEVELS, levels, strict=True)
    ]
    return scope_rule(table, bindparam("tenant"), binds)


def scope_values(scope: Scope) -> tuple[str | None, str | None, str | None]:
    return (scope.user, scope.agent, scope.session)


def scope_params(scope: Scope) -> tuple[tuple[bool, bool, bool], dict[str, Any]]:
    """The levels ``scope`` sets and the parameters ``scope_bound`` takes."""
    user, agent, session = scope_values(scope)
    params: dict[str, Any] = {"tenant": scope.tenant}
    if user:
        params["user_id"] = user
    if agent:
        params["agent_id"] = agent
    if session:
        params["session_id"] = session
    return (bool(user), bool(agent), bool(session)), params


def scope_within(table: Table, scope: Scope) -> ColumnElement[bool]:
    """Rows of this scope and of its descendants (what ``purge`` removes): every
    level down to the deepest one set must match (unset there means ''), the
    levels below it may be anything."""
    levels = (("user_id", scope.user), ("agent_id", scope.agent), ("session_id", scope.session))
    deepest = max((i for i, (_, v) in enumerate(levels) if v), default=-1)
    conds: list[ColumnElement[bool]] = [table.c.tenant == scope.tenant]
    for column, value in levels[: deepest + 1]:
        conds.append(table.c[column] == (value or ""))
    return and_(*conds)


def scope_is(table: Table, scope: Scope) -> ColumnElement[bool]:
    """Rows of exactly this scope: what a write by id may change. It is what
    ``scope_visible`` and ``scope_within`` share, so a write by id never reaches a
    fact that a read by id of the same scope cannot see."""
    return and_(*(table.c[column] == value for column, value in scope.columns().items()))


class _StartsWith(FunctionElement[bool]):
    """``column`` starts with ``prefix``, by exact comparison, on every dialect."""

    name = "cm_starts_with"
    inherit_cache = True
    type = Boolean()


@compiles(_StartsWith)
def _starts_with_sqlite(element: _StartsWith, compiler: Any, **kw: Any) -> str:
    column, _prefix, raw, nbytes = (compiler.process(c, **kw) for c in element.clauses)
    # As bytes: SQLite's text functions stop at a NUL character, blob ones do not.
    return f"(substr(CAST({column} AS BLOB), 1, {nbytes}) = {raw})"


@compiles(_StartsWith, "postgresql")
def _starts_with_pg(element: _StartsWith, compiler: Any, **kw: Any) -> str:
    column, prefix, _raw, _nbytes = (compiler.process(c, **kw) for c in element.clauses)
    return f"starts_with({column}, {prefix})"


def prefix_match(column: ColumnElement[str], prefix: str) -> ColumnElement[bool]:
    """``column`` starts with ``prefix``, character for character: no LIKE, so ``%``
    and ``_`` are characters; the prefix binds through the column's type."""
    if not prefix:
        return column.is_not(None)
    raw = prefix.encode("utf-8", "surrogatepass")
    bound = type_coerce(prefix, column.type)
    return _StartsWith(column, bound, literal(raw, LargeBinary()), literal(len(raw)))


def prefix_bound(column: ColumnElement[str], name: str = "prefix") -> ColumnElement[bool]:
    """``prefix_match`` of a non-empty prefix over bind parameters (``prefix_params``
    gives their values), for a statement built once per shape."""
    return _StartsWith(
        column,
        type_coerce(bindparam(name), column.type),
        bindparam(f"{name}_raw", type_=LargeBinary()),
        bindparam(f"{name}_bytes", type_=Integer()),
    )


def prefix_params(prefix: str, name: str = "prefix") -> dict[str, Any]:
    """The values of ``prefix_bound``'s parameters for ``prefix``."""
    raw = prefix.encode("utf-8", "surrogatepass")
    return {name: prefix, f"{name}_raw": raw, f"{name}_bytes": len(raw)}


def subject_is(key: str) -> ColumnElement[bool]:
    """``subject_key == key``, through the (indexed) hash of the key."""
    return and_(versions.c.subject_hash == key_hash(key), versions.c.subject_key == key)


def subject_bound() -> ColumnElement[bool]:
    """``subject_is`` over bind parameters (``subject_params`` gives their values)."""
    return and_(
        versions.c.subject_hash == bindparam("subject_hash"),
        versions.c.subject_key == bindparam("subject_key"),
    )


def subject_params(key: str) -> dict[str, Any]:
    """The values of ``subject_bound``'s parameters for ``key``."""
    return {"subject_hash": key_hash(key), "subject_key": key}


def known(known_at: Instant | None, table: Any = versions) -> ColumnElement[bool]:
    if known_at is None:  # latest: everything recorded so far
        return table.c.superseded_at.is_(None)
    # ``+ 0`` keeps planners off the recorded_at index: the subject/slot indexes
    # are far more selective, and an as-of read should cost what a current one does.
    return and_(
        (table.c.recorded_at + 0) <= known_at,
        or_(table.c.superseded_at.is_(None), table.c.superseded_at > known_at),
    )


def in_states(
    states: Iterable[State], valid_at: Instant, table: Table = versions
) -> ColumnElement[bool]:
    """Valid-time part of the live/ended/scheduled states (retracted is a separate query)."""
    parts: list[ColumnElement[bool]] = []
    c = table.c
    if State.LIVE in states:
        parts.append(
            and_(c.valid_from <= valid_at, or_(c.valid_to.is_(None), c.valid_to > valid_at))
        )
    if State.ENDED in states:
        parts.append(c.valid_to <= valid_at)
    if State.SCHEDULED in states:
        parts.append(c.valid_from > valid_at)
    return or_(*parts) if parts else false()


def temporal(
    states: Iterable[State], valid_at: Instant, known_at: Instant | None
) -> ColumnElement[bool]:
    """The versions in ``states`` at valid instant ``valid_at`` as believed at
    ``known_at`` (None: now): the one time filter of ``facts`` and every fact leg."""
    wanted = frozenset(states)
    parts: list[ColumnElement[bool]] = []
    valid_states = wanted - {State.RETRACTED}
    if valid_states:
        parts.append(and_(known(known_at), in_states(valid_states, valid_at)))
    if State.RETRACTED in wanted:
        parts.append(retracted(known_at))
    return or_(*parts)


def _retracted_by(known_at: Instant | None) -> ColumnElement[bool]:
    """Closed as retracted at or before ``known_at`` (exclusive with ``known``)."""
    closed = (
        versions.c.superseded_at.is_not(None)
        if known_at is None
        else and_(versions.c.recorded_at <= known_at, versions.c.superseded_at <= known_at)
    )
    return and_(versions.c.closed_reason == CloseReason.RETRACTED.value, closed)


_LATER = versions.alias("later")


def retracted(known_at: Instant | None) -> ColumnElement[bool]:
    """Versions closed as retracted (by ``known_at``) of facts no longer known then."""
    other = _LATER
    still_known = exists().where(
        other.c.tenant == versions.c.tenant,
        other.c.fact_id == versions.c.fact_id,
        known(known_at, other),
    )
    return and_(_retracted_by(known_at), ~still_known)


def state_of(row: Mapping[Any, Any], valid_at: int, *, retracted_row: bool = False) -> State:
    if retracted_row:
        return State.RETRACTED
    if row["valid_from"] > valid_at:
        return State.SCHEDULED
    if row["valid_to"] is not None and row["valid_to"] <= valid_at:
        return State.ENDED
    return State.LIVE


def scope_of(row: Mapping[Any, Any]) -> dict[str, str]:
    out = {"tenant": row["tenant"]}
    for level in ("user", "agent", "session"):
        if row[f"{level}_id"]:
            out[level] = row[f"{level}_id"]
    return out


def to_fact(
    row: Mapping[Any, Any],
    valid_at: int,
    sources: Sequence[str] = (),
    *,
    retracted_row: bool = False,
) -> Fact:
    return Fact(
        id=row["fact_id"],
        version_id=row["id"],
        subject=row["subject"],
        predicate=row["predicate"],
        object=row["object"],
        valid_from=from_us(row["valid_from"]),
        valid_to=end_dt(row["valid_to"]),  # past 9999: never ends
        recorded_at=from_us(row["recorded_at"]),
        superseded_at=opt_dt(row["superseded_at"]),
        state=state_of(row, valid_at, retracted_row=retracted_row),
        closed_reason=row["closed_reason"],
        superseded_by=row["superseded_by"],
        metadata={} if row["metadata"] == "{}" else json.loads(row["metadata"]),
        source_episode_ids=tuple(sources),
        extractor=row["extractor"],
        scope=scope_of(row),
        subject_key=row["subject_key"],
        object_key=row["object_key"],
    )


def to_episode(row: Mapping[Any, Any]) -> Episode:
    return Episode(
        id=row["id"],
        text=row["text"],
        role=row["role"],
        occurred_at=from_us(row["occurred_at"]),
        recorded_at=from_us(row["recorded_at"]),
        metadata=json.loads(row["metadata"]),
        scope=scope_of(row),
    )


def _sources_select(fact_ids: ColumnElement[bool]) -> Select[Any]:
    return (
        select(sources_table.c.fact_id, sources_table.c.episode_id)
        .where(sources_table.c.tenant == bindparam("tenant"), fact_ids)
        .order_by(sources_table.c.recorded_at, sources_table.c.episode_id)
    )


_SOURCES = _sources_select(sources_table.c.fact_id.in_(bindparam("fact_ids", expanding=True)))


_SOURCES_IN = PreparedIn(lambda ids: _sources_select(sources_table.c.fact_id.in_(ids)))


@functools.cache
def _sources_prepared(count: int) -> Prepared:
    """The sources of ``count`` facts (at most INLINE), compiled once."""
    return Prepared(_sources_select(_in_list(sources_table.c.fact_id, "fact_ids", count)))


def sources_of(conn: Connection, tenant: str, fact_ids: Iterable[str]) -> dict[str, list[str]]:
    ids = list(dict.fromkeys(fact_ids))
    out: dict[str, list[str]] = {}
    if not ids:
        return out
    if len(ids) <= INLINE:
        params: dict[str, Any] = {"tenant": tenant}
        _bind_list(params, "fact_ids", ids, len(ids))
        for fid, eid in _sources_prepared(len(ids)).rows(conn, params):
            out.setdefault(fid, []).append(eid)
        return out
    if len(ids) <= 4 * INLINE:
        # a few ids (a search's hits): one prepared statement (its IN list padded to
        # a compiled length) costs less than SQLAlchemy rewriting an expanding IN
        for fid, eid in _SOURCES_IN.rows(conn, {"tenant": tenant}, ids):
            out.setdefault(fid, []).append(eid)
        return out
    for chunk in chunks(ids):
        rows = conn.execute(_SOURCES, {"tenant": tenant, "fact_ids": chunk})
        for fid, eid in rows:
            out.setdefault(fid, []).append(eid)
    return out


def sources_prepared(
    conn: Connection, tenant: str, fact_ids: Iterable[str]
) -> dict[str, list[str]]:
    """``sources_of`` through prepared statements alone, whatever the number of
    ids (``PreparedIn``: one statement per 512): what a connection that runs
    prepared statements only takes (``retrieval.within``'s point read)."""
    ids = list(dict.fromkeys(fact_ids))
    out: dict[str, list[str]] = {}
    if len(ids) <= 4 * INLINE:
        return sources_of(conn, tenant, ids)
    for fid, eid in _SOURCES_IN.rows(conn, {"tenant": tenant}, ids):
        out.setdefault(fid, []).append(eid)
    return out


_A_VERSION_OF = Prepared(
    select(versions.c.id)
    .where(versions.c.tenant == bindparam("tenant"), versions.c.fact_id == bindparam("ref"))
    .limit(1)
)
_FACT_OF_VERSION = Prepared(
    select(versions.c.fact_id).where(
        versions.c.tenant == bindparam("tenant"), versions.c.id == bindparam("ref")
    )
)


def fact_id_of(conn: Connection, tenant: str, ref: str) -> str:
    """The fact id ``ref`` names (a fact id, or the id of one of its versions);
    ``ref`` itself when it names nothing."""
    # two indexed lookups (fact index, then primary key): an OR of the two
    # columns makes SQLite walk every row of the tenant
    params = {"tenant": tenant, "ref": ref}
    if _A_VERSION_OF.rows(conn, params):
        return ref
    found = _FACT_OF_VERSION.scalar(conn, params)
    return str(found) if found is not None else ref


_NO_RANGE = re.compile("[\x00\\\\\ud800-\udfff]")  # NUL, backslash, a surrogate


@functools.lru_cache(maxsize=4096)  # a store reads under a few prefixes, each twice a search
def subject_range(prefix: str) -> tuple[str, str | None] | None:
    """Bounds ``[low, high)`` on ``SubjectHead`` that hold every subject key starting
    with ``prefix`` (``high`` None: no upper bound), or None when the index cannot
    help. Code point order is UTF-8 byte order, which both databases compare in:
    a key starting with ``prefix`` has a head starting with ``low`` (the prefix's
    head), and ``high`` is the least string after every such head. A prefix with a
    NUL, a backslash or a surrogate gets no range, so such reads scan, as before:
    SQLite's text functions stop at a NUL, and PostgreSQL stores NUL and ``\\``
    escaped (``SafeText``), so its heads are of the escaped text."""
    if not prefix or _NO_RANGE.search(prefix):
        return None
    low = prefix[:SUBJECT_HEAD]
    rest = low
    while rest:
        last = ord(rest[-1]) + 1
        if last <= 0x10FFFF:
            return low, rest[:-1] + chr(0xE000 if 0xD800 <= last <= 0xDFFF else last)
        rest = rest[:-1]
    return low, None


@functools.cache
def _range_count(bounded: bool) -> Prepared:
    """How many versions (any state, any scope of the tenant) have a subject head
    in ``[head_from, head_to)`` (``bounded``; else from ``head_from`` on), counted
    up to ``cap``: a walk of the subject head index alone, no table row read."""
    head = SubjectHead(versions.c.subject_key)
    conds = [versions.c.tenant == bindparam("tenant"), head >= bindparam("head_from")]
    if bounded:
        conds.append(head < bindparam("head_to"))
    inner = (
        select(literal(1).label("one"))
        .select_from(versions)
        .where(*conds)
        .limit(bindparam("cap", type_=BigInteger()))
        .subquery("in_range")
    )
    return Prepared(select(func.count()).select_from(inner))


@functools.cache
def _range_count_and_registry(bounded: bool) -> Prepared:
    """``_range_count``'s count, the tenant's clock row (``last_us``, ``erased_us``
    and ``registry_us``, the predicate registry's version: ``Registry.load``), and
    whether any fact of the tenant cites an episode (one probe of ``cm_sources``'
    primary key), in one statement. The count is NULL, not made, when the clock
    row is the stamp ``known_last``, ``known_erased`` (a caller holding the
    prefix's rows read at that stamp knows it: nothing was written since); a
    NULL ``known_last`` matches no row. The clock row is read once (joined to a
    one-row select, so a tenant without one still gets a row), and the count only
    when the ``CASE`` needs it (an uncorrelated subquery: SQLite runs it where
    its value is read, PostgreSQL's init plan when its parameter is)."""
    counted = _range_count(bounded).stmt.scalar_subquery()
    clock = txclock.c
    one = select(literal(1).label("one")).subquery("one")
    known = and_(
        clock.last_us == bindparam("known_last", type_=BigInteger()),
        clock.erased_us.is_not_distinct_from(bindparam("known_erased", type_=BigInteger())),
    )
    cited = exists().where(sources_table.c.tenant == bindparam("tenant"))
    return Prepared(
        select(
            case((known, null()), else_=counted).label("size"),
            clock.registry_us.label("registry_us"),
            cited.label("cited"),
            clock.last_us.label("last_us"),
            clock.erased_us.label("erased_us"),
        ).select_from(one.outerjoin(txclock, clock.tenant == bindparam("tenant")))
    )


@dataclass(frozen=True)
class PrefixSize:
    """``prefix_size_and_registry``'s answer. ``stamp``: the tenant's clock row as
    ``(last_us, erased_us)``, None without one (never written, or purged). Every
    write of the tenant moves it, a write stamped at or before the last stamp and
    an erasure too (``erased_us``: ``Backend.advance_clock``, ``erasure``), so the
    rows of a prefix read at one stamp are the rows at that stamp. ``size`` is
    None when the stamp is the one the caller knew (the count was not made)."""

    size: int | None
    registry_us: int | None
    cited: bool
    stamp: tuple[int, int | None] | None


def prefix_size_and_registry(
    conn: Connection,
    tenant: str,
    prefix: str,
    cap: int,
    known: tuple[int, int | None] | None = None,
) -> PrefixSize | None:
    """``prefix_size``, the tenant's registry version (``Registry.load``'s
    ``version``), whether any of its facts cites an episode (else none has
    a source to read) and its clock stamp, in one statement; None when the
    prefix has no index range. ``known``: a stamp the caller holds the prefix's
    rows at; while the clock is at it the prefix is not counted again (``size``
    None: it holds what it held then)."""
    found = subject_range(prefix)
    if found is None:
        return None
    low, high = found
    last, erased = (None, None) if known is None else known
    params = {
        "tenant": tenant,
        "head_from": low,
        "head_to": high,
        "cap": cap,
        "known_last": last,
        "known_erased": erased,
    }
    rows = _range_count_and_registry(high is not None).rows(conn, params)
    size, version, cited, last_us, erased_us = rows[0]
    stamp = None if last_us is None else (last_us, erased_us)
    return PrefixSize(None if size is None else int(size), version, bool(cited), stamp)


@functools.cache
def _next_change(bounded: bool) -> Prepared:
    """The least ``valid_from`` and the least ``valid_to`` after ``valid_at`` of the
    versions (any state, any scope of the tenant) with a subject head in
    ``[head_from, head_to)`` (``bounded``; else from ``head_from`` on)."""
    head = SubjectHead(versions.c.subject_key)
    conds = [versions.c.tenant == bindparam("tenant"), head >= bindparam("head_from")]
    if bounded:
        conds.append(head < bindparam("head_to"))
    at = bindparam("valid_at", type_=BigInteger())
    c = versions.c
    return Prepared(
        select(
            func.min(case((c.valid_from > at, c.valid_from))),
            func.min(case((c.valid_to > at, c.valid_to))),
        ).where(*conds)
    )


def next_valid_change(conn: Connection, tenant: str, prefix: str, valid_at: int) -> int | None:
    """The first valid instant after ``valid_at`` at which a version whose subject
    key starts with ``prefix`` (any state, any scope of the tenant, so a bound)
    begins or ends: until then a time filter (``temporal``) keeps the same
    versions of the prefix as at ``valid_at``. None: none begins or ends later
    (or the prefix has no index range)."""
    found = subject_range(prefix)
    if found is None:
        return None
    low, high = found
    params = {"tenant": tenant, "head_from": low, "head_to": high, "valid_at": valid_at}
    begins, ends = _next_change(high is not None).rows(conn, params)[0]
    later = [v for v in (begins, ends) if v is not None]
    return min(later) if later else None


def prefix_size(conn: Connection, tenant: str, prefix: str, cap: int) -> int | None:
    """An upper bound on the versions whose subject key starts with ``prefix``
    (every version in its head range, counted up to ``cap``), or None when the
    index gives the prefix no range (``subject_range``)."""
    found = subject_range(prefix)
    if found is None:
        return None
    low, high = found
    params = {"tenant": tenant, "head_from": low, "head_to": high, "cap": cap}
    return int(_range_count(high is not None).scalar(conn, params) or 0)


# A list parameter of up to INLINE values is bound value by value (``IN (?, ?)``),
# so its statement compiles once and runs as a ``Prepared`` one (a point read
# names one fact, one predicate, one subject); a longer one binds as an
# expanding ``IN``, which SQLAlchemy rewrites for each call.
INLINE = 8
EXPANDING = -1  # a list count in a shape: more than INLINE values


def list_count(values: Sequence[Any] | None) -> int | None:
    """How a shape records a list filter: None (absent), its length, or EXPANDING."""
    if values is None:
        return None
    return len(values) if len(values) <= INLINE else EXPANDING


class _InList(FunctionElement[bool]):
    """``column IN (<the values of one list parameter>)``, however long the list:
    SQLAlchemy's expanding ``IN`` on SQLite; on PostgreSQL ``column = ANY(<one
    array parameter>)`` (``_in_array``)."""

    name = "cm_in_list"
    inherit_cache = True
    type = Boolean()
    _is_implicitly_boolean = True  # a comparison: no ``= 1`` after it where booleans are ints


@compiles(_InList)
def _in_expanding(element: _InList, compiler: Any, **kw: Any) -> str:
    column, values = element.clauses
    return str(compiler.process(column.in_(values), **kw))


@compiles(_InList, "postgresql")
def _in_array(element: _InList, compiler: Any, **kw: Any) -> str:
    """The same rows, one array parameter (each element bound through the
    column's type, as the expanded parameters were): a LangGraph batch's read of
    its items (about 500 subjects a statement, each in two lists) was a 32 kB
    statement of ~1,000 placeholders that SQLAlchemy expanded, psycopg parsed
    anew (too long for its cache) and the server parsed and bound, per chunk."""
    column, values = element.clauses
    # a plain string column's array as ``text[]`` (a ``varchar(n)[]`` cast would cut
    # a longer value short: the expanded parameters were cast to ``varchar``)
    item = column.type if isinstance(column.type, TypeDecorator) else Text()
    array = bindparam(values.key, type_=ARRAY(item))
    return str(compiler.process(column == any_(array), **kw))


def _in_list(column: ColumnElement[Any], name: str, count: int) -> ColumnElement[bool]:
    if count == EXPANDING:
        return _InList(column, bindparam(name, expanding=True))
    if (
        count == 0
    ):  # nothing matches an empty list (SQLAlchemy's empty IN is a literal-execute bind)
        return false()
    # typed as the column, so a SafeText value is escaped as the column stores it
    return column.in_([bindparam(f"{name}_{i}", type_=column.type) for i in range(count)])


def _bind_list(params: dict[str, Any], name: str, values: Sequence[Any], count: int) -> None:
    if count == EXPANDING:
        params[name] = list(values)
    else:
        params.update((f"{name}_{i}", v) for i, v in enumerate(values))


@dataclass(frozen=True)
class _FactsShape:
    """What decides the SQL of a facts() read (every value is a bind parameter)."""

    levels: tuple[bool, bool, bool]  # user / agent / session set in the scope
    states: frozenset[State]
    as_of: bool  # a belief instant was given (else: what is current)
    subject: bool
    predicates: int | None  # list filters: None, a count of inline values, or EXPANDING
    obj: bool
    fact_ids: int | None
    prefix: bool | None  # None: no prefix filter; False: the empty prefix
    prefix_range: int  # bounds on the indexed subject head: 0, 1 (lower) or 2 (both)
    subjects: int | None
    limit: bool
    # ``get``: 1 the fact whose id is ``ref``; 2 the fact ``ref`` names (a fact id,
    # else the id of one of its versions), resolved inside the statement
    fact_ref: int = 0
    sources: bool = False  # each row also carries one of its fact's source episodes
    light: bool = False  # only the columns of a ``FactRow`` (``Memory.rows``)
    # also what the search legs read: ``content_hash``, ``index_text``, the vector
    text: bool = False
    # only the version id and what a close changes (``CLOSING_COLUMNS``):
    # the rest of a version never changes, so a caller holding it reads only these
    closing: bool = False

    @property
    def inline(self) -> bool:
        return EXPANDING not in (self.predicates, self.fact_ids, self.subjects)


_VERSION_ORDER = (
    versions.c.subject_key,
    versions.c.predicate,
    versions.c.valid_from,
    versions.c.object_key,
    versions.c.id,
)
# What ``to_fact`` reads of a version (not the slot, the hashes or the indexed text)
_READ_COLUMNS = tuple(
    c for c in versions.c if c.name not in ("slot", "subject_hash", "content_hash", "index_text")
)
# What a ``FactRow`` is made of, in its order (``light`` shapes select these alone)
ROW_COLUMNS = (
    "fact_id",
    "id",
    "subject",
    "subject_key",
    "predicate",
    "object",
    "valid_from",
    "valid_to",
)
# What a close changes of a version (``UPDATE ... SET superseded_at, superseded_by,
# closed_reason``, docs/design.md §2); every other column is fixed at insert
CLOSING_COLUMNS = ("id", "superseded_at", "superseded_by", "closed_reason")
_BY_FACT = versions.alias("by_fact")
_BY_VERSION = versions.alias("by_version")


def _named_fact() -> ColumnElement[Any]:
    """The fact id ``ref`` names, as ``fact_id_of`` finds it, for one statement: ``ref``
    when a version of that fact exists, else the fact of the version ``ref``. Both
    are uncorrelated subqueries (indexed lookups, run once), so the outer query
    reads the fact's versions through ``cm_versions_fact``."""
    ref = bindparam("ref", type_=String())
    a_version_of = exists().where(
        _BY_FACT.c.tenant == bindparam("tenant"), _BY_FACT.c.fact_id == ref
    )
    fact_of_version = (
        select(_BY_VERSION.c.fact_id)
        .where(_BY_VERSION.c.tenant == bindparam("tenant"), _BY_VERSION.c.id == ref)
        .scalar_subquery()
    )
    return case((a_version_of, ref), else_=fact_of_version)


@functools.lru_cache(maxsize=1024)
def _facts_select(shape: _FactsShape) -> Select[Any]:
    """The facts() SELECT for one shape, built once: building a SQLAlchemy
    statement costs about ten times what executing a cached one does, and a
    point read (``get``, a LangGraph ``get``) is dominated by it otherwise."""
    c = versions.c
    filters: list[ColumnElement[bool]] = [scope_bound(versions, shape.levels)]
    if shape.subject:
        filters.append(subject_bound())
    if shape.predicates is not None:
        filters.append(_in_list(c.predicate, "predicates", shape.predicates))
    if shape.obj:
        filters.append(c.object_key == bindparam("object_key"))
    if shape.fact_ids is not None:
        filters.append(_in_list(c.fact_id, "fact_ids", shape.fact_ids))
    if shape.fact_ref == 1:
        filters.append(c.fact_id == bindparam("ref"))
    elif shape.fact_ref == 2:
        filters.append(c.fact_id == _named_fact())
    if shape.prefix is not None:
        filters.append(prefix_bound(c.subject_key) if shape.prefix else c.subject_key.is_not(None))
        if shape.prefix_range:  # the same rows, found through cm_versions_subject_head
            head = SubjectHead(c.subject_key)
            filters.append(head >= bindparam("head_from"))
            if shape.prefix_range == 2:
                filters.append(head < bindparam("head_to"))
    if shape.subjects is not None:
        # ``predicate >= ''`` is always true (predicates are non-empty text); it is
        # there for SQLite's planner, which without statistics reads ``subject_hash
        # IN (…) … ORDER BY`` through the ``superseded_at`` index — every current row
        # of the tenant. The range on the subject index's third column wins instead.
        filters += [
            _in_list(c.subject_hash, "subject_hashes", shape.subjects),
            _in_list(c.subject_key, "subject_keys", shape.subjects),
            c.predicate >= "",
        ]
    valid_at = bindparam("valid_at", type_=BigInteger())
    known_at = bindparam("known_at", type_=BigInteger()) if shape.as_of else None
    retracted_row = _retracted_by(known_at).label("_r")
    if shape.closing:  # unordered, as the ``text`` read it stands in for
        # no ``_r``: a row found without ``RETRACTED`` asked is never retracted by
        # ``known_at`` (``known`` wants it open then), and a column the driver
        # returns as is spares a copy of every row (``Prepared.rows``' processing)
        q = select(*(c[name] for name in CLOSING_COLUMNS)).where(
            *filters, temporal(shape.states, valid_at, known_at)
        )
    elif shape.light:
        q = (
            select(*(c[name] for name in ROW_COLUMNS))
            .where(*filters, temporal(shape.states, valid_at, known_at))
            .order_by(*_VERSION_ORDER)
        )
    elif shape.sources:
        # the fact's source episodes ride along (one row per version and source, in
        # the order ``sources_of`` gives them): ``get`` is then one statement
        s = sources_table.c
        q = (
            select(*_READ_COLUMNS, retracted_row, s.episode_id.label("_source"))
            .select_from(
                versions.outerjoin(
                    sources_table, and_(s.tenant == c.tenant, s.fact_id == c.fact_id)
                )
            )
            .where(*filters, temporal(shape.states, valid_at, known_at))
            .order_by(*_VERSION_ORDER, s.recorded_at, s.episode_id)
        )
    elif shape.text:
        # and each version's stored vector (None: it has none), looked up by its
        # primary key in a correlated subquery: as a join, PostgreSQL planned it from
        # stale statistics as a walk of the tenant's vectors for every row
        v = vectors_table.c
        vec = (
            select(v.vec)
            .where(v.tenant == c.tenant, v.kind == "v", v.item_id == c.id)
            .correlate(versions)
            .scalar_subquery()
        )
        # unordered: a capped read (``retrieval.within``) stops at its limit instead
        # of sorting every row of the range first
        q = select(
            *_READ_COLUMNS, c.content_hash, c.index_text, vec.label("_vec"), retracted_row
        ).where(*filters, temporal(shape.states, valid_at, known_at))
    else:
        q = (
            select(*_READ_COLUMNS, retracted_row)
            .where(*filters, temporal(shape.states, valid_at, known_at))
            .order_by(*_VERSION_ORDER)
        )
    if not shape.inline:  # a list parameter: planned for its values each time
        q = q.execution_options(**{UNPREPARED: True})
    return q.limit(bindparam("limit", type_=BigInteger())) if shape.limit else q


@functools.lru_cache(maxsize=1024)
def _facts_prepared(shape: _FactsShape) -> Prepared:
    return Prepared(_facts_select(shape))


@dataclass(frozen=True)
class FactsQuery:
    """One facts() read: its shape and its parameters (``run`` gives the rows)."""

    shape: _FactsShape
    params: dict[str, Any]

    @property
    def statement(self) -> Select[Any]:
        return _facts_select(self.shape)

    def run(self, conn: Connection) -> list[dict[str, Any]]:
        """The rows, as mappings of column name to value."""
        if self.shape.inline:
            prepared = _facts_prepared(self.shape)
            names = prepared.columns
            return [dict(zip(names, row, strict=True)) for row in prepared.rows(conn, self.params)]
        return [dict(r) for r in conn.execute(self.statement, self.params).mappings()]

    def tuples(self, conn: Connection) -> list[Sequence[Any]]:
        """The rows as the driver returns them, in ``columns`` order (inline shapes only)."""
        assert self.shape.inline
        return _facts_prepared(self.shape).rows(conn, self.params)

    @property
    def columns(self) -> tuple[str, ...]:
        return _facts_prepared(self.shape).columns

    def rows(self, conn: Connection) -> list[FactRow]:
        """A ``light`` read's rows as ``FactRow`` values (an inline shape through its
        prepared statement, a list parameter's planned for its values)."""
        assert self.shape.light
        found = (
            _facts_prepared(self.shape).rows(conn, self.params)
            if self.shape.inline
            else conn.execute(self.statement, self.params)
        )
        return [
            FactRow(fid, vid, subj, skey, pred, obj, from_us(vf), end_dt(vt))
            for fid, vid, subj, skey, pred, obj, vf, vt in found
        ]

    def facts(self, conn: Connection, valid_at: int) -> list[Fact]:
        """The facts read, with their sources (in the statement's rows when its
        shape joins them, else from one more statement)."""
        rows = self.run(conn)
        if not self.shape.sources:
            found = sources_of(conn, self.params["tenant"], (r["fact_id"] for r in rows))
            return [
                to_fact(r, valid_at, found.get(r["fact_id"], ()), retracted_row=bool(r["_r"]))
                for r in rows
            ]
        # one row per version and source, a version's rows together: each fact's
        # sources are those on the rows of its first version (every version has all)
        first: dict[str, str] = {}
        src: dict[str, list[str]] = {}
        kept: list[dict[str, Any]] = []
        for r in rows:
            fid, vid = r["fact_id"], r["id"]
            if first.setdefault(fid, vid) == vid and r["_source"] is not None:
                src.setdefault(fid, []).append(r["_source"])
            if not kept or kept[-1]["id"] != vid:
                kept.append(r)
        return [
            to_fact(r, valid_at, src.get(r["fact_id"], ()), retracted_row=bool(r["_r"]))
            for r in kept
        ]


def facts_query(
    scope: Scope,
    *,
    valid_at: int,
    known_at: int | None,
    states: frozenset[State],
    subject_key: str | None = None,
    predicates: Sequence[str] | None = None,
    object_key: str | None = None,
    fact_ids: Sequence[str] | None = None,
    subject_prefix: str | None = None,
    subject_keys: Sequence[str] | None = None,
    limit: int | None = None,
    fact_ref: str | None = None,
    ref_is_fact_id: bool = False,
    with_sources: bool | None = None,
    light: bool = False,
    with_text: bool = False,
    closing_only: bool = False,
) -> FactsQuery:
    """One SELECT for a facts() read, scope and time predicates applied in SQL,
    and its parameters. ``fact_ref``: the versions of the fact it names (``get``;
    ``ref_is_fact_id``: it is a fact id); ``with_sources``: every row carries one
    source episode id of its fact (``_source``; None when it has none), so the
    read is one statement. By default a point read (a fact, a subject, a few
    subjects or fact ids; no limit, which would count the joined rows) joins
    them; a wide read (a prefix, a whole scope) reads them in a second statement,
    one row per fact instead of one per version. ``light``: only ``ROW_COLUMNS``,
    no sources (``Memory.rows``; run it with ``FactsQuery.rows``). ``with_text``:
    the rows also carry ``content_hash``, ``index_text`` and the version's stored
    vector as ``_vec`` (a read without its sources joined: ``retrieval.within``).
    ``closing_only``: the same rows, as ``CLOSING_COLUMNS`` alone (the columns of
    a version a close can change; ``retrieval.within`` holds the rest), for a read
    of states without ``RETRACTED`` (its rows' ``_r`` is always false)."""
    if closing_only and State.RETRACTED in states:
        raise ValueError("a closing_only read finds no retracted version")
    levels, params = scope_params(scope)
    params.update(valid_at=valid_at, known_at=known_at)
    if subject_key is not None:
        params.update(subject_params(subject_key))
    n_predicates = list_count(predicates)
    if predicates is not None and n_predicates is not None:
        _bind_list(params, "predicates", predicates, n_predicates)
    if object_key is not None:
        params["object_key"] = object_key
    n_fact_ids = list_count(fact_ids)
    if fact_ids is not None and n_fact_ids is not None:
        _bind_list(params, "fact_ids", fact_ids, n_fact_ids)
    if fact_ref is not None:
        params["ref"] = fact_ref
    head_range: tuple[str, str | None] | None = None
    if subject_prefix:
        params.update(prefix_params(subject_prefix))
        head_range = subject_range(subject_prefix)
        if head_range is not None:
            params["head_from"], params["head_to"] = head_range
    n_subjects = list_count(subject_keys)
    if subject_keys is not None and n_subjects is not None:
        _bind_list(params, "subject_hashes", [key_hash(k) for k in subject_keys], n_subjects)
        _bind_list(params, "subject_keys", subject_keys, n_subjects)
    if limit is not None:
        params["limit"] = limit
    if light:
        with_sources = False
    elif with_sources is None:
        with_sources = limit is None and (
            fact_ref is not None
            or subject_key is not None
            or n_subjects not in (None, EXPANDING)
            or n_fact_ids not in (None, EXPANDING)
        )
    shape = _FactsShape(
        levels=levels,
        states=states,
        as_of=known_at is not None,
        subject=subject_key is not None,
        predicates=n_predicates,
        obj=object_key is not None,
        fact_ids=n_fact_ids,
        prefix=None if subject_prefix is None else bool(subject_prefix),
        prefix_range=0 if head_range is None else 1 if head_range[1] is None else 2,
        subjects=n_subjects,
        limit=limit is not None,
        fact_ref=0 if fact_ref is None else 1 if ref_is_fact_id else 2,
        sources=with_sources,
        light=light,
        text=with_text and not with_sources and not light,
        closing=closing_only and not with_sources and not light,
    )
    return FactsQuery(shape, params)


_LIVE = frozenset({State.LIVE})


@functools.lru_cache(maxsize=64)
def _subjects_prepared(levels: tuple[bool, bool, bool], as_of: bool, n: int) -> Prepared:
    """``facts_query(subject_keys=<n keys>, states=LIVE, light=True)``'s statement,
    looked up by a key cheaper to hash than its shape (a point read's own cost)."""
    shape = _FactsShape(
        levels=levels,
        states=_LIVE,
        as_of=as_of,
        subject=False,
        predicates=None,
        obj=False,
        fact_ids=None,
        prefix=None,
        prefix_range=0,
        subjects=n,
        limit=False,
        light=True,
    )
    return _facts_prepared(shape)


def subject_rows(
    conn: Connection,
    scope: Scope,
    valid_at: int,
    known_at: int | None,
    subject_keys: Sequence[str],
) -> list[FactRow]:
    """The live rows of 1 to ``INLINE`` subjects (stored keys, distinct) as
    ``FactRow`` values: what ``facts_query(subject_keys=…, states=LIVE,
    light=True).rows(conn)`` reads, the same statement, without building the
    query's shape per call (``Memory.rows`` of a few subjects: a LangGraph ``get``)."""
    prep, params = _subject_statement(scope, valid_at, known_at, subject_keys)
    return _fact_rows(prep.rows(conn, params))


def point_subject_rows(
    backend: Backend,
    scope: Scope,
    valid_at: int,
    known_at: int | None,
    subject_keys: Sequence[str],
) -> list[FactRow]:
    """``subject_rows`` as a point read of its own (``Prepared.point_rows``: on
    SQLite the statement goes to a kept driver connection, no connection
    wrapper or context manager around it): the same statement and rows."""
    prep, params = _subject_statement(scope, valid_at, known_at, subject_keys)
    return _fact_rows(prep.point_rows(backend, params))


def _subject_statement(
    scope: Scope, valid_at: int, known_at: int | None, subject_keys: Sequence[str]
) -> tuple[Prepared, dict[str, Any]]:
    n = len(subject_keys)
    if not 0 < n <= INLINE:
        raise ValueError("subject_rows takes 1 to INLINE subject keys")
    levels, params = scope_params(scope)
    params["valid_at"] = valid_at
    params["known_at"] = known_at
    for i, k in enumerate(subject_keys):
        params[_HASH_NAMES[i]] = key_hash(k)
        params[_KEY_NAMES[i]] = k
    return _subjects_prepared(levels, known_at is not None, n), params


# the bind parameter names of ``_subject_statement``'s subjects, made once
_HASH_NAMES = tuple(f"subject_hashes_{i}" for i in range(INLINE))
_KEY_NAMES = tuple(f"subject_keys_{i}" for i in range(INLINE))


def _fact_rows(rows: Sequence[Sequence[Any]]) -> list[FactRow]:
    return [
        FactRow(fid, vid, subj, skey, pred, obj, from_us(vf), end_dt(vt))
        for fid, vid, subj, skey, pred, obj, vf, vt in rows
    ]


@functools.lru_cache(maxsize=256)
def _newest_prepared(shape: _FactsShape) -> Prepared:
    """``shape``'s light read (a prefix, a few predicates, a limit) newest version
    first: valid from descending, ties in code point order of the subject key
    (``SubjectHead``, byte order on both databases, then the whole key), then
    predicate and version id; an offset skips the first rows."""
    c = versions.c
    q = (
        _facts_select(shape)
        .order_by(None)
        .order_by(c.valid_from.desc(), SubjectHead(c.subject_key), c.subject_key, c.predicate, c.id)
        .offset(bindparam("offset", type_=BigInteger()))
    )
    return Prepared(q)


def newest_rows(
    conn: Connection,
    scope: Scope,
    *,
    valid_at: int,
    known_at: int | None,
    subject_prefix: str,
    predicates: Sequence[str],
    limit: int,
    offset: int = 0,
) -> list[FactRow] | None:
    """A page of the live facts under ``subject_prefix`` (an exact key prefix) whose
    predicate is one of ``predicates`` (at most ``INLINE``), newest ``valid_from``
    first (``_newest_prepared``): at most ``limit`` rows after ``offset``, one
    statement through the subject head index, the order and the cut in SQL. None
    when the index gives the prefix no range (``subject_range``)."""
    if not subject_prefix or subject_range(subject_prefix) is None:
        return None
    if not 0 < len(predicates) <= INLINE:
        raise ValueError("newest_rows takes 1 to INLINE predicates")
    q = facts_query(
        scope,
        valid_at=valid_at,
        known_at=known_at,
        states=frozenset({State.LIVE}),
        predicates=predicates,
        subject_prefix=subject_prefix,
        limit=limit,
        light=True,
    )
    return [
        FactRow(fid, vid, subj, skey, pred, obj, from_us(vf), end_dt(vt))
        for fid, vid, subj, skey, pred, obj, vf, vt in _newest_prepared(q.shape).rows(
            conn, {**q.params, "offset": offset}
        )
    ]


# A page of facts newest first (``newest_facts``): the order ``NEWEST_FIRST`` sorts in
def _newest_order() -> tuple[ColumnElement[Any], ...]:
    """Valid from and recorded at descending (negated: ``NEWEST_KEY``, what
    ``cm_versions_newest`` indexes), then the subject key in code point order (its
    head, then the key), predicate, version id."""
    c = versions.c
    return (*NEWEST_KEY, c.subject_key, c.predicate, c.id)


@functools.lru_cache(maxsize=64)
def _newest_facts_prepared(shape: _FactsShape) -> Prepared:
    """``shape``'s read (whole facts) in ``_newest_order``, after an offset."""
    q = (
        _facts_select(shape)
        .order_by(None)
        .order_by(*_newest_order())
        .offset(bindparam("offset", type_=BigInteger()))
    )
    return Prepared(q)


def newest_first(f: Fact) -> tuple[int, int, str, str, str, str]:
    """The sort key of ``newest_facts``' order, for facts read another way (the read
    log on): valid from descending, then recorded at descending, then the subject
    key in code point order (its first ``SUBJECT_HEAD`` characters, then the whole
    key), predicate, version id."""
    key = f.subject_key
    return (
        -to_us(f.valid_from),
        -to_us(f.recorded_at),
        key[:SUBJECT_HEAD],
        key,
        f.predicate,
        f.version_id,
    )


def newest_facts(
    conn: Connection,
    scope: Scope,
    *,
    valid_at: int,
    known_at: int | None,
    states: frozenset[State],
    predicate: str,
    limit: int,
    offset: int = 0,
) -> list[Fact]:
    """A page of the facts of one predicate (a stored name) in ``scope`` at the
    instants, newest version first (``newest_first``): at most ``limit`` after
    ``offset``, the order and the cut in SQL, then one statement for the page's
    sources. The rows returned follow the page, not the store."""
    q = facts_query(
        scope,
        valid_at=valid_at,
        known_at=known_at,
        states=states,
        predicates=[predicate],
        limit=limit,
        with_sources=False,
    )
    prepared = _newest_facts_prepared(q.shape)
    names = prepared.columns
    rows = [
        dict(zip(names, row, strict=True))
        for row in prepared.rows(conn, {**q.params, "offset": offset})
    ]
    found = sources_of(conn, q.params["tenant"], (r["fact_id"] for r in rows))
    return [
        to_fact(r, valid_at, found.get(r["fact_id"], ()), retracted_row=bool(r["_r"])) for r in rows
    ]


def episodes_query(scope: Scope) -> Select[Any]:
    return select(episodes_table).where(scope_visible(episodes_table, scope))


def enclosing_scopes(scope: Scope) -> list[Scope]:
    """``scope`` and every scope enclosing it in its tenant: the scopes whose rows
    ``scope_visible`` admits (each level the scope sets, set or unset)."""
    user, agent, session = scope_values(scope)
    return [
        Scope(scope.tenant, u, a, s)
        for u in dict.fromkeys((user, None))
        for a in dict.fromkeys((agent, None))
        for s in dict.fromkeys((session, None))
    ]


@functools.lru_cache(maxsize=16)
def _slots_prepared(levels: tuple[bool, bool, bool], as_of: bool) -> PreparedIn:
    """The live versions in a list of slots, visible in a scope of ``levels``,
    compiled once per list length (``PreparedIn``)."""
    valid_at = bindparam("valid_at", type_=BigInteger())
    known_at = bindparam("known_at", type_=BigInteger()) if as_of else None
    live = frozenset({State.LIVE})

    def make(binds: list[Any]) -> Select[Any]:
        return (
            select(*_READ_COLUMNS, _retracted_by(known_at).label("_r"))
            .where(
                scope_bound(versions, levels),
                versions.c.slot.in_(binds),
                temporal(live, valid_at, known_at),
            )
            .order_by(*_VERSION_ORDER)
        )

    return PreparedIn(make, "slot")


def slot_facts(
    conn: Connection, scope: Scope, *, valid_at: int, known_at: int | None, slots: Sequence[str]
) -> list[Fact]:
    """The live facts visible in ``scope`` at the instants whose versions sit in one
    of ``slots`` (slot keys), through the slot index (``cm_versions_slot_current``),
    so the rows read follow the slots asked: one prepared statement (per 512 slots),
    then one for the sources when a fact is found."""
    levels, params = scope_params(scope)
    params.update(valid_at=valid_at, known_at=known_at)
    prepared = _slots_prepared(levels, known_at is not None)
    names = prepared.columns
    rows = [
        dict(zip(names, row, strict=True))
        for row in prepared.rows(conn, params, list(dict.fromkeys(slots)))
    ]
    found = sources_of(conn, scope.tenant, (r["fact_id"] for r in rows))
    return [
        to_fact(r, valid_at, found.get(r["fact_id"], ()), retracted_row=bool(r["_r"])) for r in rows
    ]


def count_facts(
    conn: Connection, scope: Scope, *, valid_at: int, known_at: int | None, predicate: str
) -> int:
    """How many rows ``newest_facts`` (every page) or ``facts(predicate=…)`` would
    return for one predicate (a stored name) at the instants: one ``count(*)`` over
    the same statement, no row sent back or decoded."""
    q = facts_query(
        scope,
        valid_at=valid_at,
        known_at=known_at,
        states=frozenset({State.LIVE}),
        predicates=[predicate],
        light=True,
    )
    rows = _facts_select(q.shape).order_by(None).subquery()
    return int(conn.execute(select(func.count()).select_from(rows), q.params).scalar_one())
