"""``ChronomemStorage.search`` past the records the query's vector reaches
(``crewai_chronomem.ranking``): CrewAI's own storage returns the nearest records
whatever their similarity, so a question sharing nothing with a record's text
("What's my occupation?" against "I'm a farmer now." under the hashing embedder)
still gets the current records, scored 0, the one written last first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crewai.memory.types import MemoryRecord

from crewai_chronomem import ChronomemStorage
from crewai_chronomem.conformance import kit_embedder


@pytest.fixture
def storage(url: str | None, clock: Any) -> Iterator[ChronomemStorage]:
    s = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    try:
        yield s
    finally:
        s.close()


def rec(rid: str, content: str, scope: str = "/") -> MemoryRecord:
    return MemoryRecord(id=rid, content=content, scope=scope, embedding=kit_embedder([content])[0])


def _cos(a: str, b: str) -> float:
    x, y = kit_embedder([a, b])
    return sum(p * q for p, q in zip(x, y, strict=True))


Q = "What's my occupation?"


def test_records_the_vector_missed_follow_scored_zero_newest_first(
    storage: ChronomemStorage, clock: Any
) -> None:
    # texts the 64-dim hashing embedder puts at cosine <= 0 from the question
    texts = {"job": "bbb", "talk": "zzz qqq", "old": "kkk"}
    assert all(_cos(Q, t) <= 0 for t in [*texts.values(), "farmer"])
    storage.save([rec("old", texts["old"], "/a")])
    clock.advance(days=1)
    storage.save([rec("job", texts["job"], "/a")])
    clock.advance(days=1)
    storage.save([rec("talk", texts["talk"], "/b")])
    clock.advance(days=1)
    storage.update(rec("job", "farmer", "/a"))  # the change, written last
    q = kit_embedder([Q])[0]
    hits = storage.search(q, limit=10)
    assert [(r.id, s) for r, s in hits] == [("job", 0.0), ("talk", 0.0), ("old", 0.0)]
    assert hits[0][0].content == "farmer"
    assert [r.id for r, _ in storage.search(q, limit=1)] == ["job"]
    assert [r.id for r, _ in storage.search(q, scope_prefix="/a")] == ["job", "old"]
    assert storage.search(q, min_score=0.01) == []  # a real threshold keeps them out
    assert storage.end(["job"]) == 1  # not current: not returned
    assert [r.id for r, _ in storage.search(q)] == ["talk", "old"]


def test_reached_records_come_before_the_rest(storage: ChronomemStorage) -> None:
    storage.save([rec("a", "zzz qqq"), rec("b", "dana loves ramen")])
    hits = storage.search(kit_embedder(["ramen dana"])[0], limit=5)
    assert [r.id for r, _ in hits] == ["b", "a"]
    assert hits[0][1] > 0.0 and hits[1][1] == 0.0


def test_like_crewais_own_storage_a_search_returns_records_whatever_their_similarity(
    tmp_path: Path, storage: ChronomemStorage
) -> None:
    from crewai.memory.storage.lancedb_storage import LanceDBStorage

    theirs = LanceDBStorage(path=tmp_path / "lance", vector_dim=64, compact_every=0)
    records = [rec("a", "zzz qqq"), rec("b", "kkk")]
    theirs.save(records)
    storage.save(records)
    q = kit_embedder([Q])[0]
    assert sorted(r.id for r, _ in theirs.search(q)) == ["a", "b"]
    assert sorted(r.id for r, _ in storage.search(q)) == ["a", "b"]
