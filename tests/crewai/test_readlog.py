"""The served-read log through the CrewAI adapters: a crew's recalls are tagged with
the kickoff's execution id and the task's id, the storage backend's searches too,
and ``served(run=R)`` answers what the crew knew in run R after a later
correction and erasure."""

from __future__ import annotations

from crewai import Agent, Crew, Task
from crewai.context import reset_current_task_id, set_current_task_id
from crewai.execution import clear_execution_uuid, set_execution_uuid

from chronomem import Memory
from crewai_chronomem import ChronomemMemory, ChronomemStorage
from crewai_chronomem.conformance import kit_embedder
from crewai_chronomem.testing import ScriptedLLM

from ..conftest import ManualClock


def test_the_log_is_off_unless_asked(memory: Memory) -> None:
    cm = ChronomemMemory(memory=memory)
    cm.remember("I live in Paris.", source="dana")
    cm.recall("where does dana live")
    assert memory.read_log is False and memory.reads() == []


def test_a_crew_s_recalls_are_tagged_with_its_kickoff_and_tasks(
    memory: Memory, clock: ManualClock
) -> None:
    cm = ChronomemMemory(memory=memory, read_log=True)
    cm.remember("I live in Paris.", source="dana")
    cm.remember("I work at Acme.", source="dana")
    (home,) = memory.facts(predicate="lives_in")
    (job,) = memory.facts(predicate="works_at")
    agent = Agent(
        role="Concierge",
        goal="help",
        backstory="careful",
        llm=ScriptedLLM(replies=["Final Answer: noted"]),
    )
    tasks = [
        Task(description="Where does dana live?", expected_output="a city", agent=agent),
        Task(description="Where does dana work?", expected_output="a company", agent=agent),
    ]
    Crew(agents=[agent], tasks=tasks, memory=cm).kickoff()
    first, second = (memory.reads(tag={"task": str(t.id)}) for t in tasks)
    assert first and second
    assert first[0].args["query"] == "Where does dana live?"  # CrewAI recalls the description
    runs = {r.tag["run"] for r in first + second}
    assert len(runs) == 1  # one kickoff
    (run,) = runs
    assert home.version_id in {i.id for i in first[0].items}

    clock.advance(days=1)
    memory.correct(home.id, "Berlin")
    memory.erase(job.id)
    knew = memory.served(run=run)
    changes = {(getattr(it.then, "object", None), it.change) for it in knew.items}
    assert ("Paris", "corrected") in changes
    assert job.version_id in {i.id for i in second[0].items}
    assert (None, "erased") in changes
    assert "acme" not in knew.text().lower()


def test_the_storage_backend_tags_its_searches(url: str | None, clock: ManualClock) -> None:
    from crewai.memory.types import MemoryRecord

    storage = ChronomemStorage(url, embedder=kit_embedder, clock=clock, read_log=True)
    try:
        text = "dana loves ramen"
        storage.save([MemoryRecord(id="a", content=text, embedding=kit_embedder([text])[0])])
        run = set_execution_uuid("kickoff-1")
        task = set_current_task_id("task-1")
        try:
            hits = storage.search(kit_embedder(["ramen dana"])[0], limit=5)
        finally:
            reset_current_task_id(task)
            clear_execution_uuid(run)
        store = storage.chronomem
        (read,) = store.reads(run="kickoff-1", op="search")
        # every read the search made (with the records its vector missed: a facts read)
        every = store.reads(run="kickoff-1")
        assert every and all(r.tag == {"run": "kickoff-1", "task": "task-1"} for r in every)
        assert hits and hits[0][0].id == "a"
        assert store.facts(subject="a", exact=True)[0].version_id in {i.id for i in read.items}
    finally:
        storage.close()
