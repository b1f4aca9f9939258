"""Episodes: the raw records (messages, task outputs, documents) facts cite.

Validation lives in ``Memory``; these functions take the engine and a scope
and run the SQL (docs/design.md §5)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, or_, select

from . import reads
from .engine import Engine
from .model import Episode
from .schema import episodes as episodes_table
from .scope import Scope
from .statemachine import new_id
from .writer import content_hash, stamp

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
        conn.execute(episodes_table.insert(), rows)
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
    bounded statement over ``cm_episodes_recent``."""
    c = episodes_table.c
    q = select(episodes_table).where(
        *(c[k] == v for k, v in scope.columns().items()),
    )
    if before is not None:
        at, eid = before
        q = q.where(or_(c.recorded_at < at, and_(c.recorded_at == at, c.id < eid)))
    if known_at is not None:
        q = q.where(c.recorded_at <= known_at)
    q = q.order_by(c.recorded_at.desc(), c.id.desc()).limit(limit)
    with engine.backend.read() as conn:
        return [reads.to_episode(r) for r in conn.execute(q).mappings()]
