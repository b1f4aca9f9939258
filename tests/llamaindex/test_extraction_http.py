"""LlamaIndexExtractor over LlamaIndex's own OpenAI class (``llama-index-llms-openai``,
the package's ``test`` extra) against vcrpy cassettes in the OpenAI wire format
(``record_mode="none"``: nothing reaches the network; the API key is a dummy).
``gpt-4o-mini`` is a function-calling model, so the extractor asks for structured
output: LlamaIndex sends ``ExtractedFacts`` as a strict json_schema, and the
answer passes LlamaIndex's pydantic validation and then core's strict one."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from chronomem import Memory
from llama_index.memory.chronomem import LlamaIndexExtractor

from .. import cassette_player
from ..conftest import ManualClock, utc

openai = pytest.importorskip("llama_index.llms.openai")

player = cassette_player.player(
    Path(__file__).with_name("cassettes"), "ExtractedFacts", strict=True
)
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"])
ALL = ["live", "ended", "scheduled", "retracted"]


def _extractor() -> LlamaIndexExtractor:
    llm = openai.OpenAI(
        model="gpt-4o-mini",
        api_key="test-key",
        api_base="https://llm.example.test/v1",
        max_retries=0,
    )
    return LlamaIndexExtractor(llm)


@pytest.fixture
def said_in_march(clock: ManualClock) -> None:
    clock.now = utc(2026, 3, 10, 9)
    clock.tick = timedelta(0)  # the turn's instant is the one in the cassette


@sqlite_only
def test_openai_structured_output_writes_the_fact(store: Memory, said_in_march) -> None:
    ext = _extractor()
    assert ext.structured, "a function-calling model answers through the schema"
    with player.use_cassette("openai_facts.yaml") as cassette:
        receipt = store.add("I moved to Lisbon last month.", extractor=ext)
    assert cassette.play_count == 1
    (fact,) = store.facts()
    assert (fact.predicate, fact.object) == ("lives_in", "Lisbon")
    assert fact.valid_from == utc(2026, 2, 1)
    assert fact.extractor == "llamaindex:gpt-4o-mini/1"
    assert receipt.extracted == 1 and receipt.failed == 0


@sqlite_only
def test_an_answer_about_another_turn_writes_nothing(store: Memory, said_in_march) -> None:
    """Valid for LlamaIndex's schema, refused by core's: turn 3 was never sent."""
    with player.use_cassette("openai_bad_turn.yaml") as cassette:
        receipt = store.add("I moved to Lisbon last month.", extractor=_extractor())
    assert cassette.play_count == 1
    assert receipt.failed == 1 and receipt.extracted == 0
    assert "not a turn of this batch" in next(iter(receipt.errors.values()))
    assert store.facts(states=ALL) == []
    assert len(store.episodes()) == 1  # the message is kept; only the facts are refused


@sqlite_only
def test_an_answer_outside_the_schema_writes_nothing(store: Memory, said_in_march) -> None:
    """An op the schema does not allow fails LlamaIndex's validation: reported, not raised."""
    with player.use_cassette("openai_bad_op.yaml") as cassette:
        receipt = store.add("I moved to Lisbon last month.", extractor=_extractor())
    assert cassette.play_count == 1
    assert receipt.failed == 1 and receipt.extracted == 0
    error = next(iter(receipt.errors.values()))
    assert error.startswith("ValidationError") and "op" in error
    assert store.facts(states=ALL) == []
    assert len(store.episodes()) == 1
