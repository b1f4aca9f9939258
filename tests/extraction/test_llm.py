"""The LLM extractor: batched calls, strict validation, schema acquisition."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from chronomem import Cardinality, Memory, State
from chronomem.extraction import (
    ExtractionError,
    LLMExtractor,
    Turn,
    add_messages,
    parse_answer,
)


class FakeModel:
    """A ``complete`` callable answering from a script, recording every call."""

    def __init__(self, *answers: object):
        self.answers = list(answers)
        self.calls: list[list[dict[str, str]]] = []

    def __call__(self, messages: list[dict[str, str]]) -> str:
        self.calls.append(messages)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return answer(messages)
        return answer if isinstance(answer, str) else json.dumps(answer)

    def turns_shown(self, call: int) -> list[dict]:
        user = self.calls[call][-1]["content"]
        return json.loads(user.split("\n", 1)[1])


def fact(turn: int, predicate: str, obj: str | None, op: str = "assert", **kw) -> dict:
    return {"turn": turn, "subject": "user", "predicate": predicate, "object": obj, "op": op, **kw}


def test_one_call_per_batch_not_per_turn():
    model = FakeModel(
        {"facts": [fact(0, "lives_in", "Paris"), fact(2, "likes", "tea")]},
        {"facts": [fact(4, "speaks", "Welsh")]},
    )
    ex = LLMExtractor(model, batch_size=3)
    turns = [Turn("I live in Paris"), Turn("ok"), Turn("I like tea"), Turn("work is busy"),
             Turn("I speak Welsh")]  # fmt: skip
    results = ex.extract(turns)
    assert len(model.calls) == 2 == ex.calls  # 4 kept turns, batches of 3
    assert [t["turn"] for t in model.turns_shown(0)] == [0, 2, 3]
    assert [t["turn"] for t in model.turns_shown(1)] == [4]
    assert results[1].skipped
    assert [(f.predicate, f.obj) for r in results for f in r.facts] == [
        ("lives_in", "Paris"), ("likes", "tea"), ("speaks", "Welsh"),
    ]  # fmt: skip


def test_the_prompt_carries_the_question_being_answered():
    model = FakeModel({"facts": [fact(1, "lives_in", "Paris")]})
    LLMExtractor(model).extract([Turn("Where do you live?", role="assistant"), Turn("Paris")])
    (shown,) = model.turns_shown(0)
    assert shown["replying_to"] == "Where do you live?" and shown["text"] == "Paris"
    assert "json" in model.calls[0][0]["content"].lower()


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("not json at all", "not JSON"),
        ('{"facts": [', "not JSON"),
        ("[]", '"facts"'),
        ('{"fact": []}', '"facts"'),
        ('{"facts": {"turn": 0}}', "must be a list"),
        ({"facts": ["lives_in Paris"]}, "must be an object"),
        (
            {"facts": [{"turn": 0, "subject": "user", "predicate": "lives_in"}]},
            "missing object, op",
        ),
        ({"facts": [fact(7, "lives_in", "Paris")]}, "not a turn of this batch"),
        ({"facts": [fact(0, "lives_in", "Paris", op="update")]}, "op must be"),
        ({"facts": [fact(0, "lives_in", "")]}, "object must be"),
        ({"facts": [fact(0, "lives_in", None)]}, "object must be"),
        ({"facts": [fact(0, "lives in!!", "Paris")]}, None),  # folds to lives_in: fine
        ({"facts": [fact(0, "", "Paris")]}, "predicate"),
        ({"facts": [fact(0, "lives_in", "Paris", valid_from="last month")]}, "ISO 8601"),
        (
            {
                "facts": [
                    fact(0, "lives_in", "Paris", valid_from="2024-05-01", valid_to="2024-01-01")
                ]
            },
            "not after",
        ),
        ({"facts": [fact(0, "lives_in", "Paris", confidence=7)]}, "confidence"),
        ({"facts": [{**fact(0, "lives_in", "Paris"), "turn": True}]}, "not a turn"),
    ],
)
def test_strict_validation(answer: object, why: str | None):
    raw = answer if isinstance(answer, str) else json.dumps(answer)
    turns = {0: Turn("I live in Paris")}
    if why is None:
        assert parse_answer(raw, turns)[0][0].predicate == "lives_in"
        return
    with pytest.raises(ExtractionError, match=why):
        parse_answer(raw, turns)


def test_answer_details_are_normalised():
    raw = "```json\n" + json.dumps({"facts": [
        {"turn": 0, "subject": "I", "predicate": "LivesIn", "object": " Paris ", "op": "assert",
         "valid_from": "2024-05-01", "confidence": 0.7},
        {"turn": 0, "subject": "Ada", "predicate": "works_at", "object": None, "op": "end",
         "valid_to": "2024-05-01T12:00:00Z"},
    ]}) + "\n```"  # fmt: skip
    (a, b) = parse_answer(raw, {0: Turn("...", speaker="Ada")})[0]
    assert (a.subject, a.predicate, a.obj, a.confidence) == ("Ada", "lives_in", "Paris", 0.7)
    assert a.valid_from == datetime(2024, 5, 1, tzinfo=timezone.utc)
    assert (b.op, b.obj, b.valid_to) == ("end", None, datetime(2024, 5, 1, 12, tzinfo=timezone.utc))


def test_a_bad_batch_writes_nothing_and_the_good_batch_is_written(mem: Memory):
    model = FakeModel(
        {"facts": [fact(0, "lives_in", "Paris"), {"turn": 1, "subject": "user"}]},  # partial
        {"facts": [fact(2, "likes", "tea")]},
    )
    receipt = add_messages(
        mem,
        ["I live in Paris", "I work at Acme", "I like tea"],
        extractor=LLMExtractor(model, batch_size=2),
    )
    assert receipt.failed == 2 and set(receipt.errors) == {0, 1}
    assert "missing" in receipt.errors[0]
    assert receipt.extracted == 1
    assert [(f.predicate, f.object) for f in mem.facts(subject="user")] == [("likes", "tea")]
    assert len(mem.episodes()) == 3  # the transcript is kept either way


def test_a_model_client_exception_is_reported_not_raised(mem: Memory):
    model = FakeModel(RuntimeError("connection reset"))
    receipt = add_messages(mem, "I live in Paris", extractor=LLMExtractor(model))
    assert receipt.failed == 1 and "connection reset" in receipt.errors[0]
    assert mem.facts(subject="user") == []
    with pytest.raises(ExtractionError):
        add_messages(
            mem, "I live in Rome", extractor=LLMExtractor(FakeModel("nope")), on_error="raise"
        )


def test_llm_facts_go_through_the_state_machine(mem: Memory, clock):
    clock.now = datetime(2024, 6, 12, tzinfo=timezone.utc)
    add_messages(
        mem,
        "I live in Paris",
        extractor=LLMExtractor(FakeModel({"facts": [fact(0, "lives_in", "Paris")]})),
    )
    ex = LLMExtractor(
        FakeModel(
            {
                "facts": [
                    fact(0, "lives_in", "Berlin", valid_from="2024-06-20"),
                    fact(0, "works_at", None, op="end"),
                ]
            }
        ),
        name="llm:test",
    )
    receipt = add_messages(mem, "Moving to Berlin on the 20th, and I quit my job.", extractor=ex)
    assert receipt.extracted == 2
    hist = mem.history("user", "lives_in")
    assert [(f.object, f.state) for f in hist] == [
        ("Paris", State.LIVE),
        ("Berlin", State.SCHEDULED),
    ]
    assert hist[1].extractor == "llm:test/1"


# -- schema acquisition ---------------------------------------------------------------------


def test_unknown_predicate_cardinality_is_asked_once_and_persisted(mem: Memory, clock):
    model = FakeModel(
        {"facts": [fact(0, "favorite_color", "blue")]},
        {"cardinality": "one"},  # the schema question
        {"facts": [fact(0, "favorite_color", "green")]},
        {"facts": [fact(0, "favorite_color", "red")]},
    )
    ex = LLMExtractor(model)
    add_messages(mem, "My favourite colour is blue", extractor=ex)
    assert ex.schema_questions == 1
    assert "favorite_color" in model.calls[1][-1]["content"]
    assert mem.predicate("favorite_color").cardinality is Cardinality.ONE

    clock.advance(days=1)
    add_messages(mem, "Actually my favourite colour is green now", extractor=ex)
    assert ex.schema_questions == 1 and len(model.calls) == 3  # not asked again
    # ONE: green replaced blue
    assert [f.object for f in mem.facts(subject="user", predicate="favorite_color")] == ["green"]

    # a fresh extractor (another process) sees the persisted registry: still not asked
    fresh = LLMExtractor(FakeModel({"facts": [fact(0, "favorite_color", "red")]}))
    clock.advance(days=1)
    add_messages(mem, "red, definitely red", extractor=fresh)
    assert fresh.schema_questions == 0


def test_builtin_predicates_are_never_asked(mem: Memory):
    model = FakeModel({"facts": [fact(0, "lives_in", "Paris"), fact(0, "resides_in", "Paris")]})
    ex = LLMExtractor(model)
    add_messages(mem, "I live in Paris", extractor=ex)
    assert ex.schema_questions == 0 and len(model.calls) == 1


def test_a_failed_schema_answer_is_not_retried_and_leaves_many(mem: Memory):
    model = FakeModel(
        {"facts": [fact(0, "hobby_level", "advanced")]},
        "I think it is one?",  # not JSON
        {"facts": [fact(0, "hobby_level", "expert")]},
    )
    ex = LLMExtractor(model)
    add_messages(mem, "my hobby level is advanced", extractor=ex)
    add_messages(mem, "my hobby level is expert", extractor=ex)
    assert ex.schema_questions == 1 and len(model.calls) == 3
    assert sorted(f.object for f in mem.facts(subject="user", predicate="hobby_level")) == [
        "advanced", "expert",
    ]  # fmt: skip
