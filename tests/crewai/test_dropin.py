"""Drop-in behaviours CrewAI's own memory tests expect (issue #30): close drains
and leaves the store usable, dimension mismatches raise CrewAI's error, empty
blobs extract nothing, identical saves in one batch are one record."""

from __future__ import annotations

import pytest
from crewai.memory import Memory as CrewMemory
from crewai.memory.storage.backend import EmbeddingDimensionMismatchError
from crewai.memory.types import MemoryRecord

from chronomem import InvalidInput
from crewai_chronomem import ChronomemMemory, ChronomemStorage, register, spec_for, unregister
from crewai_chronomem.conformance import kit_embedder


def _record(rid: str, content: str, dim: int) -> MemoryRecord:
    return MemoryRecord(id=rid, content=content, scope="/foo", embedding=[0.1] * dim)


@pytest.mark.usefixtures("outside_unchanged")
def test_a_closed_memory_and_its_url_keep_working(durable_url: str) -> None:
    """``Memory(storage="chronomem:…")`` then ``close()``: its reads still work,
    and a second ``Memory`` on the same URL is handed a working storage."""
    register(embedder=kit_embedder)
    try:
        spec = spec_for(durable_url)
        first = CrewMemory(storage=spec, embedder=kit_embedder, llm="gpt-4o-mini")
        storage = first._storage
        storage.save([MemoryRecord(id="r1", content="Dana lives in Paris", scope="/a",
                                   embedding=kit_embedder(["Dana lives in Paris"])[0])])  # fmt: skip
        first.close()
        assert [r.id for r in first._storage.list_records()] == ["r1"]
        second = CrewMemory(storage=spec, embedder=kit_embedder, llm="gpt-4o-mini")
        assert second._storage.count() == 1
        second.close()
    finally:
        unregister()


def test_chronomem_memory_reads_after_close(durable_url: str) -> None:
    cm = ChronomemMemory(url=durable_url)
    cm.remember("Dana lives in Paris", scope="/a")
    cm.close()
    assert len(cm.list_records()) >= 1
    cm.remember("Dana likes tea", scope="/a")  # writes too
    assert any("tea" in r.content for r in cm.list_records())
    cm.close()


def test_factory_replaces_a_store_closed_for_good(durable_url: str) -> None:
    register(embedder=kit_embedder)
    try:
        spec = spec_for(durable_url)
        first = CrewMemory(storage=spec, embedder=kit_embedder, llm="gpt-4o-mini")
        first._storage.chronomem.close()  # closed for good, behind the factory's back
        second = CrewMemory(storage=spec, embedder=kit_embedder, llm="gpt-4o-mini")
        assert second._storage is not first._storage and second._storage.count() == 0
    finally:
        unregister()


def test_dimension_mismatch_is_crewais_error(url: str | None) -> None:
    s = ChronomemStorage(url, dim=4)
    try:
        s.save([_record("a", "four", 4)])
        with pytest.raises(EmbeddingDimensionMismatchError) as err:
            s.save([_record("b", "eight", 8)])
        assert "4-dimensional" in str(err.value) and "8-dimensional" in str(err.value)
        assert isinstance(err.value, InvalidInput)
        with pytest.raises(EmbeddingDimensionMismatchError):
            s.save([_record("c", "ok", 4), _record("d", "stray", 8)])
        with pytest.raises(EmbeddingDimensionMismatchError):
            s.search([0.1] * 8)
        with pytest.raises(EmbeddingDimensionMismatchError):
            s.update(_record("a", "updated", 8))
        assert s.count() == 1
    finally:
        s.close()


def test_a_fallback_embedder_of_another_dimension_is_refused(url: str | None) -> None:
    s = ChronomemStorage(url, dim=4, embedder=lambda texts: [[0.1] * 8 for _ in texts])
    try:
        with pytest.raises(EmbeddingDimensionMismatchError):
            s.save([MemoryRecord(id="a", content="no vector", scope="/foo")])
    finally:
        s.close()


def test_extract_memories_of_nothing_is_empty(memory) -> None:  # type: ignore[no-untyped-def]
    cm = ChronomemMemory(memory=memory)
    assert cm.extract_memories("") == []
    assert cm.extract_memories("  \n ") == []


def test_identical_saves_in_one_batch_are_one_record(memory) -> None:  # type: ignore[no-untyped-def]
    cm = ChronomemMemory(memory=memory)
    text = "CrewAI ensures reliable operation."
    saved = cm.remember_many([text, text, " crewai ENSURES reliable operation "], scope="/test")
    assert len(saved) == 1
    episodes = [r for r in cm.list_records(scope="/test") if r.metadata["kind"] == "episode"]
    assert len(episodes) == 1
    found = [m.record.content for m in cm.recall("reliable operation", scope="/test")]
    assert sum(text in c for c in found) == 1
    kept = cm.remember_many(["CrewAI handles complex tasks.", "Python is the best language."])
    assert len(kept) == 2
