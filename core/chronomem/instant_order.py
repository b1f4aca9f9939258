"""A page of one predicate's current facts ordered by an instant in their metadata
(``Memory.newest_by_instant``, issue #32): a walk of the ``schema.INSTANT_ORDERS``
index for that predicate and metadata key, backwards, cut in SQL, so the rows read
follow the page, not the store."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import Select, and_, bindparam, false, literal, literal_column, or_, select

from . import backends, reads
from .backends import Backend
from .engine import Engine
from .model import Fact, State
from .prefixes import _CodePoints
from .schema import INSTANT_ORDERS, SubjectHead, instant_key, versions
from .scope import Scope

LIVE = frozenset({State.LIVE})


def index_for(predicate: str, key: str) -> str | None:
    """The ``INSTANT_ORDERS`` index ordering ``predicate``'s versions by ``key``."""
    return next(
        (n for n, (p, path) in INSTANT_ORDERS.items() if (p, path) == (predicate, (key,))), None
    )


def _statements(
    backend: type[Backend], levels: tuple[bool, bool, bool], name: str
) -> tuple[Select[Any], Select[Any]]:
    """The page (the live versions visible in a scope of ``levels`` at ``valid_at``,
    the instant descending, then the subject key descending in code point order, then
    valid from, object key and version id ascending; ``limit`` after ``offset``) and
    the probe for a current version whose key is no such instant, both over the
    index's own expressions and ``WHERE`` terms, so the index serves them. Built
    once per dialect, scope shape and index."""
    cache_key = (backend.name, levels, name)
    if cache_key in _BUILT:
        return _BUILT[cache_key]
    predicate, path = INSTANT_ORDERS[name]
    c = versions.c
    key = instant_key(backend, c.metadata, path)
    named = c.predicate == literal_column(f"'{predicate}'")  # the index's second column
    held = backend.partial_index_term(c.predicate, predicate)  # its WHERE's own term: a
    # partial index serves a statement whose terms imply its WHERE (where the two are
    # one term, it is written once: a repeated term halves PostgreSQL's row estimate)
    current = (*((named,) if held.compare(named) else (named, held)), c.superseded_at.is_(None))
    page = (
        select(*reads._READ_COLUMNS, reads._retracted_by(None).label("_r"))
        .where(
            reads.scope_bound(versions, levels),
            *current,
            reads.temporal(LIVE, bindparam("valid_at"), None),
        )
        .order_by(*_page_order(key))
        .limit(bindparam("limit"))
        .offset(bindparam("offset"))
    )
    unshaped = (
        select(literal(1)).where(c.tenant == bindparam("tenant"), *current, key.is_(None)).limit(1)
    )
    _BUILT[cache_key] = page, unshaped
    return page, unshaped


def _page_order(key: Any) -> tuple[Any, ...]:
    """A page's order: the instant, newest first, then the subject key (its head,
    then its code points), then the version's own valid start, object and id."""
    c = versions.c
    return (
        key.desc(),
        SubjectHead(c.subject_key).desc(),
        _CodePoints(c.subject_key).desc(),
        c.valid_from,
        c.object_key,
        c.id,
    )


_BUILT: dict[tuple[str, tuple[bool, bool, bool], str], tuple[Select[Any], Select[Any]]] = {}


def _past_statements(
    backend: type[Backend], levels: tuple[bool, bool, bool], name: str
) -> tuple[Select[Any], Select[Any]]:
    """``_statements`` as believed at ``known_at``: the page walks ``history_order``'s
    index (every version of the predicate, schema v14) with the temporal filter
    (recorded by then, closed after it, valid at ``valid_at``); the probe looks for
    a version believed then whose key is no such instant."""
    cache_key = (backend.name, levels, name)
    if cache_key in _PAST:
        return _PAST[cache_key]
    predicate, path = INSTANT_ORDERS[name]
    c = versions.c
    key = instant_key(backend, c.metadata, path)
    named = c.predicate == literal_column(f"'{predicate}'")
    held = backend.partial_index_term(c.predicate, predicate)
    terms = (named,) if held.compare(named) else (named, held)
    t: Any = bindparam("known_at")
    # ``+ 0`` (as ``reads.known``): no planner walks the recorded_at or superseded_at
    # index, out of the page's order, instead
    believed = and_(
        (c.recorded_at + 0) <= t, or_(c.superseded_at.is_(None), (c.superseded_at + 0) > t)
    )
    page = (
        select(*reads._READ_COLUMNS, false().label("_r"))  # believed then: not retracted by then
        .where(
            reads.scope_bound(versions, levels),
            *terms,
            believed,
            reads.in_states(LIVE, bindparam("valid_at")),
        )
        .order_by(*_page_order(key))
        .limit(bindparam("limit"))
        .offset(bindparam("offset"))
    )
    unshaped = (
        select(literal(1))
        .where(c.tenant == bindparam("tenant"), *terms, key.is_(None), believed)
        .limit(1)
    )
    _PAST[cache_key] = page, unshaped
    return page, unshaped


_PAST: dict[tuple[str, tuple[bool, bool, bool], str], tuple[Select[Any], Select[Any]]] = {}


def newest_by_instant(
    engine: Engine,
    scope: Scope,
    valid_at: int,
    predicate: str,
    key: str,
    limit: int,
    offset: int,
    where: Callable[[Mapping[str, Any]], bool] | None = None,
    known_at: int | None = None,
) -> list[Fact] | None:
    """``Memory.newest_by_instant`` (see there) at resolved instants, in one read
    transaction: the probe, then pages of the index (doubling while ``where`` drops
    rows; as believed at ``known_at``, the index of every version: ``_past_statements``),
    then the page's sources. None when no index orders ``predicate`` by ``key`` or
    a version of it in the tenant believed then has no such instant."""
    name = index_for(predicate, key)
    if name is None:
        return None
    if limit == 0:
        return []
    levels, params = reads.scope_params(scope)
    params["valid_at"] = valid_at
    want = offset + limit
    kept: list[Any] = []  # row mappings
    with engine.backend.read() as conn:
        backend = backends.of(conn)
        if known_at is None:
            page, unshaped = _statements(backend, levels, name)
            if conn.execute(unshaped, {"tenant": scope.tenant}).first() is not None:
                return None
        else:
            params["known_at"] = known_at
            page, probe = _past_statements(backend, levels, name)
            if conn.execute(probe, {"tenant": scope.tenant, "known_at": known_at}).first():
                return None
        skip, n = (0, want) if where is not None else (offset, limit)
        while True:
            rows = [r._mapping for r in conn.execute(page, {**params, "limit": n, "offset": skip})]
            kept += rows if where is None else [r for r in rows if where(json.loads(r["metadata"]))]
            if where is None or len(kept) >= want or len(rows) < n:
                break
            skip, n = skip + n, 2 * n
        chosen = kept if where is None else kept[offset:want]
        found = reads.sources_of(conn, scope.tenant, (r["fact_id"] for r in chosen))
    return [
        reads.to_fact(r, valid_at, found.get(r["fact_id"], ()), retracted_row=bool(r["_r"]))
        for r in chosen
    ]
