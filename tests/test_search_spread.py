"""A counting or comparing question's cut is spread over conversations
(retrieval/spread.py): the greedy rule against a brute-force reference, the cue,
and what a user of ``Memory.search`` sees on both backends."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem.retrieval import spread
from chronomem.retrieval.fusion import Fused, HitKind


def reference(
    items: list[tuple[float, int | None]], free: int, decay: float, take: int
) -> list[tuple[int, float]]:
    """Each step takes the hit whose score, lowered for the hits of its conversation
    already taken, is highest (the earliest on a tie): (position, lowered score)."""
    left = list(range(len(items)))
    placed: dict[int, int] = {}
    out = []
    while left and len(out) < take:

        def lowered(j: int) -> float:
            score, key = items[j]
            if key is None:
                return score
            return score * decay ** max(0, placed.get(key, 0) - free + 1)

        best = max(left, key=lambda j: (lowered(j), -j))
        out.append((best, lowered(best)))
        left.remove(best)
        key = items[best][1]
        if key is not None:
            placed[key] = placed.get(key, 0) + 1
    return out


scores = st.sampled_from([0.5, 0.8, 1.0, 1.2, 2.0])  # few values: many ties
hits = st.lists(st.tuples(scores, st.one_of(st.none(), st.integers(0, 3))), max_size=25)


@settings(max_examples=300, deadline=None)
@given(
    hits,
    st.integers(1, 3),
    st.sampled_from([0.25, 0.5, 0.7, 0.9, 1.0]),
    st.integers(0, 30),
)
def test_spread_takes_the_best_lowered_score_at_every_step(
    items: list[tuple[float, int | None]], free: int, decay: float, take: int
) -> None:
    items.sort(key=lambda x: -x[0])  # spread's input is sorted best first
    fused = [Fused(HitKind.EPISODE, f"e{j}", score=s) for j, (s, _) in enumerate(items)]
    keys = [None if k is None else (1, 1, k) for _, k in items]
    got = spread.spread(fused, keys, free=free, decay=decay, take=take)
    want = reference(items, free, decay, take)
    assert [f.id for f in got] == [f"e{j}" for j, _ in want]
    assert [f.score for f in got] == pytest.approx([s for _, s in want])
    for f, (j, s) in zip(got, want, strict=True):
        held = s < items[j][0]
        assert ("conversation_spread" in f.legs) == held


@pytest.mark.parametrize(
    "query",
    [
        "How many times did I go hiking this year?",
        "how often does Melanie go to the beach",
        "What did I spend in total on the wedding?",
        "Which did I buy first, the tent or the bike?",
        "What subject have Caroline and Melanie both painted?",
        "Which trip came later, Rome or Oslo?",
    ],
)
def test_counting_and_comparing_questions_ask_for_several(query: str) -> None:
    assert spread.asks_for_several(query)


@pytest.mark.parametrize(
    "query",
    [
        "Where does Alice live?",
        "What did I say about the trip to Rome?",
        "When did Caroline go to the support group?",
        "manyfold timesheet",  # words that only contain a cue
    ],
)
def test_a_question_about_one_event_does_not(query: str) -> None:
    assert not spread.asks_for_several(query)


def _two_conversations(memory: Memory) -> None:
    # the first conversation matches "zqhike" three times, the second once, more weakly
    memory.add_episodes(
        [
            {"text": "we went on a zqhike up the ridge, zqhike number one"},
            {"text": "another zqhike with the dog, zqhike again"},
            {"text": "a zqhike in the rain, the third zqhike"},
        ]
    )
    memory.add_episodes(
        [
            {"text": "lunch was soup"},
            {"text": "one more zqhike at the lake last weekend with my sister and her kids"},
        ]
    )


def test_a_counting_question_reaches_the_second_conversation(memory: Memory) -> None:
    _two_conversations(memory)
    plain = [h.episode.text for h in memory.search("zqhike", k=3, include_episodes=True)]
    assert "lake" not in " ".join(plain)  # without a cue, the first conversation fills the cut
    hits = memory.search("how many times did we zqhike", k=3, include_episodes=True)
    texts = [h.episode.text for h in hits]
    assert any("lake" in t for t in texts[:2])  # each conversation's best turn first
    held = [h for h in hits if "conversation_spread" in h.explain["legs"]]
    assert held and all(h.episode.text not in texts[:2] for h in held)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_spread_can_be_switched_off_like_a_leg(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chronomem.retrieval.search import EPISODE_LEGS, FACT_LEGS
    from chronomem.retrieval.search import search as run_search

    _two_conversations(memory)
    legs = [g for g in FACT_LEGS + EPISODE_LEGS if g != "conversation_spread"]
    q = "how many times did we zqhike"
    off = run_search(memory._engine, memory.scope, q, k=3, include_episodes=True, legs_enabled=legs)
    monkeypatch.setattr(spread, "asks_for_several", lambda query: False)
    uncued = memory.search(q, k=3, include_episodes=True)
    assert [h.episode.id for h in off] == [h.episode.id for h in uncued]
    assert not any("lake" in h.episode.text for h in off)


def test_a_hit_held_back_below_min_score_is_dropped(memory: Memory) -> None:
    _two_conversations(memory)
    q = "how many times did we zqhike"
    hits = memory.search(q, k=5, include_episodes=True)
    held = [h for h in hits if "conversation_spread" in h.explain["legs"]]
    assert held
    floor = min(h.score for h in held) + 1e-12  # just above the lowest held-back score
    kept = memory.search(q, k=5, include_episodes=True, min_score=floor)
    assert kept and all(h.score >= floor for h in kept)
    assert [h.episode.id for h in kept] == [h.episode.id for h in hits if h.score >= floor]
