"""The final cut covers the query's words (docs/design.md §6, "Covering the
query's words").

"How much did I spend on the car wash and the parking ticket?" is answered from
two places. Ranked by fused votes, the turns about the car wash (and, through
the context lift, their neighbours) can fill the whole top k, and the one turn
about the parking ticket sits below them. So the cut is taken greedily from the
best candidates: each candidate scores its own score times ``1 + boost * new``,
where ``new`` is the share of the query's word weight that it matches and that
no hit taken before it matched. A candidate that only repeats words already
covered keeps its score, so a question about one thing keeps its fused order.

A word weighs its bm25 idf within the candidate pool: a word that most
candidates contain weighs nothing (covering it again says nothing), a word few
of them contain weighs the most. Words are compared after ``light_stem``, on the
text the lexical legs index (an episode's text, a fact's index text)."""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence

from .fusion import Fused
from .querytime import words
from .within import light_stem


def stems(terms: Sequence[str]) -> tuple[str, ...]:
    """The query terms as the rule compares them: light-stemmed, distinct, in order."""
    return tuple(dict.fromkeys(light_stem(t) for t in terms))


def matched(text: str, wanted: Sequence[str]) -> frozenset[str]:
    """Which of the ``wanted`` stems the text contains."""
    if not wanted:
        return frozenset()
    return frozenset(light_stem(w) for w in set(words(text))).intersection(wanted)


def pool_weights(matches: Sequence[frozenset[str]], wanted: Sequence[str]) -> dict[str, float]:
    """Each wanted stem's idf within the pool, ``log((P - df + 0.5) / (df + 0.5))``,
    never below 0 (``P`` candidates, ``df`` of them contain the stem)."""
    size = len(matches)
    df = Counter(s for m in matches for s in m)
    return {
        s: max(0.0, math.log((size - df[s] + 0.5) / (df[s] + 0.5))) if df[s] else 0.0
        for s in wanted
    }


def cover(
    pool: Sequence[Fused],
    matches: Sequence[frozenset[str]],
    weights: dict[str, float],
    *,
    boost: float,
    take: int,
) -> list[Fused]:
    """The best ``take`` of ``pool`` (best first), chosen greedily: at each step the
    candidate with the highest ``score * (1 + boost * new)`` goes next, ``new`` being
    the weight of its matched stems that no candidate taken before matched, over the
    weight of every stem. Equal values go in pool order. A candidate's value only
    falls as words get covered, so a stale heap entry is re-scored when popped,
    never missed. A candidate taken with a bonus carries its raised score and an
    ``explain`` entry, so the scores of the cut stay in its order."""
    if take <= 0:
        return []
    total = sum(weights.values())
    if total <= 0 or boost <= 0:
        return list(pool[:take])
    covered: set[str] = set()
    version = 0  # how many times ``covered`` grew

    def value(j: int) -> tuple[float, float]:
        new = sum(weights[s] for s in matches[j] if s not in covered) / total
        return pool[j].score * (1.0 + boost * new), new

    heap = [(-value(j)[0], j, 0) for j in range(len(pool))]
    heapq.heapify(heap)
    out: list[Fused] = []
    while heap and len(out) < take:
        _, j, seen = heapq.heappop(heap)
        if seen != version:  # words were covered since: re-score, wait its turn
            heapq.heappush(heap, (-value(j)[0], j, version))
            continue
        f = pool[j]
        val, new = value(j)
        if new > 0:
            f.legs["query_coverage"] = {"new_words": new, "factor": 1.0 + boost * new}
            f.score = val
            grown = matches[j] - covered
            if grown:
                covered |= grown
                version += 1
        out.append(f)
    return out
