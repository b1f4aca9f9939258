"""The read predicates of docs/design.md §4 as SQL, and rows turned into values.

known at t : recorded_at <= t AND (superseded_at IS NULL OR superseded_at > t)
live       : known at t AND valid_from <= v AND (valid_to IS NULL OR valid_to > v)
ended      : known at t AND valid_to <= v
scheduled  : known at t AND valid_from > v
retracted  : a version recorded <= t was closed as retracted at or before t,
             and no version of that fact is known at t
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Connection,
    FunctionElement,
    LargeBinary,
    Select,
    Table,
    and_,
    exists,
    false,
    literal,
    or_,
    select,
    type_coerce,
)
from sqlalchemy.ext.compiler import compiles

from .batching import chunks
from .identity import key_hash
from .model import Episode, Fact, State
from .schema import episodes as episodes_table
from .schema import sources as sources_table
from .schema import versions
from .scope import Scope
from .statemachine import RETRACTED
from .timeutil import end_dt, from_us, opt_dt


def scope_visible(table: Table, scope: Scope) -> ColumnElement[bool]:
    """Rows of this scope and of its ancestors; never a sibling's. Equality only."""
    conds: list[ColumnElement[bool]] = [table.c.tenant == scope.tenant]
    for column, value in (
        ("user_id", scope.user),
        ("agent_id", scope.agent),
        ("session_id", scope.session),
    ):
        conds.append(table.c[column].in_(["", value]) if value else table.c[column] == "")
    return and_(*conds)


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


def subject_is(key: str) -> ColumnElement[bool]:
    """``subject_key == key``, through the (indexed) hash of the key."""
    return and_(versions.c.subject_hash == key_hash(key), versions.c.subject_key == key)


def subject_in(keys: Sequence[str]) -> ColumnElement[bool]:
    """``subject_key IN keys``, through the (indexed) hashes of the keys.

    ``predicate >= ''`` is always true (predicates are non-empty text); it is there
    for SQLite's planner, which without statistics reads ``subject_hash IN (…)
    … ORDER BY`` through the ``superseded_at`` index — every current row of the
    tenant, so a read of a few subjects would cost the store's size. The range
    on the subject indexes' third column makes them the better choice."""
    return and_(
        versions.c.subject_hash.in_([key_hash(k) for k in keys]),
        versions.c.subject_key.in_(list(keys)),
        versions.c.predicate >= "",
    )


def known(known_at: int | None, table: Any = versions) -> ColumnElement[bool]:
    if known_at is None:  # latest: everything recorded so far
        return table.c.superseded_at.is_(None)
    # ``+ 0`` keeps planners off the recorded_at index: the subject/slot indexes
    # are far more selective, and an as-of read should cost what a current one does.
    return and_(
        (table.c.recorded_at + 0) <= known_at,
        or_(table.c.superseded_at.is_(None), table.c.superseded_at > known_at),
    )


def in_states(
    states: Iterable[State], valid_at: int, table: Table = versions
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


def temporal(states: Iterable[State], valid_at: int, known_at: int | None) -> ColumnElement[bool]:
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


def _retracted_by(known_at: int | None) -> ColumnElement[bool]:
    """Closed as retracted at or before ``known_at`` (exclusive with ``known``)."""
    closed = (
        versions.c.superseded_at.is_not(None)
        if known_at is None
        else and_(versions.c.recorded_at <= known_at, versions.c.superseded_at <= known_at)
    )
    return and_(versions.c.closed_reason == RETRACTED, closed)


_LATER = versions.alias("later")


def retracted(known_at: int | None) -> ColumnElement[bool]:
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
        metadata=json.loads(row["metadata"]),
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


def sources_of(conn: Connection, tenant: str, fact_ids: Iterable[str]) -> dict[str, list[str]]:
    ids = list(dict.fromkeys(fact_ids))
    out: dict[str, list[str]] = {}
    for chunk in chunks(ids):
        rows = conn.execute(
            select(sources_table.c.fact_id, sources_table.c.episode_id)
            .where(sources_table.c.tenant == tenant, sources_table.c.fact_id.in_(chunk))
            .order_by(sources_table.c.recorded_at, sources_table.c.episode_id)
        )
        for fid, eid in rows:
            out.setdefault(fid, []).append(eid)
    return out


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
) -> Select[Any]:
    """One SELECT for a facts() read: scope and time predicates applied in SQL."""
    filters: list[ColumnElement[bool]] = [scope_visible(versions, scope)]
    if subject_key is not None:
        filters.append(subject_is(subject_key))
    if predicates is not None:
        filters.append(versions.c.predicate.in_(list(predicates)))
    if object_key is not None:
        filters.append(versions.c.object_key == object_key)
    if fact_ids is not None:
        filters.append(versions.c.fact_id.in_(list(fact_ids)))
    if subject_prefix is not None:
        filters.append(prefix_match(versions.c.subject_key, subject_prefix))
    if subject_keys is not None:
        filters.append(subject_in(subject_keys))
    return (
        select(versions, _retracted_by(known_at).label("_r"))
        .where(*filters, temporal(states, valid_at, known_at))
        .order_by(
            versions.c.subject_key,
            versions.c.predicate,
            versions.c.valid_from,
            versions.c.object_key,
            versions.c.id,
        )
    )


def episodes_query(scope: Scope) -> Select[Any]:
    return select(episodes_table).where(scope_visible(episodes_table, scope))
