"""CrewAIExtractor over ``crewai.LLM(model="openai/gpt-4o-mini")`` against vcrpy
cassettes in the OpenAI wire format (``record_mode="none"``: nothing reaches the
network; the API key is a dummy). In the installed CrewAI that model resolves to
CrewAI's native OpenAI provider (the ``openai`` SDK over httpx, no litellm),
which vcrpy intercepts. The extractor asks for structured output
(``response_model``): CrewAI sends ``FactsAnswer`` as a strict json_schema, and
the answer passes CrewAI's pydantic validation and then core's strict one."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from crewai import LLM

from chronomem import Memory
from crewai_chronomem import CrewAIExtractor

from .. import cassette_player
from ..conftest import ManualClock, utc

player = cassette_player.player(Path(__file__).with_name("cassettes"), "FactsAnswer", strict=True)
ALL = ["live", "ended", "scheduled", "retracted"]


def _extractor() -> CrewAIExtractor:
    llm = LLM(
        model="openai/gpt-4o-mini",
        api_key="test-key",
        base_url="https://llm.example.test/v1",
        max_retries=0,
    )
    return CrewAIExtractor(llm)


@pytest.fixture
def mem(clock: ManualClock) -> Iterator[Memory]:
    clock.now = utc(2026, 3, 10, 9)
    clock.tick = timedelta(0)  # the turn's instant is the one in the cassette
    m = Memory(clock=clock)
    yield m
    m.close()


def test_the_openai_model_is_crewais_native_provider() -> None:
    """What the cassette stands in for: CrewAI's own client, not litellm."""
    llm = _extractor().llm
    assert type(llm).__module__.startswith("crewai.llms.providers.openai")


def test_structured_output_writes_the_fact(mem: Memory) -> None:
    with player.use_cassette("openai_facts.yaml") as cassette:
        receipt = mem.add("I moved to Lisbon last month.", extractor=_extractor())
    assert cassette.play_count == 1
    (fact,) = mem.facts()
    assert (fact.predicate, fact.object) == ("lives_in", "Lisbon")
    assert fact.valid_from == utc(2026, 2, 1)
    assert fact.extractor == "crewai:gpt-4o-mini/1"
    assert receipt.extracted == 1 and receipt.failed == 0


def test_an_answer_about_another_turn_writes_nothing(mem: Memory) -> None:
    """Valid for CrewAI's schema, refused by core's: turn 3 was never sent."""
    with player.use_cassette("openai_bad_turn.yaml") as cassette:
        receipt = mem.add("I moved to Lisbon last month.", extractor=_extractor())
    assert cassette.play_count == 1
    assert receipt.failed == 1 and receipt.extracted == 0
    assert "not a turn of this batch" in next(iter(receipt.errors.values()))
    assert mem.facts(states=ALL) == []
    assert len(mem.episodes()) == 1  # the message is kept; only the facts are refused


def test_a_cut_off_answer_writes_nothing(mem: Memory) -> None:
    """Truncated JSON fails CrewAI's validation: reported on the receipt, not raised."""
    with player.use_cassette("openai_cut.yaml") as cassette:
        receipt = mem.add("I moved to Lisbon last month.", extractor=_extractor())
    assert cassette.play_count == 1
    assert receipt.failed == 1 and receipt.extracted == 0
    error = next(iter(receipt.errors.values()))
    assert error.startswith("ValidationError") and "Invalid JSON" in error
    assert mem.facts(states=ALL) == []
    assert len(mem.episodes()) == 1
