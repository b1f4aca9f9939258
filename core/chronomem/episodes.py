"""Episodes: the raw records (messages, task outputs, documents) facts cite.

Validation lives in ``Memory``; these functions take the engine and a scope
and run the SQL (docs/design.md §5)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import BigInteger, bindparam, or_, select

from . import reads
from .backends import Backend, of
from .engine import Engine
from .model import Episode
from .prepared import Prepared as PreparedSelect
from .prepared import PreparedIn
from .schema import episodes as episodes_table
from .scope import Scope
from .statemachine import new_id
from .writer import content_hash, stamp

CHUNK = 500  # values per statement in ``tagged``
_SCOPE_COLUMNS = ("tenant", "user_id", "agent_id", "session_id")  # ``Scope.columns``' keys

# (text, role, occurred_at µs or None = the transaction time, metadata)
Prepared = tuple[str, str | None, int | None, dict[str, Any]]


def insert(engine: Engine, scope: Scope, prepared: Sequence[Prepared]) -> list[Episode]:
    """Store validated episodes in one transaction with one transaction time."""
    rows = []
    with engine.backend.write() as conn:
        tx = stamp(conn, scope.tenant, engine.tx_us())
        for text, role, occurred, meta in prepared:
            rows.append(
                {
                    **scope.columns(),
                    "id": new_id(),
                    "role": role,
                    "text": text,
                    "occurred_at": occurred if occurred is not None else tx,
                    "recorded_at": tx,
                    "metadata": json.dumps(meta, sort_keys=True, ensure_ascii=False),
                    "content_hash": content_hash(role or "", text),
                }
            )
        of(conn).insert_rows(conn, episodes_table, rows)  # one FTS5 segment per batch
        engine.on_episodes(conn, rows)
    return [reads.to_episode(r) for r in rows]


def get(engine: Engine, scope: Scope, episode_id: str) -> Episode | None:
    with engine.backend.read() as conn:
        row = (
            conn.execute(reads.episodes_query(scope).where(episodes_table.c.id == episode_id))
            .mappings()
            .first()
        )
    return reads.to_episode(row) if row is not None else None


def listing(
    engine: Engine,
    scope: Scope,
    *,
    since: int | None,
    until: int | None,
    known_at: int | None,
    role: str | None,
    limit: int | None,
) -> list[Episode]:
    """Episodes in occurrence order (then recording); with ``limit``, the latest
    ``limit`` of them, still in that order."""
    q = reads.episodes_query(scope)
    c = episodes_table.c
    if since is not None:
        q = q.where(c.occurred_at >= since)
    if until is not None:
        q = q.where(c.occurred_at < until)
    if known_at is not None:
        q = q.where(c.recorded_at <= known_at)
    if role is not None:
        q = q.where(c.role == role)
    if limit is None:
        q = q.order_by(c.occurred_at, c.recorded_at, c.id)
    else:
        q = q.order_by(c.occurred_at.desc(), c.recorded_at.desc(), c.id.desc()).limit(limit)
    with engine.backend.read() as conn:
        rows = [reads.to_episode(r) for r in conn.execute(q).mappings()]
    if limit is not None:
        rows.reverse()
    return rows


def latest(
    engine: Engine,
    scope: Scope,
    *,
    limit: int,
    before: tuple[int, str] | None,
    known_at: int | None,
) -> list[Episode]:
    """The newest ``limit`` episodes recorded in exactly ``scope`` (not an
    enclosing one), newest first by (transaction time, id); with ``before``
    (a ``(recorded_at µs, id)`` cursor), only those recorded before it. One
    bounded statement over ``cm_episodes_recent``, compiled once per shape
    (``_latest_statement``): a turn reads its transcript's tail a page or more
    at a time, and building the query cost more than running it."""
    prepared = _latest_statement(before is not None, known_at is not None)
    params: dict[str, Any] = {f"s_{k}": v for k, v in scope.columns().items()}
    params["limit"] = limit
    if before is not None:
        params["at"], params["eid"] = before
    if known_at is not None:
        params["known"] = known_at
    with engine.backend.read() as conn:
        found = prepared.rows(conn, params)
    cols = prepared.columns
    decode = reads.to_episode
    return [decode(dict(zip(cols, r, strict=True))) for r in found]


_LATEST: dict[tuple[bool, bool], PreparedSelect] = {}


def _latest_statement(before: bool, known_at: bool) -> PreparedSelect:
    """``latest``'s statement with (or without) the cursor and ``known_at`` terms."""
    found = _LATEST.get((before, known_at))
    if found is not None:
        return found
    c = episodes_table.c
    q = select(episodes_table).where(*(c[k] == bindparam(f"s_{k}") for k in _SCOPE_COLUMNS))
    if before:
        at: Any = bindparam("at")
        q = q.where(c.recorded_at <= at, or_(c.recorded_at < at, c.id < bindparam("eid")))
    if known_at:
        q = q.where(c.recorded_at <= bindparam("known"))
    q = q.order_by(c.recorded_at.desc(), c.id.desc()).limit(bindparam("limit", type_=BigInteger()))
    return _LATEST.setdefault((before, known_at), PreparedSelect(q))


