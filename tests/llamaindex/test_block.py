"""ChronomemMemoryBlock inside LlamaIndex's own Memory (flush → extraction, recall per read)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory
from llama_index.core.utils import get_tokenizer

from chronomem import Memory, NaiveDatetime
from chronomem.render import (
    CLOSE,
    HEADER_EPISODES,
    HEADER_HISTORY,
    HEADER_LIVE,
    OPEN,
    SINCE_ENDED,
)
from llama_index.memory.chronomem import ChronomemMemoryBlock
from llama_index.memory.chronomem.block import drop_lines
from llama_index.memory.chronomem.recall import facts_only
from tests.conftest import ManualClock

from ..langchain.tracing import tracing  # every statement, prepared reads too


def llama_memory(block: ChronomemMemoryBlock, session: str = "s1") -> LlamaMemory:
    # a tiny short-term queue, so that every few messages flush to the block
    return LlamaMemory.from_defaults(
        session_id=session,
        token_limit=60,
        chat_history_token_ratio=0.3,
        token_flush_size=10,
        memory_blocks=[block],
    )


def filler(n: int) -> str:
    return "filler " * n


async def test_flushed_messages_are_extracted_and_recalled(
    store: Memory, clock: ManualClock
) -> None:
    block = ChronomemMemoryBlock(memory=store)
    lm = llama_memory(block)
    await lm.aput(ChatMessage(role="user", content="I live in Paris. " + filler(20)))
    assert store.facts() == [], "nothing reaches a block before LlamaIndex flushes it"
    await lm.aput(ChatMessage(role="assistant", content=filler(20)))
    await lm.aput(ChatMessage(role="user", content="Where do I live?"))
    (fact,) = store.facts()
    assert (fact.predicate, fact.object) == ("lives_in", "Paris")
    (episode,) = [e for e in store.episodes() if e.role == "user"]
    assert episode.metadata.get("llamaindex_session") == "s1"
    got = await lm.aget()
    system = got[0]
    assert system.role.value == "system"
    assert "<chronomem>" in (system.content or "") and "- user lives in Paris" in (
        system.content or ""
    )
    before = clock.now
    clock.advance(days=1)
    await lm.aput(ChatMessage(role="user", content="I moved to Berlin. " + filler(20)))
    await lm.aput(ChatMessage(role="assistant", content=filler(20)))
    await lm.aput(ChatMessage(role="user", content="Where do I live now?"))
    now = (await lm.aget())[0].content or ""
    assert "lives in Berlin" in now and "Paris" not in now
    then = (await lm.aget(as_of=before))[0].content or ""
    assert "lives in Paris" in then and "Berlin" not in then


async def test_block_refuses_naive_datetimes_and_writes_nothing(store: Memory) -> None:
    block = ChronomemMemoryBlock(memory=store)
    bad = ChatMessage(
        role="user", content="I live in Paris.", additional_kwargs={"at": datetime(2026, 1, 1)}
    )
    with pytest.raises(NaiveDatetime):
        await block.aput([bad])
    assert store.facts() == [] and store.episodes() == []


async def test_extract_off_and_empty_reads(store: Memory) -> None:
    block = ChronomemMemoryBlock(memory=store, extract=False)
    await block.aput([ChatMessage(role="user", content="I live in Paris.")])
    assert store.facts() == []
    assert await block.aget([]) == ""
    assert await block.aget(None) == ""


def test_truncation_drops_whole_lines() -> None:
    tokenizer = get_tokenizer()
    facts = [f"- user likes thing number {i} (since 2026-01-01)" for i in range(6)]
    block = "\n".join([OPEN, HEADER_LIVE, *facts, CLOSE])
    cut = drop_lines(block, 20, tokenizer)
    assert cut is not None
    lines = cut.splitlines()
    assert lines[0] == OPEN and lines[-1] == CLOSE and lines[1] == HEADER_LIVE
    kept = lines[2:-1]
    assert kept == facts[: len(kept)] and 0 < len(kept) < len(facts)
    assert drop_lines(block, 10_000, tokenizer) is None


def test_block_fields_round_trip(tmp_path: object) -> None:
    root = Memory(f"{tmp_path}/b.db")
    try:
        block = ChronomemMemoryBlock(memory=root.scoped(user="ada"), recall_k=3)
        data = json.loads(block.model_dump_json())
        back = ChronomemMemoryBlock(**data)
        assert back.memory.scope == block.memory.scope and back.recall_k == 3
    finally:
        root.close()


# -- the present answers the question its past matched (issue #28) ---------------------


def _changed_plan(store: Memory, clock: ManualClock, *distractors: str) -> None:
    for text in distractors:
        store.add(text)
    store.add("I plan to visit Japan.")
    clock.advance(days=30)
    store.add("I no longer plan to visit Japan; I plan to visit Peru instead.")


def _lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith("- ")]


def test_a_question_no_fact_word_answers_gets_the_value_that_replaced_its_message(
    store: Memory, clock: ManualClock
) -> None:
    """Asked "Where am I headed?", which shares no word with "user plans visit Peru
    instead", the facts alone find nothing, but its words find "I plan to visit
    Japan.", whose fact Peru superseded. The block shows Peru first, as a fact, and never the messages."""
    _changed_plan(store, clock)
    block = ChronomemMemoryBlock(memory=store)
    assert store.recall("Where am I headed?") == "", "the facts alone find nothing"
    got = block.recall([ChatMessage(role="user", content="Where am I headed?")])
    lines = _lines(got)
    assert lines and "Peru" in lines[0], got
    assert HEADER_EPISODES not in got and "Japan" not in got and "user:" not in got
    # asked about the past, the earlier value comes too, marked as ended
    past = block.recall([ChatMessage(role="user", content="Where was I headed before?")])
    assert "Peru" in _lines(past)[0]
    assert any("Japan" in line and SINCE_ENDED in line for line in _lines(past)), past
    # the rule is bitemporal: before the change the Japan message is current, so
    # nothing replaced what it said and Peru is not there to show
    before = clock.now - timedelta(days=1)
    then = block.recall([ChatMessage(role="user", content="Where am I headed?")], as_of=before)
    assert "Peru" not in then, then
    then = block.recall(
        [ChatMessage(role="user", content="What do I plan to visit?")], as_of=before
    )
    assert "Japan" in _lines(then)[0] and "Peru" not in then, then


