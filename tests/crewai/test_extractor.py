"""Extraction with a CrewAI LLM (issue #18), offline with scripted CrewAI models."""

from __future__ import annotations

import json
from typing import Any

from chronomem import Memory
from crewai_chronomem import ChronomemMemory, CrewAIExtractor
from crewai_chronomem.extractor import FactsAnswer
from crewai_chronomem.testing import ScriptedLLM


def answer(*facts: dict[str, Any]) -> str:
    return json.dumps({"facts": list(facts)})


def fact(subject: str, predicate: str, obj: str | None, op: str = "assert") -> dict[str, Any]:
    return {"turn": 0, "subject": subject, "predicate": predicate, "object": obj, "op": op}


def test_memory_extracts_with_the_crews_llm(clock) -> None:  # type: ignore[no-untyped-def]
    replies = [
        answer(fact("user", "lives_in", "Paris")),
        answer(fact("user", "lives_in", "Berlin")),
    ]
    llm = ScriptedLLM(replies=replies)
    mem = Memory(clock=clock)
    cm = ChronomemMemory(memory=mem, llm=llm, extractor="llm")
    cm.remember("Je vis à Paris.")
    clock.advance(days=1)
    cm.remember("Ich bin nach Berlin gezogen.")
    current = mem.facts(predicate="lives_in")
    assert [f.object for f in current] == ["Berlin"]
    assert current[0].extractor.startswith("crewai:scripted")
    assert len(llm.calls) == 2  # one model call per remembered batch
    system = llm.calls[0][0]["content"]
    assert "extract durable facts" in system


def test_malformed_answers_write_nothing(clock) -> None:  # type: ignore[no-untyped-def]
    bad = [
        "not json",
        json.dumps({"facts": [{"turn": 0, "subject": "user"}]}),  # missing fields
        answer(fact("user", "lives_in", "Paris", op="maybe")),  # not an op
        answer({**fact("user", "lives_in", "Paris"), "turn": 7}),  # no such turn
    ]
    for reply in bad:
        mem = Memory(clock=clock)
        receipt = mem.add(
            "I live in Paris.", extractor=CrewAIExtractor(ScriptedLLM(replies=[reply]))
        )
        assert receipt.failed == 1 and mem.facts() == [], reply
        assert len(mem.episodes()) == 1  # the message itself is kept


class StructuredLLM(ScriptedLLM):
    """A CrewAI model honouring ``response_model`` (returns the pydantic object)."""

    def call(self, messages: Any, *args: Any, response_model: Any = None, **kw: Any) -> Any:
        self._calls.append((messages, response_model))
        if response_model is FactsAnswer:
            return FactsAnswer.model_validate(json.loads(answer(fact("user", "likes", "tea"))))
        return "{}"


def test_structured_output_is_requested_and_validated(clock) -> None:  # type: ignore[no-untyped-def]
    llm = StructuredLLM()
    mem = Memory(clock=clock)
    receipt = mem.add("I like tea.", extractor=CrewAIExtractor(llm))
    assert receipt.extracted == 1
    assert [(f.predicate, f.object) for f in mem.facts()] == [("likes", "tea")]
    assert llm.calls[0][1] is FactsAnswer
    plain = ScriptedLLM(replies=[answer(fact("user", "likes", "coffee"))])
    CrewAIExtractor(plain, structured=False)  # plain text path accepted too
    receipt = Memory(clock=clock).add("I like coffee.", extractor=CrewAIExtractor(plain))
    assert receipt.extracted == 1
