"""Weighted reciprocal-rank fusion of the legs, recency by volatility, reproducible ties.

A leg's vote is ``weight / (RRF_K + rank)``. Lexical legs weigh 1; vector legs
weigh what their embedder is worth (``vector_weight``): the offline hashing
embedder only re-finds the words the lexical leg already matched, and at equal
weight its noise pulled the fused ranking 10 points of LoCoMo R@10 below the
lexical leg alone (benchmarks/HISTORY.md). The weights are ``tuning.DEFAULT``'s. The entity-graph leg votes
for every fact about a named entity, so it weighs little and only its first
``GRAPH_CAP`` facts vote: it can lift a fact the other legs found, never flood
the top k."""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..predicates import Volatility
from .tuning import DEFAULT

RRF_K = DEFAULT.rrf_k


class HitKind(str, enum.Enum):
    """What a fused hit is: a fact (a version) or an episode. A ``str`` enum: a
    member equals its value, but hashes as an enum member, so dictionaries keyed
    by kind use the members throughout."""

    FACT = "fact"
    EPISODE = "episode"

    def __str__(self) -> str:
        return self.value


US_PER_DAY = 86_400_000_000
# The knobs below are ``tuning.DEFAULT``'s fields (what each does: tuning.py).
RECENCY_WEIGHT = DEFAULT.recency_weight  # final = rrf * (1 - w + w * recency)
LEXICAL_WEIGHT = DEFAULT.lexical_weight
FACT_WEIGHT = DEFAULT.fact_weight
GRAPH_WEIGHT = DEFAULT.graph_weight
GRAPH_CAP = DEFAULT.graph_cap  # entity-graph facts that vote at all
HASHING_VECTOR_WEIGHT = DEFAULT.hashing_vector_weight
MODEL_VECTOR_WEIGHT = DEFAULT.model_vector_weight


def vector_weight(embedder: Any) -> float:
    """The vector legs' weight for this embedder: its own ``vector_weight``
    attribute when it has one, else 0.001 for chronomem's hashing embedder (lexical
    overlap only) and 0.2 for any other (a model that captures meaning)."""
    own = getattr(embedder, "vector_weight", None)
    if isinstance(own, int | float) and not isinstance(own, bool) and 0 <= own <= 10:
        return float(own)
    name = str(getattr(embedder, "name", ""))
    return HASHING_VECTOR_WEIGHT if name.startswith("hashing-") else MODEL_VECTOR_WEIGHT


def leg_weights(embedder: Any) -> dict[str, float]:
    w = vector_weight(embedder)
    return {
        "fact_lexical": FACT_WEIGHT * LEXICAL_WEIGHT,
        "episode_lexical": LEXICAL_WEIGHT,
        "fact_vector": FACT_WEIGHT * w,
        "episode_vector": w,
        "entity_graph": FACT_WEIGHT * GRAPH_WEIGHT,
    }


@dataclass(slots=True)  # built per candidate: slots build and read faster
class Fused:
    kind: HitKind
    id: str
    rrf: float = 0.0
    legs: dict[str, dict[str, float]] = field(default_factory=dict)
    recency: float = 1.0
    score: float = 0.0
    tiebreak: str = ""
    in_window: bool | None = None  # inside the time the query names (None: it names none)

    def explain(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "legs": self.legs,
            "rrf": self.rrf,
            "recency": self.recency,
            "score": self.score,
        }
        if self.in_window is not None:
            out["in_time_window"] = self.in_window
        return out


class HalfLives:
    """Each predicate's recency half-life (days; None: never decays) for one search,
    from one registry read made when the first predicate needs it."""

    def __init__(self, load: Callable[[], Mapping[str, Any]]):
        self._load = load
        self._index: Mapping[str, Any] | None = None
        self._memo: dict[str, float | None] = {}

    def __call__(self, predicate: str) -> float | None:
        if predicate not in self._memo:
            if self._index is None:
                self._index = self._load()
            spec = self._index.get(predicate)
            self._memo[predicate] = (spec.volatility if spec else Volatility.SLOW).half_life_days
        return self._memo[predicate]


def recency(age_us: int, half_life_days: float | None) -> float:
    if half_life_days is None or age_us <= 0:
        return 1.0
    return float(0.5 ** (age_us / (half_life_days * US_PER_DAY)))


def fuse(
    rankings: Mapping[str, tuple[HitKind, list[tuple[str, float]]]],
    weights: Mapping[str, float] | None = None,
) -> dict[tuple[HitKind, str], Fused]:
    """``rankings``: leg name -> (kind, [(id, score), ...] best first);
    ``weights``: leg name -> weight (1 for a leg not named; None = all 1)."""
    out: dict[tuple[HitKind, str], Fused] = {}
    for leg, (kind, ranked) in rankings.items():
        w = 1.0 if weights is None else weights.get(leg, 1.0)
        for rank, (item_id, score) in enumerate(ranked, start=1):
            f = out.get((kind, item_id))
            if f is None:  # (setdefault would build a Fused for every entry)
                f = out[(kind, item_id)] = Fused(kind, item_id)
            f.rrf += w / (RRF_K + rank)
            f.legs[leg] = {"rank": rank, "score": score, "weight": w}
    return out


# A query naming a time ("in July 2023", "last May", "yesterday": querytime.time_window)
# multiplies the score of a hit inside that time by 1 + TIME_BOOST: an episode that
# occurred then (or up to TIME_SLACK_DAYS later: a conversation mentions an event
# after it), a fact valid at some point of it. A boost, not a filter.
TIME_BOOST = DEFAULT.time_boost
TIME_SLACK_DAYS = DEFAULT.time_slack_days


def finish(f: Fused, recency_factor: float, tiebreak: str, in_window: bool | None = None) -> None:
    f.recency = recency_factor
    f.score = f.rrf * (1.0 - RECENCY_WEIGHT + RECENCY_WEIGHT * recency_factor)
    f.tiebreak = tiebreak
    f.in_window = in_window
    if in_window:
        f.score *= 1.0 + TIME_BOOST


def in_window(start: int, end: int, window: tuple[int, int] | None, point: bool) -> bool | None:
    """Whether [start, end) (a fact's validity) or the instant ``start`` (an episode,
    ``point``) falls in the query's ``window`` (None when the query names no time)."""
    if window is None:
        return None
    lo, hi = window
    if point:
        return lo <= start < hi + int(TIME_SLACK_DAYS * US_PER_DAY)
    return start < hi and end > lo


def fused_rrf(
    rankings: Mapping[str, tuple[HitKind, list[tuple[str, float]]]],
    weights: Mapping[str, float],
) -> dict[str, float]:
    """``fuse``'s reciprocal-rank sums alone, by id, for rankings of one kind: the
    same votes added in the same order (so the same floats), without a ``Fused``
    value or a per-leg explanation per candidate."""
    out: dict[str, float] = {}
    for leg, (_, ranked) in rankings.items():
        votes = rrf_votes(weights.get(leg, 1.0), len(ranked))
        for (item_id, _), vote in zip(ranked, votes, strict=True):
            if item_id in out:
                out[item_id] += vote
            else:  # (``fuse`` adds the first vote to 0.0: the same float)
                out[item_id] = vote
    return out


@functools.lru_cache(maxsize=256)
def rrf_votes(weight: float, count: int) -> tuple[float, ...]:
    """A leg's votes for ranks 1 to ``count``, ``weight / (RRF_K + rank)``: the
    floats ``fuse`` adds (kept: a search's legs weigh and count alike)."""
    return tuple(weight / (RRF_K + rank) for rank in range(1, count + 1))
