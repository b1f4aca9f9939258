"""The final cut covers the query's words (retrieval/coverage.py): the greedy rule
against a brute-force reference, the pool's word weights, word matching, and what
a user of ``Memory.search`` sees on both backends."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem.retrieval import coverage
from chronomem.retrieval.fusion import Fused, HitKind

STEMS = ("a", "b", "c", "d")


def reference(
    scores: list[float],
    matches: list[frozenset[str]],
    weights: dict[str, float],
    boost: float,
    take: int,
) -> list[tuple[int, float]]:
    """Each step takes the candidate whose score times 1 + boost * (the weight of
    the words it matches that no taken candidate matched, over all the weight) is
    highest, the earliest on a tie: (position, that value)."""
    total = sum(weights.values())
    left = list(range(len(scores)))
    covered: set[str] = set()
    out = []
    while left and len(out) < take:
        values = {}
        for j in left:
            new = sum(weights[s] for s in sorted(matches[j] - covered))
            values[j] = scores[j] * (1.0 + boost * (new / total)) if total > 0 else scores[j]
        best = max(left, key=lambda j: (values[j], -j))
        out.append((best, values[best]))
        left.remove(best)
        covered |= matches[best]
    return out


# few, exactly representable values: many ties, and sums that do not depend on order
scores = st.sampled_from([0.5, 0.75, 1.0, 1.25, 2.0])
subsets = st.frozensets(st.sampled_from(STEMS))
weight_maps = st.fixed_dictionaries({s: st.sampled_from([0.0, 1.0, 2.0, 4.0]) for s in STEMS})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(scores, subsets), max_size=25),
    weight_maps,
    st.sampled_from([0.0, 0.5, 1.0, 5.0]),
    st.integers(0, 30),
)
def test_cover_takes_the_best_value_at_every_step(
    items: list[tuple[float, frozenset[str]]],
    weights: dict[str, float],
    boost: float,
    take: int,
) -> None:
    items.sort(key=lambda x: -x[0])  # the pool comes sorted best first
    pool = [Fused(HitKind.EPISODE, f"e{j}", score=s) for j, (s, _) in enumerate(items)]
    matches = [m for _, m in items]
    got = coverage.cover(pool, matches, weights, boost=boost, take=take)
    want = reference([s for s, _ in items], matches, weights, boost, take)
    assert [f.id for f in got] == [f"e{j}" for j, _ in want]
    assert [f.score for f in got] == pytest.approx([v for _, v in want])
    assert [f.score for f in got] == sorted((f.score for f in got), reverse=True)
    for f, (j, v) in zip(got, want, strict=True):
        assert ("query_coverage" in f.legs) == (v > items[j][0])


def test_pool_weights_are_idf_within_the_pool() -> None:
    matches = [frozenset({"car", "wash"})] * 8 + [frozenset({"car", "park"}), frozenset()]
    w = coverage.pool_weights(matches, ("car", "wash", "park", "zebra"))
    assert w["car"] == 0.0  # in 9 of 10 candidates: covering it again says nothing
    assert w["zebra"] == 0.0  # in none
    assert w["park"] == pytest.approx(math.log(9.5 / 1.5))
    assert w["park"] > w["wash"] >= 0.0


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("We VISITED the Studies centre", {"visit", "study"}),
        ("a visit to the study", {"visit", "study"}),
        ("parking tickets, twice", {"park", "ticket"}),
        ("nothing here", set()),
    ],
)
def test_words_match_after_light_stemming(text: str, want: set[str]) -> None:
    wanted = coverage.stems(["visits", "studying", "parking", "ticket"])
    assert coverage.matched(text, wanted) == want


def _car_wash_and_parking(memory: Memory) -> None:
    # four turns name the car wash twice each; one long turn names the ticket once
    memory.add_episodes([{"text": f"filler turn {i} about the weather"} for i in range(30)])
    memory.add_episodes(
        [
            {"text": "the zqcar zqwash was closed, so another zqcar zqwash tomorrow"},
            {"text": "zqcar zqwash again: the premium zqcar zqwash this time"},
            {"text": "paid for a zqcar zqwash, the deluxe zqcar zqwash"},
            {"text": "a zqcar zqwash with wax, best zqcar zqwash in town"},
        ]
    )
    memory.add_episodes(
        [
            {
                "text": "on the way back from the dentist, after a long and slow queue at the "
                "pharmacy and a coffee with an old friend from school, there was a zqticket "
                "on the windscreen, forty dollars"
            }
        ]
    )


Q = "the zqcar zqwash and the zqticket"


def test_the_cut_reaches_the_words_the_best_turns_miss(memory: Memory) -> None:
    from chronomem.retrieval.search import EPISODE_LEGS, FACT_LEGS
    from chronomem.retrieval.search import search as run_search

    _car_wash_and_parking(memory)
    legs = [g for g in FACT_LEGS + EPISODE_LEGS if g != "query_coverage"]
    off = run_search(memory._engine, memory.scope, Q, k=3, include_episodes=True, legs_enabled=legs)
    assert not any("zqticket" in h.episode.text for h in off)  # the car wash fills the cut
    hits = memory.search(Q, k=3, include_episodes=True)
    texts = [h.episode.text for h in hits]
    assert any("zqticket" in t for t in texts)
    assert "zqcar" in texts[0]  # the best turn stays first
    lifted = [h for h in hits if "query_coverage" in h.explain["legs"]]
    assert any("zqticket" in h.episode.text for h in lifted)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_question_about_one_thing_keeps_its_fused_order(memory: Memory) -> None:
    from chronomem.retrieval.search import EPISODE_LEGS, FACT_LEGS
    from chronomem.retrieval.search import search as run_search

    _car_wash_and_parking(memory)
    legs = [g for g in FACT_LEGS + EPISODE_LEGS if g != "query_coverage"]
    q = "zqcar"
    off = run_search(memory._engine, memory.scope, q, k=4, include_episodes=True, legs_enabled=legs)
    on = memory.search(q, k=4, include_episodes=True)
    assert [h.episode.id for h in on] == [h.episode.id for h in off]