def recorded(
    engine: Engine,
    scope: Scope,
    *,
    after: tuple[int, str] | None,
    known_at: int | None,
) -> list[Episode]:
    """The episodes recorded in exactly ``scope``, oldest first by (transaction
    time, id), after the ``after`` cursor: one statement, a range of
    ``cm_episodes_recent`` read in its own order (no sort, no enclosing scope).
    Compiled once per shape (``_recorded_statement``) and fetched whole: a
    transcript read returns every row, so the per-row cost is what counts."""
    prepared = _recorded_statement(after is not None, known_at is not None)
    params: dict[str, Any] = {f"s_{k}": v for k, v in scope.columns().items()}
    if after is not None:
        params["at"], params["eid"] = after
    if known_at is not None:
        params["known"] = known_at
    with engine.backend.read() as conn:
        found = prepared.rows(conn, params)
    cols = prepared.columns
    decode = reads.to_episode
    return [decode(dict(zip(cols, r, strict=True))) for r in found]


_RECORDED: dict[tuple[bool, bool], PreparedSelect] = {}


def _recorded_statement(after: bool, known_at: bool) -> PreparedSelect:
    """``recorded``'s statement with (or without) the cursor and ``known_at`` terms."""
    found = _RECORDED.get((after, known_at))
    if found is not None:
        return found
    c = episodes_table.c
    q = select(episodes_table).where(*(c[k] == bindparam(f"s_{k}") for k in _SCOPE_COLUMNS))
    if after:
        at: Any = bindparam("at")
        q = q.where(c.recorded_at >= at, or_(c.recorded_at > at, c.id > bindparam("eid")))
    if known_at:
        q = q.where(c.recorded_at <= bindparam("known"))
    return _RECORDED.setdefault((after, known_at), PreparedSelect(q.order_by(c.recorded_at, c.id)))


# metadata conditions: (path of object keys, the text that must be there)
Tag = tuple[Sequence[str], str]


def _json(engine: Engine, path: Sequence[str]) -> Any:
    """The text at ``path`` in an episode's metadata: the indexable form
    (``Backend.json_key``, schema v9) where the keys are simple, else bound."""
    backend = engine.backend
    try:
        return backend.json_key(episodes_table.c.metadata, path)
    except ValueError:
        return backend.json_text(episodes_table.c.metadata, path)


def _tagged_where(
    engine: Engine,
    scope: Scope,
    path: Sequence[str],
    values: Sequence[str],
    where: Sequence[Tag],
) -> list[Any]:
    c = episodes_table.c
    backend = engine.backend
    key = _json(engine, path)
    conds = [c[k] == v for k, v in scope.columns().items()]
    # ``IS NOT NULL`` names the partial index's own condition (schema v9)
    conds.append(key.is_not(None))
    conds.append(backend.one_of(key, [backend.json_key_value(v) for v in values]))
    conds.extend(_json(engine, p) == backend.json_key_value(v) for p, v in where)
    return conds


