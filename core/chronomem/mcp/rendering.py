"""What the MCP tools return: every result twice, as structured content (plain
JSON data) and as text a model can read, both carrying the two clocks and the
state of every fact.

Stored text is data: in the readable lines each value is flattened to one line
(``chronomem.render.flatten``), so a stored value cannot forge a line."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..model import Episode, Fact, Provenance, Receipt
from ..render import flatten


@dataclass(frozen=True)
class Result:
    """One tool's answer: ``data`` for structured content, ``text`` for a model."""

    data: dict[str, Any]
    text: str


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.isoformat()


def fact_data(f: Fact) -> dict[str, Any]:
    return {
        "fact_id": f.id,
        "version_id": f.version_id,
        "subject": f.subject,
        "predicate": f.predicate,
        "object": f.object,
        "state": f.state.value,
        "valid_from": iso(f.valid_from),
        "valid_to": iso(f.valid_to),
        "recorded_at": iso(f.recorded_at),
        "superseded_at": iso(f.superseded_at),
        "source_episode_ids": list(f.source_episode_ids),
    }


def fact_line(f: Fact) -> str:
    """``alice | lives_in | Paris — live; valid 2026-01-01T… → …; recorded …; fact 3f2a…``"""
    return (
        f"{flatten(f.subject)} | {flatten(f.predicate)} | {flatten(f.object)} — {f.state.value}; "
        f"valid {iso(f.valid_from)} → {iso(f.valid_to) or 'open'}; "
        f"recorded {iso(f.recorded_at)}"
        f"{f'; superseded {iso(f.superseded_at)}' if f.superseded_at else ''}; fact {f.id}"
    )


def episode_data(e: Episode) -> dict[str, Any]:
    return {
        "episode_id": e.id,
        "text": e.text,
        "role": e.role,
        "occurred_at": iso(e.occurred_at),
        "recorded_at": iso(e.recorded_at),
    }


def episode_line(e: Episode) -> str:
    return f"episode {e.id} [{iso(e.occurred_at)}] {flatten(e.role or '-')}: {flatten(e.text)}"


def facts_result(facts: list[Fact], *, empty: str, **echo: Any) -> Result:
    lines = [fact_line(f) for f in facts] or [empty]
    return Result({**echo, "facts": [fact_data(f) for f in facts]}, "\n".join(lines))


def receipt_result(verb: str, r: Receipt, facts: list[Fact]) -> Result:
    """A write: what it changed and the facts it left current."""
    data = {
        "fact_ids": list(r.fact_ids),
        "added": list(r.added),
        "unchanged": list(r.unchanged),
        "ended": list(r.ended),
        "retracted": list(r.retracted),
        "superseded": list(r.superseded),
        "recorded_at": iso(r.recorded_at),
        "facts": [fact_data(f) for f in facts],
    }
    head = f"{verb}: {len(r.added)} added, {len(r.ended)} ended, {len(r.retracted)} retracted"
    if r.recorded_at is not None:
        head += f"; recorded {iso(r.recorded_at)}"
    return Result(data, "\n".join([head, *(fact_line(f) for f in facts)]))


def provenance_result(p: Provenance) -> Result:
    data = {
        "fact_id": p.fact_id,
        "versions": [fact_data(f) for f in p.versions],
        "episodes": [episode_data(e) for e in p.episodes],
        "extractors": list(p.extractors),
        "superseded": [fact_data(f) for f in p.superseded],
    }
    lines = [f"fact {p.fact_id}", "versions:", *(f"  {fact_line(f)}" for f in p.versions)]
    lines += ["source episodes:", *(f"  {episode_line(e)}" for e in p.episodes)]
    lines.append(f"extractors: {', '.join(flatten(x) for x in p.extractors) or '-'}")
    if p.superseded:
        lines += ["replaced:", *(f"  {fact_line(f)}" for f in p.superseded)]
    return Result(data, "\n".join(lines))
