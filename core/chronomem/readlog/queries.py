"""Reading the log: the reads made in a scope, one read by id, and the served rows by id."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from .. import reads as reads_sql
from ..batching import chunks
from ..errors import NotFound
from ..identity import require_id
from ..schema import read_items, read_log
from ..timeutil import from_us, to_us
from .args import decode
from .batch import flush
from .records import Read, ReadItem

if TYPE_CHECKING:
    from ..memory import Memory


def reads(
    mem: Memory,
    *,
    run: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    op: str | None = None,
    tag: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> list[Read]:
    """The reads made in this scope and the scopes under it, oldest first."""
    mem._engine.check_open()
    flush(mem)
    t = mem.scope.tenant
    q = select(read_log).where(reads_sql.scope_within(read_log, mem.scope))
    if run is not None:
        q = q.where(read_log.c.run == run)
    if since is not None:
        q = q.where(read_log.c.at_us >= to_us(since, "since"))
    if until is not None:
        q = q.where(read_log.c.at_us <= to_us(until, "until"))
    if op is not None:
        q = q.where(read_log.c.op == op)
    q = q.order_by(read_log.c.at_us, read_log.c.id)
    with mem._engine.backend.read() as conn:
        rows = conn.execute(q).mappings().all()
        wanted = dict(tag or {})
        rows = [r for r in rows if _tag_matches(r["tag"], wanted)]
        if limit is not None:
            rows = rows[:limit]
        items = _items_of(conn, t, [r["id"] for r in rows])
    return [_to_read(r, items.get(r["id"], [])) for r in rows]


def _tag_matches(raw: str, wanted: Mapping[str, str]) -> bool:
    if not wanted:
        return True
    have = json.loads(raw)
    return all(have.get(k) == v for k, v in wanted.items())


def _items_of(conn: Connection, tenant: str, ids: Sequence[str]) -> dict[str, list[ReadItem]]:
    out: dict[str, list[ReadItem]] = {}
    for chunk in chunks(ids):
        rows = conn.execute(
            select(read_items)
            .where(read_items.c.tenant == tenant, read_items.c.read_id.in_(chunk))
            .order_by(read_items.c.read_id, read_items.c.pos)
        ).mappings()
        for r in rows:
            out.setdefault(r["read_id"], []).append(
                ReadItem(r["kind"], r["item_id"], r["score"], r["state"], bool(r["erased"]))
            )
    return out


def _to_read(row: Mapping[Any, Any], items: list[ReadItem]) -> Read:
    scope = reads_sql.scope_of(row)
    return Read(
        id=row["id"],
        at=from_us(row["at_us"]),
        op=row["op"],
        scope=scope,
        args=decode(json.loads(row["args"])),
        items=items,
        tag=json.loads(row["tag"]),
        erased=bool(row["erased"]),
    )


def get_read(mem: Memory, read_id: str) -> Read:
    mem._engine.check_open()
    flush(mem)
    rid = require_id(read_id, "read_id")
    with mem._engine.backend.read() as conn:
        row = (
            conn.execute(
                select(read_log).where(
                    reads_sql.scope_within(read_log, mem.scope), read_log.c.id == rid
                )
            )
            .mappings()
            .first()
        )
        if row is None:
            raise NotFound(f"no read {rid!r} in this scope")
        items = _items_of(conn, mem.scope.tenant, [rid])
    return _to_read(row, items.get(rid, []))


def by_id(
    conn: Connection, tenant: str, table: Any, ids: set[str], *, columns: Sequence[Any] = ()
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    ordered = sorted(ids)
    for chunk in chunks(ordered):
        for r in conn.execute(
            select(*(columns or (table,))).where(table.c.tenant == tenant, table.c.id.in_(chunk))
        ).mappings():
            out[r["id"]] = r
    return out
