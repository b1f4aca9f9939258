"""The served-read log through the LlamaIndex adapters: a FunctionAgent's recalls
are tagged with its workflow run and session, the retriever's and the memory
block's searches with their session, and ``served(run=R)`` answers what the
agent knew in run R after a later correction and erasure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory as LlamaMemory

from chronomem import Memory
from llama_index.memory.chronomem import (
    ChronomemMemory,
    ChronomemMemoryBlock,
    ChronomemRetriever,
)
from tests.conftest import ManualClock


def _brain(seen: list[str]) -> Any:
    def answer(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        seen.append(" ".join(m.content or "" for m in messages if m.role.value == "system"))
        return ChatMessage(role="assistant", content="Noted.")

    return answer


async def test_an_agent_run_is_tagged_and_served_answers_for_it(
    store: Memory, clock: ManualClock
) -> None:
    home = store.remember("user", "lives_in", "Lisbon").fact_ids[0]
    diet = store.remember("user", "diet", "vegan").fact_ids[0]
    memory = ChronomemMemory.from_defaults(
        memory=store, session_id="s1", extract=False, read_log=True
    )
    seen: list[str] = []
    agent = FunctionAgent(llm=MockFunctionCallingLLM(response_generator=_brain(seen)), tools=[])
    handler = agent.run(user_msg="Where do I live and what do I eat?", memory=memory)
    await handler
    logged = store.reads(run=handler.run_id)
    assert logged and all(r.op == "recall" for r in logged)
    assert all(r.tag == {"run": handler.run_id, "session": "s1"} for r in logged)
    served = {i.id for r in logged for i in r.items}
    (lisbon,) = store.facts(predicate="lives_in")
    (vegan,) = store.facts(predicate="diet")
    assert served == {lisbon.version_id, vegan.version_id}
    assert "Lisbon" in seen[0]  # what the log says it served, the model was shown

    clock.advance(days=1)
    store.correct(home, "Porto")
    store.erase(diet)
    knew = store.served(run=handler.run_id)
    changes = {(it.then.object if it.then else None, it.change) for it in knew.items}
    assert ("Lisbon", "corrected") in changes and (None, "erased") in changes
    assert "vegan" not in knew.text()


def test_the_memory_honours_a_logging_store_and_keeps_the_switch_in_its_dict(
    store: Memory,
) -> None:
    store.read_log = True
    store.remember("user", "lives_in", "Lisbon")
    memory = ChronomemMemory.from_defaults(memory=store, session_id="s2", extract=False)
    memory.put(ChatMessage(role="user", content="Where do I live?"))
    memory.get()
    (read,) = store.reads()
    assert read.tag == {"session": "s2"}  # outside a workflow: no run
    assert ChronomemMemory.from_defaults(memory=store, read_log=True).to_dict()["read_log"]


def test_a_retriever_search_is_tagged_with_its_session(store: Memory) -> None:
    session = store.scoped(session="chat-9")
    session.remember("user", "lives_in", "Lisbon")
    nodes = ChronomemRetriever(session, read_log=True).retrieve("where does the user live")
    (read,) = store.reads(tag={"session": "chat-9"})
    assert read.op == "search" and [i.id for i in read.items] == [n.node.node_id for n in nodes]


async def test_a_memory_block_recall_is_tagged_with_llamaindex_s_session(store: Memory) -> None:
    store.remember("user", "lives_in", "Lisbon")
    block = ChronomemMemoryBlock(memory=store, read_log=True)
    lm = LlamaMemory.from_defaults(session_id="s7", memory_blocks=[block])
    await lm.aput(ChatMessage(role="user", content="Where do I live?"))
    got = await lm.aget()
    assert "Lisbon" in (got[0].content or "")
    (read,) = store.reads()
    assert read.op == "recall" and read.tag == {"session": "s7"}
    assert [i.id for i in read.items] == [store.facts()[0].version_id]