def tagged(
    engine: Engine,
    scope: Scope,
    path: Sequence[str],
    values: Sequence[str],
    *,
    where: Sequence[Tag] = (),
    after: tuple[int, str] | None = None,
    count: bool = False,
) -> list[Episode] | int:
    """The episodes recorded in exactly ``scope`` whose metadata holds one of
    ``values`` at ``path`` (and each ``where`` condition), recorded after the
    ``after`` cursor, in recording order; with ``count``, only how many. The
    statement is a search of the ``path``'s index (schema v9) by the values: it
    reads the matching rows, never the scope's other episodes. ``after`` filters
    those rows here, so no planner trades the index for a range on the cursor.
    Paths of simple keys (every index's) run a statement built and compiled once
    per shape (``_tagged_statement``): a transcript's id lookup, on every turn."""
    backend = engine.backend
    prepared = _tagged_statement(
        type(backend), tuple(path), tuple(tuple(p) for p, _ in where), count
    )
    if prepared is None:
        return _tagged_built(engine, scope, path, values, where=where, after=after, count=count)
    params: dict[str, Any] = {f"s_{k}": v for k, v in scope.columns().items()}
    params.update((f"w{i}", backend.json_key_value(v)) for i, (_, v) in enumerate(where))
    wanted = [backend.json_key_value(v) for v in values]
    with backend.read() as conn:
        found = prepared.rows(conn, params, wanted)
    if count:
        return sum(1 for at, eid in found if _later((at, eid), after))
    cols = prepared.columns
    mapped = (dict(zip(cols, r, strict=True)) for r in found)
    rows = [reads.to_episode(r) for r in mapped if _later((r["recorded_at"], r["id"]), after)]
    rows.sort(key=lambda e: (e.recorded_at, e.id))
    return rows


# (backend class, path, where paths, count) -> the statement (None: a path that
# is not simple keys, built per call by ``_tagged_built``); at most MAX_SHAPES
# kept (the paths are the caller's: an app inventing paths must not grow it)
_TAGGED: dict[tuple[Any, ...], PreparedIn | None] = {}
MAX_SHAPES = 64


def _tagged_statement(
    backend: type[Backend],
    path: tuple[str, ...],
    where: tuple[tuple[str, ...], ...],
    count: bool,
) -> PreparedIn | None:
    """``tagged``'s statement for this shape, made on first use: the scope's
    columns, the where conditions' texts and the values are bind parameters
    (``s_<column>``, ``w<i>``, the ``IN`` list), the JSON paths are written into
    the SQL as the index's expression (``Backend.json_key``)."""
    shape = (backend, path, where, count)
    if shape in _TAGGED:
        return _TAGGED[shape]
    c = episodes_table.c
    try:
        key = backend.json_key(c.metadata, path)
        extra = [backend.json_key(c.metadata, p) for p in where]
    except ValueError:
        if len(_TAGGED) < MAX_SHAPES:
            _TAGGED[shape] = None
        return None

    def make(binds: list[Any]) -> Any:
        conds = [c[k] == bindparam(f"s_{k}") for k in _SCOPE_COLUMNS]
        # ``IS NOT NULL`` names the partial index's own condition (schema v9)
        conds.append(key.is_not(None))
        conds.append(key.in_(binds))
        conds.extend(e == bindparam(f"w{i}") for i, e in enumerate(extra))
        cols = (c.recorded_at, c.id) if count else (episodes_table,)
        return select(*cols).where(*conds)

    made = PreparedIn(make)
    if len(_TAGGED) < MAX_SHAPES:
        made = _TAGGED.setdefault(shape, made)  # type: ignore[assignment]
    return made


def _tagged_built(
    engine: Engine,
    scope: Scope,
    path: Sequence[str],
    values: Sequence[str],
    *,
    where: Sequence[Tag],
    after: tuple[int, str] | None,
    count: bool,
) -> list[Episode] | int:
    """``tagged`` for a path that is not simple keys: built per call (bound path)."""
    c = episodes_table.c
    rows: list[Episode] = []
    n = 0
    with engine.backend.read() as conn:
        for at in range(0, len(values), CHUNK):
            conds = _tagged_where(engine, scope, path, values[at : at + CHUNK], where)
            if count:
                q = select(c.recorded_at, c.id).where(*conds)
                n += sum(1 for r in conn.execute(q) if _later((r[0], r[1]), after))
            else:
                q = select(episodes_table).where(*conds)
                found = conn.execute(q).mappings()
                rows.extend(
                    reads.to_episode(r) for r in found if _later((r["recorded_at"], r["id"]), after)
                )
    if count:
        return n
    rows.sort(key=lambda e: (e.recorded_at, e.id))
    return rows


def _later(row: tuple[int, str], after: tuple[int, str] | None) -> bool:
    return after is None or row > after
