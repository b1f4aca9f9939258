"""ChronomemMemoryBlock inside LlamaIndex's own Memory (flush → extraction, recall per read)."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory
from llama_index.core.utils import get_tokenizer

from chronomem import Memory, NaiveDatetime
from chronomem.render import CLOSE, HEADER_LIVE, OPEN
from llama_index.memory.chronomem import ChronomemMemoryBlock
from llama_index.memory.chronomem.block import drop_lines
from tests.conftest import ManualClock


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