def test_a_question_the_facts_answer_reads_no_message(store: Memory, clock: ManualClock) -> None:
    """The messages are read only when the facts found nothing: a question a fact's
    words answer costs what the facts-only recall costs, and decodes no message."""
    _changed_plan(store, clock)
    block = ChronomemMemoryBlock(memory=store)
    asked = [ChatMessage(role="user", content="What do I plan to visit?")]
    block.recall(asked)  # the search mirror loaded
    with tracing(store) as plain:
        expected = store.recall("What do I plan to visit?")
    with tracing(store) as cost:
        got = block.recall(asked)
    assert got == expected and "Peru" in _lines(got)[0]
    assert cost.shape == plain.shape and cost.episode_rows == 0


def test_the_fallback_reads_as_much_at_20_and_200_messages(memory: Memory) -> None:
    """When the facts find nothing, the one more recall (with the messages) runs the
    same statements whatever the session's length, and decodes at most ``recall_k``
    messages (the hits it keeps), never the session."""

    def cost_at(n: int) -> int:
        store = memory.scoped(tenant=f"t{n}", user="ada")
        store.add([f"chatting about item {i} " * 3 for i in range(n)])
        store.add("I plan to visit Japan.")
        store.add("I no longer plan to visit Japan; I plan to visit Peru instead.")
        block = ChronomemMemoryBlock(memory=store)
        asked = [ChatMessage(role="user", content="Where am I headed?")]
        block.recall(asked)
        with tracing(store) as cost:
            got = block.recall(asked)
        assert "Peru" in _lines(got)[0], got
        assert 0 < cost.episode_rows <= block.recall_k
        return len(cost.statements)

    assert cost_at(20) == cost_at(200)


def test_a_store_without_facts_searches_no_message(memory: Memory) -> None:
    """A transcript alone (no live fact at all): the fallback could bring in no fact,
    so the block runs the facts-only recall and one probe (``holds_live_fact``),
    decodes no message, and costs the same at 20 and 200 messages."""

    def cost_at(n: int) -> tuple[int, int]:
        store = memory.scoped(tenant=f"bare{n}", user="ada")
        store.add([f"chatting about item {i} " * 3 for i in range(n)])
        block = ChronomemMemoryBlock(memory=store)
        asked = [ChatMessage(role="user", content="What am I chatting about?")]
        block.recall(asked)
        with tracing(store) as plain:
            assert store.recall("What am I chatting about?") == ""
        with tracing(store) as cost:
            assert block.recall(asked) == ""
        assert cost.episode_rows == 0
        assert len(cost.statements) == len(plain.statements) + 1  # the probe
        return cost.shape

    assert cost_at(20) == cost_at(200)


def test_facts_only_drops_the_messages_and_keeps_the_facts() -> None:
    fact = "- user plans visit Peru instead (since 2026-02-01)"
    earlier = "- user plans visit Japan (2026-01-01 to 2026-02-01, since ended)"
    message = "- [2026-01-01, since superseded: user plans visit Peru] user: I plan to visit Japan."
    block = "\n".join(
        [OPEN, HEADER_LIVE, fact, HEADER_HISTORY, earlier, HEADER_EPISODES, message, CLOSE]
    )
    assert facts_only(block) == "\n".join([OPEN, HEADER_LIVE, fact, HEADER_HISTORY, earlier, CLOSE])
    assert facts_only("\n".join([OPEN, HEADER_EPISODES, message, CLOSE])) == ""
    assert facts_only("") == ""
