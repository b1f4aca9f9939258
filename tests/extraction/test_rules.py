"""Targeted behaviour of the rule extractor (the labelled set measures the rest)."""

from __future__ import annotations

import time

import pytest

from chronomem.extraction import Extractor, RuleExtractor, Turn

from .conftest import REF


def facts(text: str, **kw) -> list[tuple[str, str | None, str]]:
    return [
        (f.predicate, f.obj, f.op)
        for f in RuleExtractor().extract_text(text, occurred_at=REF, **kw)
    ]


def test_is_an_extractor():
    ex = RuleExtractor()
    assert isinstance(ex, Extractor)
    assert (ex.name, ex.version) == ("rules", "1")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I don't live in Paris anymore", [("lives_in", "Paris", "end")]),
        ("I no longer work at IBM", [("works_at", "IBM", "end")]),
        ("I moved out of Leeds", [("lives_in", "Leeds", "end")]),
        ("I left Acme", [("works_at", "Acme", "end")]),
        ("I left London", [("lives_in", "London", "end")]),  # a known place: a move
        ("I quit my job", [("works_at", None, "end")]),
        ("I don't have a car anymore", [("has", "car", "end")]),
        ("I no longer like coffee", [("likes", "coffee", "end")]),
        ("I don't like coffee", [("dislikes", "coffee", "assert")]),
        ("I don't hate jazz anymore", [("dislikes", "jazz", "end")]),
        ("I used to play chess", []),
    ],
)
def test_negation_and_endings(text, expected):
    assert facts(text) == expected


def test_subject_is_the_speaker():
    (f,) = RuleExtractor().extract_text("I live in Oslo", occurred_at=REF, speaker="Ingrid")
    assert f.subject == "Ingrid"
    (res,) = RuleExtractor().extract([Turn("I live in Oslo", speaker="Ingrid", occurred_at=REF)])
    assert res.facts[0].subject == "Ingrid"


def test_casual_lowercase_typing():
    assert facts("im based in berlin and i love techno") == [
        ("lives_in", "berlin", "assert"), ("likes", "techno", "assert"),
    ]  # fmt: skip
    assert facts("i live in fear of my inbox") == []
    assert facts("i work at a bank") == []


def test_future_without_a_date_is_a_plan():
    assert facts("I'm moving to Lisbon") == [("plans", "move to Lisbon", "assert")]


def test_evidence_and_confidence_are_reported():
    (f,) = RuleExtractor().extract_text("Hello! I moved to Berlin last month.", occurred_at=REF)
    assert f.evidence == "I moved to Berlin last month."
    assert 0 < f.confidence <= 1


@pytest.mark.parametrize(
    "text",
    [
        "I " + "just " * 3000 + "live in Paris",
        "I " + "really " * 2000,
        "I live in " + "Paris " * 5000,
        "I like a, " * 3000,
        "my name is " + "A" * 20000,
        "I was born in " + "in " * 3000,
        "I have a " + "little " * 3000 + "dog",
        "I live in Paris. " * 1000,
        "\x00\u202e I live in Paris \ud7ff",
    ],
)
def test_hostile_input_is_linear_and_safe(text: str):
    start = time.perf_counter()
    RuleExtractor().extract_text(text, occurred_at=REF)
    assert time.perf_counter() - start < 2.0
