"""A search whose mirror held facts at its last sync runs the fact lexical leg
first, the clock read sent with its statement, and ranks the mirror's vector and
graph legs while the database runs it, keeping them only when the sync then
brings nothing (``retrieval.search``: ``prepared.Ahead``, ``meanwhile``). None of
that may change a result: over random histories (supersessions, ends,
retractions, sources, several scopes), each search of a warm mirror (the legs
ranked ahead, or ranked again after a write it had to catch up with) gives the
hits, scores, order and explanations of a fresh mirror's (the sync first, then
every leg: the order before), with the float32 vectors kept in the mirror or not,
and for every state filter."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from chronomem import Memory, State
from chronomem.retrieval import cache

from .conftest import ManualClock

NAMES = ["ada lovelace", "bob stone", "cara diaz", "dan wu", "eve north"]
PLACES = ["paris", "north lisbon", "rome", "oslo harbor", "red canyon"]
PREDICATES = ["lives_in", "likes", "works_at", "visited"]
QUERIES = [
    "where does ada live",
    "who likes red canyon",
    "bob stone paris",
    "oslo harbor",
    "what does eve north like",
    "who works at north lisbon",
    "zzz nothing matches",
]


def _shown(hits: Any) -> list[tuple[Any, ...]]:
    return [
        (
            h.fact.version_id if h.fact else h.episode.id,
            h.score,
            h.fact.source_episode_ids if h.fact else (),
            h.fact.state if h.fact else None,
            sorted(h.explain.items()),
        )
        for h in hits
    ]


def _write(m: Memory, rng: random.Random, sources: list[str]) -> None:
    """One random write: a remember (sometimes cited, sometimes in a user's
    scope), an end, a retraction or an episode."""
    r = rng.random()
    subject, pred, obj = rng.choice(NAMES), rng.choice(PREDICATES), rng.choice(PLACES)
    if r < 0.6:
        src = rng.choice(sources) if sources and rng.random() < 0.4 else None
        target = m.scoped(user="u1") if rng.random() < 0.2 else m
        target.remember(subject, pred, obj, source=src)
    elif r < 0.75:
        m.end(subject, pred)
    elif r < 0.9:
        live = m.facts(subject=subject)
        if live:
            m.retract(rng.choice(live).id)
    else:
        sources.append(m.add_episode(f"{subject} said something about {obj}").id)


@pytest.mark.parametrize("floats", [True, False], ids=["floats", "codes-only"])
@pytest.mark.parametrize("seed", [1, 2])
def test_a_warm_mirror_ranks_as_a_fresh_one(
    url: str | None,
    clock: ManualClock,
    floats: bool,
    seed: int,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    url = url or str(tmp_path / "store.db")  # two stores on one SQLite database: a file
    if not floats:  # the mirror keeps no float32 vectors: the vector leg reads SQL
        monkeypatch.setattr(cache, "FLOAT_BUDGET", 0)
    rng = random.Random(seed)
    warm, fresh = Memory(url, clock=clock), Memory(url, clock=clock)
    try:
        sources: list[str] = []
        for _ in range(30):
            _write(warm, rng, sources)
        for step in range(6):
            at = warm.now() + timedelta(hours=1)  # one instant for both: one recency
            for query in rng.sample(QUERIES, 4):
                states = rng.choice([None, [State.LIVE, State.ENDED], list(State)])
                kw: dict[str, Any] = {"k": rng.choice([3, 10]), "valid_at": at, "states": states}
                fresh._engine.retrieval.mirrors.clear()  # type: ignore[union-attr]
                want = _shown(fresh.search(query, **kw))
                assert _shown(warm.search(query, **kw)) == want, (step, query, kw)
            for _ in range(rng.randint(0, 3)):  # writes the warm mirror has to catch up with
                _write(warm, rng, sources)
    finally:
        warm.close()
        fresh.close()


def test_ranked_ahead_only_when_the_sync_brings_nothing(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mirror's legs are ranked while the lexical statement runs (once per
    search), and ranked again after a sync that brought rows: the new fact is found
    by the vector and graph legs of the very search that synced it."""
    from chronomem.retrieval import legs

    for i in range(20):
        memory.remember(f"person{i}", "lives_in", f"town{i % 4}")
    memory.search("person3 town3")  # the mirror holds facts from here
    calls: list[str] = []
    real = legs.graph_leg

    def counted(*args: Any, **kw: Any) -> Any:
        calls.append("graph")
        return real(*args, **kw)

    monkeypatch.setattr(legs, "graph_leg", counted)
    memory.search("where does person5 live")
    assert calls == ["graph"]  # ranked ahead, kept
    calls.clear()
    memory.remember("zoe quill", "lives_in", "town9")
    hits = memory.search("zoe quill town9")
    assert calls == ["graph", "graph"]  # ranked ahead, then again after the sync
    top = hits[0].fact
    assert top is not None and top.subject == "zoe quill"
    assert {"entity_graph", "fact_vector"} <= set(hits[0].explain["legs"])
