"""chat_model_extractor over a real provider class (``langchain_openai.ChatOpenAI``)
against vcrpy cassettes in the OpenAI wire format (``record_mode="none"``: a
request the cassette does not hold fails, nothing reaches the network). The
matcher (``tests/cassette_player.py``) checks the extractor asked for
structured output with its schema."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from chronomem import Memory
from langchain_chronomem import chat_model_extractor

from .. import cassette_player
from ..conftest import ManualClock, utc
from .conftest import sqlite_only

openai = pytest.importorskip("langchain_openai")


player = cassette_player.player(Path(__file__).with_name("cassettes"), "extracted_facts")


def _model():
    return openai.ChatOpenAI(
        model="gpt-4o-mini",
        api_key="test-key",
        base_url="https://llm.example.test/v1",
        max_retries=0,
    )


@pytest.fixture
def said_in_march(clock: ManualClock) -> None:
    clock.now = utc(2026, 3, 10, 9)
    clock.tick = timedelta(0)  # the turn's instant is the one in the cassette


@sqlite_only
def test_chat_openai_structured_output_writes_the_fact(mem: Memory, said_in_march) -> None:
    with player.use_cassette("chat_openai_facts.yaml") as cassette:
        receipt = mem.add("I moved to Lisbon last month.", extractor=chat_model_extractor(_model()))
    assert cassette.play_count == 1
    (fact,) = mem.facts()
    assert (fact.predicate, fact.object) == ("lives_in", "Lisbon")
    assert fact.valid_from == utc(2026, 2, 1)
    assert fact.extractor == "langchain/ChatOpenAI/1"
    assert receipt.extracted == 1 and receipt.failed == 0


@sqlite_only
def test_chat_openai_invalid_answer_writes_nothing(mem: Memory, said_in_march) -> None:
    with player.use_cassette("chat_openai_bad_turn.yaml"):
        receipt = mem.add("I moved to Lisbon last month.", extractor=chat_model_extractor(_model()))
    assert receipt.failed == 1 and "not a turn of this batch" in next(iter(receipt.errors.values()))
    assert mem.facts(states=["live", "ended", "scheduled", "retracted"]) == []
    assert len(mem.episodes()) == 1
