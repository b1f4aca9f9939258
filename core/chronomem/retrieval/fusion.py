"""Reciprocal-rank fusion of the legs, recency by volatility, reproducible ties."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

RRF_K = 60
US_PER_DAY = 86_400_000_000
RECENCY_WEIGHT = 0.2  # final = rrf * (1 - w + w * recency)


@dataclass
class Fused:
    kind: str  # "fact" | "episode"
    id: str
    rrf: float = 0.0
    legs: dict[str, dict[str, float]] = field(default_factory=dict)
    recency: float = 1.0
    score: float = 0.0
    tiebreak: str = ""

    def explain(self) -> dict[str, Any]:
        return {
            "legs": self.legs,
            "rrf": self.rrf,
            "recency": self.recency,
            "score": self.score,
        }


def recency(age_us: int, half_life_days: float | None) -> float:
    if half_life_days is None or age_us <= 0:
        return 1.0
    return float(0.5 ** (age_us / (half_life_days * US_PER_DAY)))


def fuse(
    rankings: Mapping[str, tuple[str, list[tuple[str, float]]]],
) -> dict[tuple[str, str], Fused]:
    """``rankings``: leg name -> (kind, [(id, score), ...] best first)."""
    out: dict[tuple[str, str], Fused] = {}
    for leg, (kind, ranked) in rankings.items():
        for rank, (item_id, score) in enumerate(ranked, start=1):
            f = out.setdefault((kind, item_id), Fused(kind, item_id))
            f.rrf += 1.0 / (RRF_K + rank)
            f.legs[leg] = {"rank": rank, "score": score}
    return out


def finish(f: Fused, recency_factor: float, tiebreak: str) -> None:
    f.recency = recency_factor
    f.score = f.rrf * (1.0 - RECENCY_WEIGHT + RECENCY_WEIGHT * recency_factor)
    f.tiebreak = tiebreak
