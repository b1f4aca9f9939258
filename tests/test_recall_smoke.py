"""Recall smoke test (issue #13): a small fixed LoCoMo subset guards default
``Memory()`` retrieval against regression, in seconds.

Conversation 0 of LoCoMo (in the tuning split, conversations 0-4), episodes
ingested as ``benchmarks/recall.py`` does, every question searched with the
default settings. The floors sit a little under the figures measured when this
test was written (see ``FLOORS``); the full benchmark is ``benchmarks/recall.py``.
The data is read from ``../shared/data`` (``CHRONOMEM_BENCH_DATA``) and never
copied; without it the test skips and says why."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import common, recall  # noqa: E402

# measured when this test was written: R@10 62.7, R@20 74.1, MRR 41.8 (hashing embedder,
# k=20; the lexical leg alone: 59.4, 67.1, 43.4). With the batch leg and query time
# windows (issue #13, second round): R@10 61.2, R@20 71.1, MRR 43.6 on this conversation
# (the tuning split as a whole: R@10 63.1 -> 65.2); only the MRR floor moved (up).
# With the context lift from the mirror in place of the SQL follow-up leg (third round):
# R@10 64.9, R@20 72.9, MRR 44.7 (the tuning split: R@10 65.2 -> 68.8); then with the
# speaker boost: R@10 69.4, R@20 73.6, MRR 47.5 (tuning split 71.3). Floors raised.
# Fourth round (no batch leg, hashing vector weight 0.001, fact legs x0.75): R@10 71.6,
# R@20 78.7, MRR 48.3 (tuning split 72.8). Floors raised.
# Fifth round (a counting question's cut spread over conversations): R@10 70.9, R@20 78.4,
# MRR 48.3 (tuning split 72.1); floors kept.
# Sixth round (speaker boost 0.1 -> 0.3, a trade made on the tuning split): R@10 70.0,
# R@20 78.9, MRR 48.5 (tuning split 72.1 -> 71.5); the R@10 floor lowered 70.5 -> 69.5
# for the 0.9 it gave up, the pooled floor below raised 89.0 -> 91.0 for the 1.9 it gained.
FLOORS = {"R@10": 69.5, "R@20": 77.0, "MRR": 47.5}
# Conversations 0 and 1 in one store, scored by answer session (``locomo-pooled``): session
# R@12 90.4 when written (fifth round); 89.9 without the conversation spread, and on the 9
# questions with a counting or comparing cue 94.4 with it, 83.3 without. Sixth round
# (speaker boost 0.3): 92.3; the cued questions unchanged.
POOLED_SESSION_FLOOR = 91.0


@pytest.fixture(scope="module")
def conversation() -> recall.Corpus:
    path = common.DATA / "locomo10.json"
    if not path.exists():
        pytest.skip(f"LoCoMo data not found at {path} (set CHRONOMEM_BENCH_DATA)")
    return recall.load_locomo(path, limit=1, split="tune").corpora[0]


@pytest.fixture(scope="module")
def pooled() -> recall.Corpus:
    path = common.DATA / "locomo10.json"
    if not path.exists():
        pytest.skip(f"LoCoMo data not found at {path} (set CHRONOMEM_BENCH_DATA)")
    return recall.pool_locomo(recall.load_locomo(path, limit=2, split="tune")).corpora[0]


def _run(
    corpus: recall.Corpus, legs: list[str] | None = None, only: Any = None
) -> tuple[dict[str, Any], list[Any]]:
    """Recall of ``corpus`` (by session when its evidence names sessions), over its
    questions for which ``only(text)`` holds (all by default)."""
    from chronomem.embedding import HashingEmbedder

    system = recall.Chronomem(HashingEmbedder(256), None, legs)
    twins = recall.duplicates(corpus)
    rows, rankings = [], []
    try:
        system.ingest(corpus, "episodes")
        for q in corpus.questions:
            if only is not None and not only(q.text):
                continue
            r = system.search(q.text, 20)
            units = [frozenset().union(*(twins.get(x, {x}) for x in u)) for u in r.units]
            rankings.append([sorted(u) for u in units])
            scored = recall.to_sessions(units) if corpus.by_session else units
            rows.append({"group": q.group, **recall.score(scored, q.evidence)})
    finally:
        system.close()
    return recall.aggregate(rows), rankings


def test_default_search_recall_stays_above_its_floors(conversation: recall.Corpus) -> None:
    got, _ = _run(conversation)
    assert got["n"] == len(conversation.questions) > 100
    for metric, floor in FLOORS.items():
        assert got[metric] >= floor, (metric, round(got[metric], 1), floor)


def test_fusion_is_not_below_the_lexical_leg_alone(conversation: recall.Corpus) -> None:
    fused, _ = _run(conversation)
    lexical, _ = _run(conversation, ["episode_lexical"])
    assert fused["R@10"] >= lexical["R@10"], (fused["R@10"], lexical["R@10"])


def test_two_ingests_give_identical_rankings(conversation: recall.Corpus) -> None:
    _, first = _run(conversation)
    _, second = _run(conversation)
    assert first == second


def test_pooled_session_recall_stays_above_its_floor(pooled: recall.Corpus) -> None:
    got, _ = _run(pooled)
    assert got["n"] == len(pooled.questions) > 200
    assert got["R@12"] >= POOLED_SESSION_FLOOR, (round(got["R@12"], 1), POOLED_SESSION_FLOOR)


def test_the_spread_finds_more_sessions_for_counting_questions(pooled: recall.Corpus) -> None:
    from chronomem.retrieval import spread
    from chronomem.retrieval.search import EPISODE_LEGS, FACT_LEGS

    without = [g for g in FACT_LEGS + EPISODE_LEGS if g != "conversation_spread"]
    on, _ = _run(pooled, only=spread.asks_for_several)
    off, _ = _run(pooled, without, only=spread.asks_for_several)
    assert on["n"] == off["n"] >= 5
    assert on["R@12"] > off["R@12"], (on["R@12"], off["R@12"])
