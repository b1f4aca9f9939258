"""A CrewAI crew with chronomem memory: remember, supersede, time-travel — offline.

Runs with no API key and no network: the agents' model is ``ScriptedLLM``, a
real CrewAI ``BaseLLM`` that answers from the prompt it is given (it repeats
the first memory CrewAI put in the prompt, the way a model grounded in memory
would).

1. The customer said "I live in Paris" (remembered: an episode plus the fact
   ``dana lives_in Paris``).
2. A two-task crew: task 1 takes a note for the team; CrewAI saves the agent's
   output to memory; task 2 recalls that note.
3. The customer corrects themself ("I moved to Berlin"): the fact is superseded.
4. Reads now, ``as_of`` before the correction, the history — and the same crew
   replayed on ``memory.as_of(before)`` answers from what it knew then.
5. The crew's own model as the fact extractor (``extractor="llm"``): a CrewAI
   LLM reads facts from a message the rule extractor cannot (French here).

Run: ``python examples/crewai_crew.py``."""

from __future__ import annotations

import json
import os
import tempfile

# Keep CrewAI offline and its files in a temporary directory (before importing it).
_sandbox = tempfile.mkdtemp(prefix="crewai-example-")
os.environ.setdefault("CREWAI_STORAGE_DIR", _sandbox)
for _flag in ("CREWAI_DISABLE_TELEMETRY", "CREWAI_DISABLE_TRACKING", "OTEL_SDK_DISABLED"):
    os.environ.setdefault(_flag, "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.memory.types import MemoryMatch  # noqa: E402

from chronomem import Memory  # noqa: E402
from crewai_chronomem import ChronomemMemory  # noqa: E402
from crewai_chronomem.testing import ScriptedLLM  # noqa: E402

MEMORY_HEADER = "Relevant memories:"


def memories(prompt: str) -> list[str]:
    """The memories CrewAI put into the prompt (``- (score=…) text`` lines), best first."""
    if MEMORY_HEADER not in prompt:
        return []
    lines = (line.strip() for line in prompt.split(MEMORY_HEADER, 1)[1].splitlines())
    return [line.split(") ", 1)[1] for line in lines if line.startswith("- (score=")]


def respond(prompt: str) -> str:
    found = memories(prompt)
    if "Take a note" in prompt:
        facts = [m for m in found if "lives in" in m and "Team note" not in m]
        city = facts[0].split("lives in ", 1)[1].split(" (", 1)[0] if facts else "an unknown city"
        return f"Final Answer: Team note: our customer Dana lives in {city}."
    notes = [m for m in found if "Team note" in m] or found or ["nothing found"]
    return f"Final Answer: From memory: {notes[0]}"


def extraction_answer(prompt: str) -> str:
    """What a model answers to chronomem's extraction prompt (JSON, strict schema)."""
    facts = []
    if "Je travaille chez Acme" in prompt:
        facts.append(
            {
                "turn": 0,
                "subject": "Dana",
                "predicate": "works_at",
                "object": "Acme",
                "op": "assert",
            }
        )
    return json.dumps({"facts": facts})


def run_crew(memory: ChronomemMemory, llm: ScriptedLLM) -> list[str]:
    agent = Agent(
        role="Concierge",
        goal="Help the team serve the customer",
        backstory="You keep careful notes.",
        llm=llm,
    )
    note = Task(
        description="Take a note for the team: which city does the customer Dana live in?",
        expected_output="One sentence.",
        agent=agent,
    )
    ask = Task(
        description="Team note about Dana: what does the team note say about Dana's city?",
        expected_output="One sentence.",
        agent=agent,
    )
    crew = Crew(agents=[agent], tasks=[note, ask], memory=memory)
    result = crew.kickoff()
    return [t.raw for t in result.tasks_output]


def facts(matches: list[MemoryMatch]) -> list[str]:
    return [m.record.content for m in matches if m.record.metadata.get("kind") == "fact"]


def main() -> None:
    store = Memory()  # in-memory SQLite; a path or a PostgreSQL URL persists
    memory = ChronomemMemory(memory=store)

    memory.remember("I live in Paris.", source="Dana")
    llm = ScriptedLLM(respond=respond)
    outputs = run_crew(memory, llm)
    print(f"task 1: {outputs[0]}")
    print(f"task 2: {outputs[1]}")
    print(f"task 2 recalled task 1's note: {'Team note' in outputs[1]}")

    before = store.now()
    memory.remember("I moved to Berlin.", source="Dana")  # the correction
    question = "Where does Dana live?"
    print(f"now:           {facts(memory.recall(question))[0]}")
    print(f"before (as_of): {facts(memory.recall(question, as_of=before))[0]}")
    history = facts(memory.recall(question, include_history=True))
    print("history:")
    for line in sorted(history):
        print(f"  {line}")

    replay = run_crew(memory.as_of(before), ScriptedLLM(respond=respond))
    print(f"replayed crew, as of before the correction: {replay[0]}")
    try:
        memory.as_of(before).remember("I moved to Rome.")
    except Exception as exc:  # ReadOnlyView
        print(f"writing to the past: refused ({type(exc).__name__})")

    model = ScriptedLLM(respond=extraction_answer)  # stands for the crew's real LLM
    with_model = ChronomemMemory(memory=store, llm=model, extractor="llm")
    with_model.remember("Je travaille chez Acme depuis lundi.", source="Dana")
    print(f"the crew's model extracted: {facts(with_model.recall('Acme'))[0]}")


if __name__ == "__main__":
    main()
