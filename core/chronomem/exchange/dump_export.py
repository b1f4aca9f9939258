"""Export: a tenant's (or scope's) rows as dump records, header first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from sqlalchemy import exists, func, select

from .. import reads
from ..batching import chunks
from ..schema import episodes, sources, versions
from ..schema import predicates as predicates_table
from .common import FORMAT, SCOPE_COLUMNS, VERSION_OPT_TEXT, VERSION_TEXT, bar, instant

if TYPE_CHECKING:
    from ..memory import Memory


# -- export -------------------------------------------------------------------------------
def _scope_of(row: Any) -> dict[str, str]:
    return {name: row[col] for name, col in SCOPE_COLUMNS if row[col]}


def _meta(text: str) -> Any:
    return json.loads(text) if text else {}


def _episode_record(e: Any) -> dict[str, Any]:
    return {
        "type": "episode",
        "id": e["id"],
        "scope": _scope_of(e),
        "role": e["role"],
        "text": e["text"],
        "occurred_at": instant(e["occurred_at"]),
        "recorded_at": instant(e["recorded_at"]),
        "metadata": _meta(e["metadata"]),
        "content_hash": e["content_hash"],
    }


def export_records(memory: Memory, *, progress: bool = False) -> Iterator[dict[str, Any]]:
    """The dump of ``memory``'s scope (and the scopes under it) as records, header
    first, read in one snapshot. It holds what import needs: the episodes of
    enclosing scopes that its facts cite, and in the header the ids of successors
    an erase removed (``erased_successors``: a chain that ends there is not a
    truncated dump)."""
    memory._engine.check_open()
    scope = memory.scope
    t = scope.tenant
    sh = memory._engine
    vis_v = reads.scope_within(versions, scope)
    vis_e = reads.scope_within(episodes, scope)
    later = versions.alias("later")
    with sh.backend.snapshot_read() as conn:
        n_versions = conn.execute(select(func.count()).where(vis_v)).scalar_one()
        n_episodes = conn.execute(select(func.count()).where(vis_e)).scalar_one()
        preds = conn.execute(
            select(predicates_table)
            .where(predicates_table.c.tenant == t)
            .order_by(predicates_table.c.name)
        ).mappings()
        pred_rows = [dict(r) for r in preds]
        fact_ids = set(conn.execute(select(versions.c.fact_id).where(vis_v).distinct()).scalars())
        src_rows = [
            dict(r)
            for r in conn.execute(
                select(sources)
                .where(sources.c.tenant == t)
                .order_by(sources.c.recorded_at, sources.c.fact_id, sources.c.episode_id)
            ).mappings()
            if r["fact_id"] in fact_ids
        ]
        cited = sorted({s["episode_id"] for s in src_rows})
        outer: list[dict[str, Any]] = [
            dict(r)
            for chunk in chunks(cited)
            for r in conn.execute(
                select(episodes).where(episodes.c.tenant == t, episodes.c.id.in_(chunk), ~vis_e)
            ).mappings()
        ]
        outer.sort(key=lambda e: (e["recorded_at"], e["id"]))
        gone = sorted(
            conn.execute(
                select(versions.c.superseded_by)
                .where(vis_v, versions.c.superseded_by.is_not(None))
                .where(~exists().where(later.c.tenant == t, later.c.id == versions.c.superseded_by))
                .distinct()
            ).scalars()
        )
        n_episodes += len(outer)
        yield {
            "type": "chronomem",
            "format": FORMAT,
            "tenant": t,
            "scope": {k: v for k, v in (("user", scope.user), ("agent", scope.agent),
                                        ("session", scope.session)) if v},
            "exported_at": memory.now().isoformat(),
            "counts": {
                "predicates": len(pred_rows),
                "episodes": n_episodes,
                "versions": n_versions,
                "sources": len(src_rows),
            },
            "erased_successors": gone,
        }  # fmt: skip
        total = len(pred_rows) + n_episodes + n_versions + len(src_rows)
        progress_bar = bar(total, "export", progress)
        try:
            for p in pred_rows:
                yield {"type": "predicate", **{k: v for k, v in p.items() if k != "tenant"}}
                progress_bar.update()
            for e in outer:
                yield _episode_record(e)
                progress_bar.update()
            for row in conn.execute(
                select(episodes).where(vis_e).order_by(episodes.c.recorded_at, episodes.c.id)
            ).mappings():
                yield _episode_record(row)
                progress_bar.update()
            for v in conn.execute(
                select(versions).where(vis_v).order_by(versions.c.recorded_at, versions.c.id)
            ).mappings():
                yield {
                    "type": "version",
                    "id": v["id"],
                    "fact_id": v["fact_id"],
                    "scope": _scope_of(v),
                    **{k: v[k] for k in VERSION_TEXT},
                    "valid_from": instant(v["valid_from"]),
                    "valid_to": instant(v["valid_to"]),
                    "recorded_at": instant(v["recorded_at"]),
                    "superseded_at": instant(v["superseded_at"]),
                    **{k: v[k] for k in VERSION_OPT_TEXT},
                    "metadata": _meta(v["metadata"]),
                    "content_hash": v["content_hash"],
                }
                progress_bar.update()
            for s in src_rows:
                yield {
                    "type": "source",
                    "fact_id": s["fact_id"],
                    "episode_id": s["episode_id"],
                    "recorded_at": instant(s["recorded_at"]),
                    "extractor": s["extractor"],
                }
                progress_bar.update()
        finally:
            progress_bar.close()


def export_jsonl(memory: Memory, out: IO[str], *, progress: bool = False) -> dict[str, int]:
    """Write the dump of ``memory``'s scope to ``out``; returns the record counts."""
    counts: dict[str, int] = {}
    for rec in export_records(memory, progress=progress):
        out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        if rec["type"] != "chronomem":
            counts[rec["type"]] = counts.get(rec["type"], 0) + 1
    return counts
