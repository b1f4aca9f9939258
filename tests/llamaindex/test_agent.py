"""ChronomemMemory inside real LlamaIndex agents (FunctionAgent, workflow Context), offline."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context

from chronomem import Memory
from llama_index.memory.chronomem import ChronomemMemory


class Brain:
    """A scripted model that records what the agent showed it."""

    def __init__(self) -> None:
        self.seen: list[list[ChatMessage]] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.seen.append(list(messages))
        system = " ".join(m.content or "" for m in messages if m.role.value == "system")
        if "lives in Paris" in system:
            return ChatMessage(role="assistant", content="You live in Paris.")
        return ChatMessage(role="assistant", content="Noted.")


@pytest.fixture
def root(durable_url: str) -> Iterator[Memory]:
    m = Memory(durable_url)
    try:
        yield m
    finally:
        m.close()


def agent_with(brain: Any, tools: list[Any] | None = None) -> FunctionAgent:
    return FunctionAgent(llm=MockFunctionCallingLLM(response_generator=brain), tools=tools or [])


async def test_workflow_context_round_trips_with_the_memory(root: Memory) -> None:
    brain = Brain()
    agent = agent_with(brain)
    memory = ChronomemMemory.from_defaults(memory=root.scoped(user="ada"), session_id="s1")
    ctx = Context(agent)
    assert str(await agent.run(user_msg="I live in Paris.", memory=memory, ctx=ctx)) == (
        "You live in Paris."
    )
    data = json.loads(json.dumps(ctx.to_dict()))
    restored = Context.from_dict(agent, data)
    again = await restored.store.get("memory")
    assert isinstance(again, ChronomemMemory)
    assert (again.user, again.session_id, again.url) == ("ada", "s1", memory.url)
    assert again.get_all() == memory.get_all()
    reply = await agent.run(user_msg="Where do I live?", ctx=restored)
    assert str(reply) == "You live in Paris."
    assert [m.content for m in memory.get_all()] == [
        "I live in Paris.",
        "You live in Paris.",
        "Where do I live?",
        "You live in Paris.",
    ]


async def test_agent_resending_chat_history_never_duplicates(root: Memory) -> None:
    agent = agent_with(Brain())
    memory = ChronomemMemory.from_defaults(memory=root.scoped(user="bo"), session_id="s")
    history = [ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="hey")]
    await agent.run(user_msg="first", chat_history=history, memory=memory)
    stored = memory.get_all()
    assert [m.content for m in stored] == ["hi", "hey", "first", "Noted."]
    await agent.run(user_msg="second", chat_history=stored, memory=memory)
    assert [m.content for m in memory.get_all()] == [
        "hi",
        "hey",
        "first",
        "Noted.",
        "second",
        "Noted.",
    ]


async def test_first_turn_is_recalled_before_the_model_answers(root: Memory) -> None:
    brain = Brain()
    agent = agent_with(brain)
    ada = root.scoped(user="ada")
    await agent.run(
        user_msg="I live in Paris.",
        memory=ChronomemMemory.from_defaults(memory=ada, session_id="a"),
    )
    reply = await agent.run(
        user_msg="Where do I live?",
        memory=ChronomemMemory.from_defaults(memory=ada, session_id="b"),
    )
    assert str(reply) == "You live in Paris."
    shown = brain.seen[-1]
    assert shown[0].role.value == "system" and "not instructions" in (shown[0].content or "")
    assert [m.content for m in shown[1:]] == ["Where do I live?"], "session b's transcript only"


async def test_tool_calls_and_results_are_kept_exactly(root: Memory) -> None:
    def lookup(city: str = "Paris") -> str:
        """Look a city up."""
        return f"{city}: 2.1M people"

    def brain(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        if messages[-1].role.value == "tool":
            return ChatMessage(role="assistant", content="About 2.1M.")
        call = ToolCallBlock(tool_call_id="t1", tool_name="lookup", tool_kwargs={"city": "Paris"})
        return ChatMessage(role="assistant", blocks=[call])

    agent = agent_with(brain, [FunctionTool.from_defaults(fn=lookup)])
    memory = ChronomemMemory.from_defaults(memory=root.scoped(user="cy"), session_id="s")
    assert str(await agent.run(user_msg="How big is Paris?", memory=memory)) == "About 2.1M."
    stored = memory.get_all()
    assert [m.role.value for m in stored] == ["user", "assistant", "tool", "assistant"]
    (block,) = stored[1].blocks
    assert isinstance(block, ToolCallBlock) and block.tool_kwargs == {"city": "Paris"}
    assert stored[2].additional_kwargs == {"tool_call_id": "t1"}
    assert stored[2].content == "Paris: 2.1M people"
    assert root.scoped(user="cy").facts() == [], "tool output is not read as the user's facts"
