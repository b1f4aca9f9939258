"""A question that counts or compares gets a final cut spread over conversations
(docs/design.md §6, "Spreading a counting question's cut").

"How many times did I go hiking?" or "Which did I buy first, the bike or the
tent?" asks for several events, and those usually sit in different
conversations. The context lift raises the neighbours of every turn found, so
the conversation that matches best can fill the whole top k with its own turns
and hide the others. For such a question (``asks_for_several``) the hits are
taken greedily, best first, and an episode whose conversation already has
``free`` hits placed scores ``decay`` times less for each one beyond those:
every conversation's best turn goes before the second turn of any. Any other
question keeps the fused order: for a question about one event, its
neighbouring turns are the evidence (LoCoMo, benchmarks/HISTORY.md).

An episode's conversation is its ``session_id`` when it has one, else the
batch it was recorded with (one ``add_episodes`` call shares one transaction
time), within its user and agent. Facts are never held back."""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence

import numpy as np

from .cache import Mirror
from .fusion import Fused, HitKind

# Counting ("how many", "how often", "in total", "times") and comparing ("first",
# "both", "which ... earlier/later") cues (why these: benchmarks/HISTORY.md).
_SEVERAL = re.compile(
    r"\b(?:how\s+many|how\s+often|in\s+total|total|times|first|both|"
    r"which\b.*\b(?:first|earlier|later))\b",
    re.IGNORECASE,
)

ConversationKey = tuple[int, int, int]


def asks_for_several(query: str) -> bool:
    """Whether the query counts or compares events (``_SEVERAL``)."""
    return _SEVERAL.search(query) is not None


def conversations(m: Mirror, fused: Sequence[Fused]) -> list[ConversationKey | None]:
    """The conversation of each hit: (user code, agent code, session code, or the
    negated transaction time of its batch when it has no session). None for a
    fact, and for an episode the mirror does not hold yet (committed after its
    sync), which is then never held back."""
    out: list[ConversationKey | None] = [None] * len(fused)
    eps = [j for j, f in enumerate(fused) if f.kind == HitKind.EPISODE]
    if not eps:
        return out
    ps = m.pos.get_many([fused[j].id for j in eps])
    held = ps >= 0
    at = ps[held]
    session = m.session.a[at].astype(np.int64)  # code 0: no session
    conv = np.where(session > 0, session, -m.rec.a[at])
    keys = zip(m.user.a[at].tolist(), m.agent.a[at].tolist(), conv.tolist(), strict=True)
    for j in np.asarray(eps, dtype=np.int64)[held].tolist():
        out[j] = next(keys)
    return out


def spread(
    fused: Sequence[Fused],
    keys: Sequence[ConversationKey | None],
    *,
    free: int,
    decay: float,
    take: int,
) -> list[Fused]:
    """The best ``take`` of ``fused`` (sorted best first), each hit scored
    ``decay ** max(0, placed - free + 1)`` times its own score, where ``placed``
    counts the hits of its conversation taken before it. A hit held back carries
    its lowered score and an ``explain`` entry. Equal scores keep the given order,
    so the result is as reproducible as the input."""
    if take <= 0:
        return []
    placed: dict[ConversationKey, int] = {}
    # (-score, position in fused, hits of its conversation placed when it was pushed)
    heap = [(-f.score, j, 0) for j, f in enumerate(fused)]
    heapq.heapify(heap)
    out: list[Fused] = []
    while heap and len(out) < take:
        neg, j, seen = heapq.heappop(heap)
        key = keys[j]
        now = 0 if key is None else placed.get(key, 0)
        if now != seen:  # its conversation gained hits meanwhile: re-score, wait its turn
            over = max(0, now - free + 1)
            heapq.heappush(heap, (-fused[j].score * decay**over, j, now))
            continue
        f = fused[j]
        if key is not None:
            placed[key] = now + 1
            if now >= free and decay < 1.0:
                f.legs["conversation_spread"] = {"factor": decay ** (now - free + 1)}
                f.score = -neg
        out.append(f)
    return out
