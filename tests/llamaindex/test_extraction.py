"""Extraction by a LlamaIndex LLM (issue #18): structured and plain, validated strictly, offline."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM, MockLLM

from chronomem import Cardinality, InvalidInput, InvalidType, Memory
from chronomem.extraction.llm import SYSTEM_PROMPT
from llama_index.memory.chronomem import ChronomemMemory, LlamaIndexExtractor


def fact(turn: int, predicate: str, obj: str | None, op: str = "assert") -> dict[str, Any]:
    return {"turn": turn, "subject": "user", "predicate": predicate, "object": obj, "op": op}


class StructuredModel:
    """A function-calling mock that fills the schema it is offered with ``facts``."""

    def __init__(self, facts: list[dict[str, Any]], cardinality: str = "one") -> None:
        self.facts = facts
        self.cardinality = cardinality
        self.calls: list[tuple[list[ChatMessage], list[Any]]] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        tools = list(kwargs.get("tools") or [])
        self.calls.append((list(messages), tools))
        if tools:
            call = ToolCallBlock(
                tool_call_id="x",
                tool_name=tools[0].metadata.name,
                tool_kwargs={"facts": self.facts},
            )
            return ChatMessage(role="assistant", blocks=[call])
        return ChatMessage(role="assistant", content=json.dumps({"cardinality": self.cardinality}))


def test_structured_output_through_the_schema(store: Memory) -> None:
    brain = StructuredModel([fact(0, "lives_in", "Lisbon"), fact(0, "favourite_colour", "teal")])
    ext = LlamaIndexExtractor(MockFunctionCallingLLM(response_generator=brain))
    assert ext.structured and ext.name == "llamaindex:MockFunctionCallingLLM"
    text = 'I settled in Lisbon {for real}; teal is my colour. {"facts": []}'
    receipt = store.add([{"role": "user", "content": text}], extractor=ext)
    assert receipt.extracted == 2 and receipt.failed == 0
    got = {(f.predicate, f.object) for f in store.facts()}
    assert got == {("lives_in", "Lisbon"), ("favourite_colour", "teal")}
    assert all(f.extractor == "llamaindex:MockFunctionCallingLLM/1" for f in store.facts())
    messages, tools = brain.calls[0]
    assert messages[0].content == SYSTEM_PROMPT, "the prompt reaches the model verbatim"
    shown = json.dumps(text, ensure_ascii=False)[1:-1]
    assert shown in (messages[1].content or ""), "braces in the turn reach the model intact"
    assert tools and "facts" in json.dumps(tools[0].metadata.get_parameters_dict())
    # an invented predicate's cardinality was asked once, in plain chat, and registered
    assert store.predicate("favourite_colour").cardinality is Cardinality.ONE
    assert [c for c in brain.calls if not c[1]], "the schema question is plain chat"


@pytest.mark.parametrize(
    "bad",
    [
        [fact(7, "lives_in", "Lisbon")],  # not a turn of the batch
        [fact(0, "9 lives", "Lisbon")],  # not a snake_case predicate
        [fact(0, "lives_in", "")],  # empty object
        [{**fact(0, "lives_in", "Lisbon"), "valid_from": "next tuesday"}],
        [{**fact(0, "lives_in", "Lisbon"), "confidence": 7}],
    ],
)
def test_an_invalid_structured_answer_writes_nothing(
    store: Memory, bad: list[dict[str, Any]]
) -> None:
    ext = LlamaIndexExtractor(MockFunctionCallingLLM(response_generator=StructuredModel(bad)))
    receipt = store.add([{"role": "user", "content": "I live in Lisbon."}], extractor=ext)
    assert receipt.failed == 1 and receipt.errors and store.facts() == []
    assert len(store.episodes()) == 1, "the message itself is kept"


def plain(answer: Any) -> MockFunctionCallingLLM:
    def brain(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        if isinstance(answer, Exception):
            raise answer
        return ChatMessage(role="assistant", content=answer)

    return MockFunctionCallingLLM(response_generator=brain)


def test_plain_chat_json_answer(store: Memory) -> None:
    answer = "```json\n" + json.dumps({"facts": [fact(0, "works_at", "Acme")]}) + "\n```"
    ext = LlamaIndexExtractor(plain(answer), structured=False)
    store.add([{"role": "user", "content": "I work at Acme."}], extractor=ext)
    assert [(f.predicate, f.object) for f in store.facts()] == [("works_at", "Acme")]


@pytest.mark.parametrize(
    "answer", ["Sure! Ada lives in Lisbon.", '{"facts": {}}', RuntimeError("503")]
)
def test_plain_chat_failures_are_reported_never_written(store: Memory, answer: Any) -> None:
    ext = LlamaIndexExtractor(plain(answer), structured=False)
    receipt = store.add([{"role": "user", "content": "I live in Lisbon."}], extractor=ext)
    assert receipt.failed == 1 and store.facts() == []


def test_a_non_function_calling_model_answers_in_plain_chat(store: Memory) -> None:
    ext = LlamaIndexExtractor(MockLLM())  # echoes the prompt: not JSON
    assert not ext.structured
    receipt = store.add([{"role": "user", "content": "I live in Lisbon."}], extractor=ext)
    assert receipt.failed == 1 and store.facts() == []


def test_memory_uses_the_framework_llm(store: Memory) -> None:
    brain = StructuredModel([fact(0, "lives_in", "Lisbon")])
    mem = ChronomemMemory.from_defaults(
        memory=store, session_id="s", llm=MockFunctionCallingLLM(response_generator=brain)
    )
    mem.put(ChatMessage(role="user", content="Lisbon has been home for a while."))
    (f,) = store.facts()
    assert (f.predicate, f.object, f.extractor) == (
        "lives_in",
        "Lisbon",
        "llamaindex:MockFunctionCallingLLM/1",
    )
    assert "lives in Lisbon" in (mem.get()[0].content or "")


def test_bad_construction(store: Memory) -> None:
    with pytest.raises(InvalidType):
        LlamaIndexExtractor("gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        ChronomemMemory.from_defaults(
            memory=store, llm=MockFunctionCallingLLM(), extractor=LlamaIndexExtractor(MockLLM())
        )
