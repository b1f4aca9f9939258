"""chronomem facts and episodes as CrewAI ``MemoryRecord``/``MemoryMatch`` values.

A record's ``content`` is the line a model reads: for a fact the shared
``fact_text`` ("dana lives in Paris (since 2026-01-01)", "(… → …, ended)"),
for an episode its dated text. ``created_at`` is naive UTC (CrewAI's scoring
subtracts it from ``datetime.utcnow()``; an aware value raises there). Scores
are mapped into [0, 1] (see ``unit_score``) so CrewAI's thresholds and its
composite scoring read them as it expects."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from crewai.memory.types import MemoryRecord

from chronomem import Episode, Fact
from chronomem.render import flatten
from chronomem_adapters.documents import episode_metadata, episode_text, fact_metadata, fact_text

from . import paths

# The key under which an episode's metadata keeps what CrewAI said about it.
CREW_KEY = "crewai"
# chronomem fuses its legs by reciprocal rank: 1 / (RRF_K + rank) per leg.
RRF_K = 60
LEGS = {"fact": 3, "episode": 2}  # fact: lexical, vector, entity graph; episode: lexical, vector


def naive_utc(d: datetime) -> datetime:
    """An aware instant as the naive UTC datetime CrewAI's records carry."""
    return d.astimezone(timezone.utc).replace(tzinfo=None)


def unit_score(score: float, kind: str) -> float:
    """A fused chronomem score in [0, 1]: 1.0 is first place in every leg of its
    kind (before the recency weighting), so scores are comparable across
    queries and CrewAI's 0.5/0.8 confidence thresholds keep a meaning."""
    top = LEGS.get(kind, 3) / (RRF_K + 1)
    return max(0.0, min(1.0, float(score) / top))


def crew_info(episode: Episode | None) -> dict[str, Any]:
    """What CrewAI said about an episode when it was remembered (scope, categories …)."""
    if episode is None:
        return {}
    info = episode.metadata.get(CREW_KEY)
    return dict(info) if isinstance(info, dict) else {}


def episode_record(episode: Episode, hit: Any = None) -> MemoryRecord:
    """An episode as a record; from a search ``hit`` a stale one says it is past."""
    info = crew_info(episode)
    meta = {**_user_meta(info), **episode_metadata(episode, hit=hit)}
    return MemoryRecord(
        id=episode.id,
        content=episode_text(episode, getattr(hit, "past_label", None)),
        scope=paths.normalize(info.get("scope")),
        categories=list(info.get("categories") or []),
        metadata=meta,
        importance=_importance(info),
        created_at=naive_utc(episode.recorded_at),
        last_accessed=naive_utc(episode.recorded_at),
        source=info.get("source"),
        private=bool(info.get("private", False)),
    )


def fact_record(fact: Fact, sources: list[Episode]) -> MemoryRecord:
    """A fact version as a record; scope, categories and privacy come from the
    episode it was read from (the first one), its text lists every source."""
    info = crew_info(sources[0]) if sources else {}
    meta = {**_user_meta(info), **fact_metadata(fact)}
    meta["sources"] = [episode_text(e) for e in sources]
    meta["source_texts"] = [flatten(e.text) for e in sources]
    return MemoryRecord(
        id=fact.id,
        content=fact_text(fact),
        scope=paths.normalize(info.get("scope")),
        categories=list(info.get("categories") or []),
        metadata=meta,
        importance=_importance(info),
        created_at=naive_utc(fact.recorded_at),
        last_accessed=naive_utc(fact.recorded_at),
        source=info.get("source"),
        private=bool(info.get("private", False)),
    )


def _user_meta(info: dict[str, Any]) -> dict[str, Any]:
    meta = info.get("metadata")
    return dict(meta) if isinstance(meta, dict) else {}


def _importance(info: dict[str, Any]) -> float:
    value = info.get("importance")
    return float(value) if isinstance(value, int | float) and 0 <= value <= 1 else 0.5
