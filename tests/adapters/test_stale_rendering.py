"""Issue #28 through the adapters that return episodes: the LangChain retriever,
the LlamaIndex retriever and CrewAI recall rank the new value first and render
the old message as past ("[2026-01-01, since superseded: user lives in Berlin]"),
all through ``chronomem.render.said``; the memory blocks (core ``recall``) too."""

from __future__ import annotations

import pytest

from chronomem import Memory
from chronomem.render import HEADER_HISTORY, PAST_MARKERS
from tests.conftest import ManualClock, utc


def story(m: Memory) -> None:
    m.add("I live in Paris.", occurred_at=utc(2026, 1, 1))
    m.add("I work at Acme.", occurred_at=utc(2026, 1, 2))
    m.add("I moved from Paris to Berlin last week.", occurred_at=utc(2026, 2, 20))
    m.add("I left Acme and joined Globex.", occurred_at=utc(2026, 2, 21))


def past(text: str) -> bool:
    return any(marker in text for marker in PAST_MARKERS)


PARIS = "[2026-01-01, since superseded: user lives in Berlin] user: I live in Paris."


def test_langchain_retriever_and_middleware_block(memory: Memory) -> None:
    pytest.importorskip("langchain_core")
    from langchain_chronomem import ChronomemRetriever

    story(memory)
    r = ChronomemRetriever(memory=memory, include_episodes=True, k=8, valid_at=utc(2026, 3, 1))
    docs = r.invoke("Where do I live?")
    assert "Berlin" in docs[0].page_content and not past(docs[0].page_content)
    paris = [d for d in docs if "I live in Paris." in d.page_content]
    assert paris and paris[0].page_content == PARIS
    assert paris[0].metadata["episode_status"] == "stale"
    assert [past(d.page_content) for d in docs if d.metadata["kind"] == "episode"].count(True) >= 1
    jobs = r.invoke("Where do I work?")
    assert "Globex" in jobs[0].page_content
    assert any(past(d.page_content) and "Acme" in d.page_content for d in jobs)
    before = ChronomemRetriever(memory=memory, include_episodes=True, valid_at=utc(2026, 1, 20))
    assert not any(past(d.page_content) for d in before.invoke("Where do I live?"))
    # the middleware's block is core recall: the same line
    block = memory.recall("Where do I live?", include_episodes=True, valid_at=utc(2026, 3, 1))
    assert f"- {PARIS}" in block


def test_llamaindex_retriever_and_memory_block(memory: Memory) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import MetadataMode

    from llama_index.memory.chronomem import ChronomemRetriever

    story(memory)
    r = ChronomemRetriever(memory, k=8, include_episodes=True, valid_at=utc(2026, 3, 1))
    nodes = r.retrieve("Where do I live?")
    first = nodes[0].node.get_content(metadata_mode=MetadataMode.NONE)
    assert "Berlin" in first and not past(first)
    texts = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
    assert PARIS in texts
    jobs = r.retrieve("Where do I work?")
    assert "Globex" in jobs[0].node.get_content(metadata_mode=MetadataMode.NONE)
    # the memory block holds facts: asked about the past, it adds the earlier values,
    # each line marked as past; asked about the present, it does not
    from llama_index.core.llms import ChatMessage

    from llama_index.memory.chronomem import ChronomemMemoryBlock

    block = ChronomemMemoryBlock(memory)

    def ask(q: str, **kw: object) -> str:
        return block.recall([ChatMessage(role="user", content=q)], valid_at=utc(2026, 3, 1), **kw)

    now = ask("Where do I live?")
    assert "- user lives in Berlin" in now and not past(now) and "Paris" not in now
    before = ask("Where did I live before Berlin?")
    earlier = before.split(HEADER_HISTORY)[1]
    assert "- user lives in Paris (2026-01-01 to 2026-02-09, since ended)" in earlier
    assert before.index("- user lives in Berlin") < before.index(HEADER_HISTORY)
    assert HEADER_HISTORY in ask("Where do I live?", include_history=True)
    assert HEADER_HISTORY not in ChronomemMemoryBlock(memory, include_history=False).recall(
        [ChatMessage(role="user", content="Where did I live before Berlin?")],
        valid_at=utc(2026, 3, 1),
    )


def test_crewai_recall(memory: Memory, clock: ManualClock) -> None:
    pytest.importorskip("crewai")
    from crewai_chronomem import ChronomemMemory

    cm = ChronomemMemory(memory=memory)
    cm.remember("I live in Paris.")
    cm.remember("I work at Acme.")
    clock.advance(days=40)
    cm.remember("I moved from Paris to Berlin.")
    cm.remember("I left Acme and joined Globex.")
    found = cm.recall("Where do I live?")
    assert "Berlin" in found[0].record.content and not past(found[0].record.content)
    paris = [m for m in found if "I live in Paris." in m.record.content]
    assert paris and "since superseded: user lives in Berlin" in paris[0].record.content
    assert paris[0].score <= found[0].score
    jobs = cm.recall("Where do I work?")
    assert "Globex" in jobs[0].record.content
    assert any(past(m.record.content) for m in jobs if "Acme." in m.record.content)
