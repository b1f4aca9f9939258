"""chat_model_extractor: facts read by a LangChain chat model (offline fakes), with
structured output where the model has it and the strict schema either way."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from chronomem import InvalidType, Memory
from langchain_chronomem import chat_model_extractor

from .conftest import sqlite_only
from .fakes import ScriptedModel

LIVES = {"turn": 0, "subject": "user", "predicate": "lives_in", "object": "Rome", "op": "assert"}


def text_model(*answers: object) -> GenericFakeChatModel:
    return GenericFakeChatModel(
        messages=iter([AIMessage(a if isinstance(a, str) else json.dumps(a)) for a in answers])
    )


def tool_answer(args: dict) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "extracted_facts", "args": args, "id": "x"}])


def everything(m: Memory) -> list:
    return m.facts(states=["live", "ended", "scheduled", "retracted"])


def test_text_json_answer(mem: Memory) -> None:
    ex = chat_model_extractor(text_model({"facts": [LIVES]}))
    receipt = mem.add("These days I'm in Rome.", extractor=ex)
    (fact,) = mem.facts()
    assert (fact.predicate, fact.object, fact.extractor) == (
        "lives_in",
        "Rome",
        "langchain/GenericFakeChatModel/1",
    )
    assert fact.source_episode_ids == tuple(receipt.episode_ids)
    assert ex.calls == 1


def test_structured_output_through_tool_calling(mem: Memory) -> None:
    model = ScriptedModel([tool_answer({"facts": [LIVES]})])
    ex = chat_model_extractor(model)
    mem.add("These days I'm in Rome.", extractor=ex)
    assert [f.object for f in mem.facts()] == ["Rome"]
    assert model.seen[0][0].type == "system"  # the extractor's own prompt


@sqlite_only
@pytest.mark.parametrize(
    "answer",
    [
        "not json at all",
        {"facts": [{**LIVES, "turn": 7}]},  # no such turn
        {"facts": [{**LIVES, "op": "delete"}]},
        {"facts": [LIVES, {**LIVES, "object": ""}]},  # one bad item fails the whole batch
        {"facts": [{**LIVES, "turn": "0"}]},  # no coercion of a string turn
        {"fact": []},
    ],
)
def test_malformed_answers_write_nothing(mem: Memory, answer: object) -> None:
    for ex in (
        chat_model_extractor(text_model(answer)),
        chat_model_extractor(ScriptedModel([tool_answer(answer)]))
        if isinstance(answer, dict)
        else None,
    ):
        if ex is None:
            continue
        receipt = mem.add("These days I'm in Rome.", extractor=ex)
        assert receipt.failed == 1 and receipt.errors
        assert everything(mem) == []


@sqlite_only
def test_a_failing_model_is_reported_not_raised(mem: Memory) -> None:
    ex = chat_model_extractor(text_model())  # the fake runs out of answers: it raises
    receipt = mem.add("These days I'm in Rome.", extractor=ex)
    assert receipt.failed == 1 and everything(mem) == []
    assert len(mem.episodes()) == 1  # the message itself is kept


def test_unknown_predicates_get_their_cardinality_from_the_model(mem: Memory) -> None:
    fav = {**LIVES, "predicate": "favourite_colour", "object": "green"}
    model = ScriptedModel([tool_answer({"facts": [fav]}), '{"cardinality": "one"}'])
    mem.add("My favourite colour is green.", extractor=chat_model_extractor(model))
    assert mem.predicate("favourite_colour").cardinality.value == "one"
    assert [f.object for f in mem.facts()] == ["green"]


@sqlite_only
def test_structured_off_and_bad_model(mem: Memory) -> None:
    model = ScriptedModel([json.dumps({"facts": [LIVES]})])
    mem.add("These days I'm in Rome.", extractor=chat_model_extractor(model, structured=False))
    assert [f.object for f in mem.facts()] == ["Rome"]
    with pytest.raises(InvalidType):
        chat_model_extractor(lambda msgs: "{}")  # type: ignore[arg-type]
