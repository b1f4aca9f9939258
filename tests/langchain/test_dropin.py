"""Clear chronomem errors where LangChain would raise pydantic tracebacks or
NotImplementedError (issue #30 items 12 and 13), on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from chronomem import InvalidInput, InvalidType, Memory
from langchain_chronomem import (
    ChronomemChatMessageHistory,
    ChronomemMiddleware,
    ChronomemRetriever,
)
from langchain_chronomem.middleware import binds_tools

from .fakes import ScriptedModel


def test_retriever_without_a_memory_is_a_chronomem_error(memory: Memory) -> None:
    with pytest.raises(InvalidType, match="memory"):
        ChronomemRetriever(memory=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidType, match="memory"):
        ChronomemRetriever()  # type: ignore[call-arg]
    with pytest.raises(InvalidInput, match="k must be"):
        ChronomemRetriever(memory=memory, k=-1)
    assert ChronomemRetriever(memory=memory, k=2).k == 2


def test_history_refuses_none_messages_and_session(memory: Memory) -> None:
    history = ChronomemChatMessageHistory(memory, session_id="s")
    with pytest.raises(InvalidType, match="add_user_message"):
        history.add_user_message(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidType, match="add_ai_message"):
        history.add_ai_message(3)  # type: ignore[arg-type]
    history.add_user_message("hi")
    history.add_ai_message(AIMessage("hello"))
    history.add_user_message(HumanMessage("again"))
    assert [m.content for m in history.messages] == ["hi", "hello", "again"]
    with pytest.raises(InvalidInput, match="session_id=None"):
        ChronomemChatMessageHistory(memory, session_id=None)  # type: ignore[arg-type]
    ChronomemChatMessageHistory(memory).add_user_message("own scope")  # omitted: allowed
    assert [m.content for m in ChronomemChatMessageHistory(memory).messages] == ["own scope"]


def _ask(model: Any, memory: Memory) -> Any:
    agent = create_agent(model, tools=[], middleware=[ChronomemMiddleware(memory, tools=True)])
    return agent.invoke({"messages": [{"role": "user", "content": "I live in Paris."}]})


def test_tools_with_a_model_that_cannot_bind_them_says_so(memory: Memory) -> None:
    fake = GenericFakeChatModel(messages=iter([AIMessage("ok")]))
    assert not binds_tools(fake)
    with pytest.raises(InvalidInput, match="cannot bind tools"):
        _ask(fake, memory)
    assert memory.episodes() == []  # nothing ran, nothing stored
    out = _ask(ScriptedModel(["Noted."]), memory)  # the fake that accepts tools works
    assert out["messages"][-1].content == "Noted."


async def test_async_tools_check(memory: Memory) -> None:
    agent = create_agent(
        GenericFakeChatModel(messages=iter([AIMessage("ok")])),
        tools=[],
        middleware=[ChronomemMiddleware(memory, tools=True)],
    )
    with pytest.raises(InvalidInput, match="cannot bind tools"):
        await agent.ainvoke({"messages": [{"role": "user", "content": "hi"}]})
