"""What the agent knew: ``memory.served(run=...)`` lists each served item, its
state then, and what happened to it since (ended, corrected, retracted, erased)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from .. import reads as reads_sql
from ..model import CloseReason, Fact, State
from ..schema import episodes as episodes_table
from ..schema import versions
from ..timeutil import to_us
from .queries import by_id, get_read, reads
from .records import Served, ServedItem

if TYPE_CHECKING:
    from ..memory import Memory


def served(
    mem: Memory,
    *,
    run: str | None = None,
    read_ids: Sequence[str] | None = None,
    since: datetime | None = None,
    tag: Mapping[str, str] | None = None,
) -> Served:
    """Each item served to the selected reads, its state then and what changed since."""
    if read_ids is not None:
        entries = [get_read(mem, r) for r in read_ids]
    else:
        entries = reads(mem, run=run, since=since, tag=tag)
    report = Served(entries)
    now = mem._engine.now_us()
    t = mem.scope.tenant
    vids = {i.id for e in entries for i in e.items if i.kind == "v" and not i.erased}
    eids = {i.id for e in entries for i in e.items if i.kind == "e" and not i.erased}
    with mem._engine.backend.read() as conn:
        rows = by_id(conn, t, versions, vids)
        successors = by_id(
            conn, t, versions, {r["superseded_by"] for r in rows.values() if r["superseded_by"]}
        )
        eps = by_id(conn, t, episodes_table, eids)
        replacements = {
            vid: _correction_of(conn, t, r)
            for vid, r in rows.items()
            if r["closed_reason"] == CloseReason.RETRACTED
        }
    for e in entries:
        v_then = to_us(e.args["valid_at"] if e.args.get("valid_at") else e.args["as_of"], "at")
        for it in e.items:
            if it.kind == "e":
                ep = eps.get(it.id)
                report.items.append(
                    ServedItem(
                        e.id,
                        e.at,
                        "e",
                        it.id,
                        it.score,
                        reads_sql.to_episode(ep) if ep is not None else None,
                        None,
                        "unchanged" if ep is not None else "erased",
                    )
                )
                continue
            row = rows.get(it.id)
            if row is None:
                report.items.append(
                    ServedItem(e.id, e.at, "v", it.id, it.score, None, it.state, "erased")
                )
                continue
            then = reads_sql.to_fact(row, v_then)
            then = _as_served(then, it.state)
            change, current = _change(row, successors, now, it.state)
            if change == "retracted" and replacements.get(it.id) is not None:
                change, current = "corrected", reads_sql.to_fact(replacements[it.id], now)
            report.items.append(
                ServedItem(e.id, e.at, "v", it.id, it.score, then, it.state, change, current)
            )
    return report


def _as_served(f: Fact, state: str | None) -> Fact:
    from dataclasses import replace

    return replace(f, state=State(state)) if state else f


def _change(
    row: Mapping[str, Any], successors: Mapping[str, Any], now: int, state_then: str | None
) -> tuple[str, Fact | None]:
    if row["superseded_at"] is not None:
        reason = row["closed_reason"]
        if reason == CloseReason.RETRACTED:
            return "retracted", None
        nxt = successors.get(row["superseded_by"] or "")
        if reason == CloseReason.ENDED:
            return "ended", reads_sql.to_fact(nxt, now) if nxt is not None else None
        current = reads_sql.to_fact(nxt, now) if nxt is not None else None
        if current is not None and current.object_key == row["object_key"]:
            # the same value rewritten (a changed validity): ended if it no longer holds
            return ("ended" if current.state != State.LIVE else "unchanged"), current
        return "corrected", current
    if state_then == State.LIVE.value and reads_sql.state_of(row, now) == State.ENDED:
        return "ended", None
    return "unchanged", None


def _correction_of(conn: Connection, tenant: str, row: Mapping[str, Any]) -> Any:
    """``correct`` retracts a version and writes the right value over the same valid
    interval in the same transaction: that version, if this retraction was one."""
    return (
        conn.execute(
            select(versions).where(
                versions.c.tenant == tenant,
                versions.c.subject_hash == row["subject_hash"],
                versions.c.predicate == row["predicate"],
                versions.c.recorded_at == row["superseded_at"],
                versions.c.valid_from == row["valid_from"],
                versions.c.id != row["id"],
            )
        )
        .mappings()
        .first()
    )
