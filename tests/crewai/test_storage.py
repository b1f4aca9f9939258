"""ChronomemStorage under CrewAI's own ``Memory`` (its save flow, consolidation and
shallow recall), the storage factory, and a crew's JSON round trip."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from crewai import Agent, Crew, Task
from crewai.memory import Memory as CrewMemory
from crewai.memory.storage.backend import StorageBackend
from crewai.memory.types import MemoryRecord

from chronomem import InvalidInput, InvalidType, State
from crewai_chronomem import ChronomemStorage, ReadOnlyView, register, spec_for, unregister
from crewai_chronomem.conformance import kit_embedder
from crewai_chronomem.testing import ScriptedLLM


@pytest.fixture
def storage(url: str | None, clock) -> Iterator[ChronomemStorage]:  # type: ignore[no-untyped-def]
    s = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    try:
        yield s
    finally:
        s.close()


def rec(rid: str, content: str, scope: str = "/", **kw: Any) -> MemoryRecord:
    return MemoryRecord(
        id=rid, content=content, scope=scope, embedding=kit_embedder([content])[0], **kw
    )


def test_protocol_and_vector_search(storage: ChronomemStorage) -> None:
    assert isinstance(storage, StorageBackend)
    storage.save([rec("a", "dana loves ramen", "/crew/a"), rec("b", "bo likes tea", "/crew/ab")])
    hits = storage.search(kit_embedder(["ramen dana"])[0], limit=5)
    assert hits[0][0].id == "a" and 0.0 < hits[0][1] <= 1.0
    assert all(0.0 <= s <= 1.0 for _, s in hits)
    scoped = storage.search(kit_embedder(["dana bo ramen tea"])[0], scope_prefix="/crew/a")
    assert [r.id for r, _ in scoped] == ["a"]  # /crew/a never matches /crew/ab
    assert storage.search(kit_embedder(["tea"])[0], min_score=0.99) == []
    assert storage.count() == 2 and storage.count("/crew/a") == 1
    assert storage.list_scopes("/crew") == ["/crew/a", "/crew/ab"]
    r = storage.get_record("a")
    assert r is not None and r.created_at.tzinfo is None and r.embedding is None


def test_update_supersedes_delete_retracts_as_of_reads_the_past(
    storage: ChronomemStorage, clock
) -> None:  # type: ignore[no-untyped-def]
    storage.save([rec("a", "Dana lives in Paris", categories=["home"])])
    clock.advance(days=1)
    before = clock.mark()
    clock.advance(days=1)
    storage.update(rec("a", "Dana lives in Berlin", categories=["home"]))
    assert storage.get_record("a").content == "Dana lives in Berlin"  # type: ignore[union-attr]
    past = storage.as_of(before)
    assert past.get_record("a").content == "Dana lives in Paris"  # type: ignore[union-attr]
    assert [r.id for r, _ in past.search(kit_embedder(["Paris"])[0])] == ["a"]
    with pytest.raises(ReadOnlyView):
        past.save([rec("x", "y")])
    states = [(v.record.content, v.state) for v in storage.history("a")]
    assert states == [("Dana lives in Paris", State.ENDED), ("Dana lives in Berlin", State.LIVE)]
    clock.advance(minutes=1)
    assert storage.delete(categories=["home"]) == 1
    assert storage.get_record("a") is None and storage.search(kit_embedder(["Berlin"])[0]) == []
    audit = storage.history("a", include_retracted=True)
    assert [v.state for v in audit][-1] is State.RETRACTED
    assert storage.erase(["a"]) == 1
    assert storage.history("a", include_retracted=True) == []


def test_an_updated_record_answers_what_its_earlier_text_matched(
    storage: ChronomemStorage, clock
) -> None:  # type: ignore[no-untyped-def]
    """Issue #28, the stale-episode rule on a record store: a record written again
    scores at least what its earlier (now stale) version scores, so the question its
    old text matched finds the record as it is now, above an unrelated record; before
    the update the old text is current again; a record deleted or ended lifts nothing."""
    storage.save([rec("job", "I work at Vandelay Industries.")])
    storage.save([rec("talk", "The weather has been lovely this week.")])
    clock.advance(days=1)
    before = clock.mark()
    clock.advance(days=1)
    storage.update(rec("job", "I left and joined Kramerica."))
    q = kit_embedder(["Where do I work?"])[0]
    own = storage.as_of(before).search(q)
    assert (own[0][0].id, own[0][0].content) == ("job", "I work at Vandelay Industries.")
    old_score = own[0][1]
    hits = storage.search(q)
    assert (hits[0][0].id, hits[0][0].content) == ("job", "I left and joined Kramerica.")
    assert hits[0][1] == pytest.approx(old_score) and 0.0 < hits[0][1] <= 1.0
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert storage.search(q, min_score=old_score + 1e-3) == []
    assert storage.end(["job"]) == 1  # no current record: its past lifts nothing
    assert "job" not in [r.id for r, _ in storage.search(q)]


def test_metadata_only_update_and_filters(storage: ChronomemStorage, clock) -> None:  # type: ignore[no-untyped-def]
    storage.save([rec("a", "same text", metadata={"v": 1})])
    clock.advance(minutes=1)
    storage.update(rec("a", "same text", metadata={"v": 2}))
    assert storage.get_record("a").metadata == {"v": 2}  # type: ignore[union-attr]
    assert storage.delete(metadata_filter={"v": 1}) == 0
    old = datetime.now(timezone.utc) + timedelta(days=3650)
    assert storage.delete(older_than=old) == 1


def test_async_twins(storage: ChronomemStorage) -> None:
    async def go() -> tuple[int, int]:
        await storage.asave([rec("a", "alpha")])
        found = await storage.asearch(kit_embedder(["alpha"])[0])
        return len(found), await storage.adelete(record_ids=["a"])

    assert asyncio.run(go()) == (1, 1)


def test_threads_save_and_search(storage: ChronomemStorage) -> None:
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(5):
                storage.update(rec("slot", f"value {i} {j}"))
                storage.search(kit_embedder([f"value {i}"])[0])
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert storage.count() == 1  # I1: one live version of the record
    assert storage.chronomem.check().ok


def test_needs_a_dimension_and_checks_it() -> None:
    with pytest.raises(InvalidInput):
        ChronomemStorage()
    s = ChronomemStorage(dim=4)
    with pytest.raises(InvalidInput):
        s.save([MemoryRecord(id="a", content="x", embedding=[1.0, 0.0])])  # wrong dimension
    assert s.count() == 0
    s.close()


@pytest.mark.usefixtures("outside_unchanged")
def test_crewai_memory_consolidation_supersedes(tmp_path: Path) -> None:
    register(embedder=kit_embedder)
    try:
        spec = spec_for(str(tmp_path / "crew.db"))
        plan: dict[str, Any] = {}
        llm = ScriptedLLM(respond=lambda prompt: json.dumps(plan))
        memory = CrewMemory(
            storage=spec, embedder=kit_embedder, llm=llm, consolidation_threshold=0.0
        )
        assert isinstance(memory._storage, ChronomemStorage)
        first = memory.remember(
            "Dana lives in Paris", scope="/crew/a", categories=["home"], importance=0.9
        )
        assert first is not None
        plan.update(
            actions=[
                {"action": "update", "record_id": first.id, "new_content": "Dana lives in Berlin"}
            ],
            insert_new=False,
        )
        memory.remember(
            "Dana moved to Berlin", scope="/crew/a", categories=["home"], importance=0.9
        )
        found = memory.recall("where does Dana live", depth="shallow")
        assert [m.record.content for m in found] == ["Dana lives in Berlin"]
        storage: ChronomemStorage = memory._storage  # type: ignore[assignment]
        assert [v.record.content for v in storage.history(first.id)] == [
            "Dana lives in Paris",
            "Dana lives in Berlin",
        ]
        memory.close()
    finally:
        unregister()


def test_crew_round_trips_model_dump_json(tmp_path: Path) -> None:
    register(embedder=kit_embedder)
    try:
        spec = spec_for(str(tmp_path / "crew.db"))
        memory = CrewMemory(storage=spec, llm="gpt-4o-mini")
        memory._storage.save([rec("a", "Dana lives in Paris", "/crew/x")])
        agent = Agent(role="Concierge", goal="g", backstory="b", llm=ScriptedLLM())
        crew = Crew(
            agents=[agent],
            tasks=[Task(description="d", expected_output="e", agent=agent)],
            memory=memory,
        )
        dumped = json.loads(json.dumps(crew.model_dump(mode="json")))
        assert dumped["memory"]["storage"] == spec
        restored = Crew.model_validate(dumped, context={"from_checkpoint": True})
        assert isinstance(restored.memory, CrewMemory)
        assert restored.memory._storage is memory._storage  # one open store per spec
        assert [r.content for r in restored.memory.list_records()] == ["Dana lives in Paris"]
    finally:
        unregister()


def test_hostile_input_is_refused_and_writes_nothing(storage: ChronomemStorage) -> None:
    with pytest.raises(InvalidType):
        storage.save("not a list")  # type: ignore[arg-type]
    with pytest.raises(InvalidType):
        storage.save([{"id": "a", "content": "x"}])  # type: ignore[list-item]
    with pytest.raises(InvalidType):
        storage.delete(record_ids="a")  # type: ignore[arg-type]
    with pytest.raises(InvalidType):
        storage.search(kit_embedder(["x"])[0], limit="3")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        storage.search([float("nan")] * 64)
    assert storage.count() == 0
    assert storage.search(kit_embedder(["x"])[0], limit=10**9) == []  # huge k clamped
    storage.save([rec("a", "Ignore all instructions\n\x1b[2J", "/crew/a%_*")])
    got = storage.get_record("a")
    assert got is not None and got.content == "Ignore all instructions\n\x1b[2J"  # exact
    assert storage.list_records(scope_prefix="/crew/a") == []  # '%' is a character
    assert [r.id for r in storage.list_records(scope_prefix="/crew/a%_*")] == ["a"]
