"""Core's extraction tells a model client what each call asks (``Request``), and
the framework extractors pick their structured output from it, not by comparing
the first message to a prompt string (issue #33)."""

from __future__ import annotations

import json
from typing import Any

from chronomem.extraction import (
    ANSWER_SCHEMA,
    DEFAULT_CONFIDENCE,
    LLMExtractor,
    Request,
    Turn,
    parse_answer,
)

ANSWER = {
    "facts": [{"turn": 0, "subject": "ada", "predicate": "likes", "object": "tea", "op": "assert"}]
}


def test_kinds_reach_complete() -> None:
    seen: list[Request] = []

    def complete(messages: list[dict[str, str]], kind: Request) -> str:
        seen.append(kind)
        if kind is Request.FACTS:
            return json.dumps(ANSWER)
        return json.dumps({"cardinality": "many"})

    ext = LLMExtractor(complete, kinds=True)
    (result,) = ext.extract([Turn("I like tea", speaker="ada")])
    assert [f.obj for f in result.facts] == ["tea"]
    assert result.facts[0].confidence == DEFAULT_CONFIDENCE
    assert ext.cardinality_of("collects") == "many"
    assert seen == [Request.FACTS, Request.CARDINALITY]


def test_plain_complete_is_unchanged() -> None:
    ext = LLMExtractor(lambda messages: json.dumps(ANSWER))
    (result,) = ext.extract([Turn("I like tea", speaker="ada")])
    assert [f.obj for f in result.facts] == ["tea"]


def test_the_schema_is_the_one_parse_answer_reads() -> None:
    item = ANSWER_SCHEMA["properties"]["facts"]["items"]
    assert set(item["required"]) == {"turn", "subject", "predicate", "object", "op"}
    assert parse_answer(json.dumps(ANSWER), {0: Turn("I like tea", speaker="ada")})


def test_langchain_structured_output_follows_the_kind() -> None:
    from langchain_chronomem.extractor import ChatModelComplete

    class Structured:
        def invoke(self, messages: Any) -> dict[str, Any]:
            return ANSWER

    class Plain:
        def invoke(self, messages: Any) -> Any:
            from langchain_core.messages import AIMessage

            return AIMessage(content='{"cardinality": "one"}')

    c = ChatModelComplete.__new__(ChatModelComplete)
    c.model, c.structured_model = Plain(), Structured()  # type: ignore[assignment]
    other_prompt = [
        {"role": "system", "content": "a reworded prompt"},
        {"role": "user", "content": "x"},
    ]
    assert json.loads(c(other_prompt, Request.FACTS)) == ANSWER
    assert json.loads(c(other_prompt, Request.CARDINALITY)) == {"cardinality": "one"}


def test_crewai_picks_the_response_model_by_kind() -> None:
    from chronomem_adapters.answers import CardinalityAnswer, answer_json
    from crewai_chronomem.extractor import SCHEMAS, FactsAnswer

    assert {Request.FACTS: FactsAnswer, Request.CARDINALITY: CardinalityAnswer} == SCHEMAS
    filled = FactsAnswer.model_validate(ANSWER)
    assert json.loads(answer_json(filled)) == {
        "facts": [{**ANSWER["facts"][0], "valid_from": None, "valid_to": None}]
    }
