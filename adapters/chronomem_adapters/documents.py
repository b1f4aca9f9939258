"""Facts and episodes as framework documents: one readable line, JSON-safe metadata.

Framework retrievers and memories hand a model only text (LangChain's
``create_retriever_tool`` shows ``page_content`` and nothing else), so the
line itself carries the validity interval and, for anything not live, the
state: ``Alice lives in Paris (2025-09-01 → 2026-06-01, ended)``. Stored text
is flattened by ``chronomem.render.flatten`` (no line breaks, control
characters or frame brackets reach a prompt). Metadata holds only JSON types
(ISO-8601 strings for instants), so it survives ``json.dumps``, LangChain
serialisation and LlamaIndex ``Context.to_dict``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chronomem import Episode, Fact, State
from chronomem.render import flatten, said

JSON = dict[str, Any]


def _day(d: datetime) -> str:
    if (d.hour, d.minute, d.second, d.microsecond) == (0, 0, 0, 0):
        return d.date().isoformat()
    return d.strftime("%Y-%m-%d %H:%M UTC")


def _iso(d: datetime | None) -> str | None:
    return None if d is None else d.isoformat()


def interval_text(fact: Fact) -> str:
    """``2025-09-01 → 2026-06-01``, ``since 2025-09-01`` or ``from 2026-08-01``."""
    start = _day(fact.valid_from)
    if fact.valid_to is not None:
        return f"{start} → {_day(fact.valid_to)}"
    return f"from {start}" if fact.state is State.SCHEDULED else f"since {start}"


def fact_text(fact: Fact) -> str:
    """One line a model can read: the statement, its validity and (unless live) state."""
    statement = " ".join(
        flatten(part) for part in (fact.subject, fact.predicate.replace("_", " "), fact.object)
    )
    state = "" if fact.state is State.LIVE else f", {fact.state.value}"
    return f"{statement} ({interval_text(fact)}{state})"


def episode_text(episode: Episode, past_label: str | None = None) -> str:
    """``[2026-01-02] user: …`` — when it was said, by whom, what; an episode a
    search found stale says it is past: ``[2026-01-02, since superseded: user
    lives in Berlin] user: …`` (``chronomem.render.said``, the one rendering)."""
    return said(episode, past_label, when=_day(episode.occurred_at))


def explain_summary(explain: dict[str, Any]) -> JSON:
    """The per-leg ranks and the fused score, JSON-safe and short."""
    out: JSON = {}
    legs = explain.get("legs")
    if isinstance(legs, dict):
        out["legs"] = {
            str(name): int(leg["rank"])
            for name, leg in legs.items()
            if isinstance(leg, dict) and isinstance(leg.get("rank"), int)
        }
    for key in ("rrf", "recency", "score", "degraded"):
        value = explain.get(key)
        if isinstance(value, bool | int | float):
            out[key] = value
    staleness = explain.get("staleness")
    if isinstance(staleness, dict) and isinstance(staleness.get("status"), str):
        out["staleness"] = staleness["status"]
    return out


def fact_metadata(fact: Fact, *, score: float | None = None, explain: Any = None) -> JSON:
    """Everything about a fact version, JSON-safe."""
    meta: JSON = {
        "kind": "fact",
        "fact_id": fact.id,
        "version_id": fact.version_id,
        "subject": fact.subject,
        "predicate": fact.predicate,
        "object": fact.object,
        "state": fact.state.value,
        "valid_from": _iso(fact.valid_from),
        "valid_to": _iso(fact.valid_to),
        "recorded_at": _iso(fact.recorded_at),
        "superseded_at": _iso(fact.superseded_at),
        "source_episode_ids": list(fact.source_episode_ids),
    }
    if score is not None:
        meta["score"] = float(score)
    if isinstance(explain, dict) and explain:
        meta["explain"] = explain_summary(explain)
    return meta


def episode_metadata(
    episode: Episode, *, score: float | None = None, explain: Any = None, hit: Any = None
) -> JSON:
    """Everything about an episode, JSON-safe; from a search ``hit``, also its
    status at the search's instant and, when stale, what replaced it."""
    meta: JSON = {
        "kind": "episode",
        "episode_id": episode.id,
        "role": episode.role,
        "occurred_at": _iso(episode.occurred_at),
        "recorded_at": _iso(episode.recorded_at),
    }
    if hit is not None and getattr(hit, "episode_status", None) is not None:
        meta["episode_status"] = hit.episode_status
        if hit.past_label:
            meta["past_label"] = hit.past_label
            meta["superseded_by"] = [f.version_id for f in hit.superseded_by]
    if score is not None:
        meta["score"] = float(score)
    if isinstance(explain, dict) and explain:
        meta["explain"] = explain_summary(explain)
    return meta


@dataclass(frozen=True)
class HitDocument:
    """A search hit as a framework document needs it: id, text, metadata, score."""

    id: str
    text: str
    metadata: JSON
    score: float


def hit_document(hit: Any) -> HitDocument:
    """A ``chronomem`` search hit (fact or episode) as a ``HitDocument``."""
    if hit.fact is not None:
        f: Fact = hit.fact
        return HitDocument(
            f.version_id,
            fact_text(f),
            fact_metadata(f, score=hit.score, explain=hit.explain),
            float(hit.score),
        )
    e: Episode = hit.episode
    return HitDocument(
        e.id,
        episode_text(e, getattr(hit, "past_label", None)),
        episode_metadata(e, score=hit.score, explain=hit.explain, hit=hit),
        float(hit.score),
    )


def fact_document(fact: Fact, score: float | None = None) -> HitDocument:
    return HitDocument(
        fact.version_id, fact_text(fact), fact_metadata(fact, score=score), float(score or 0.0)
    )
