"""Offline chat models for the agent tests: LangChain's own fake model, taught to
accept tools and to keep what each call was shown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import Field


class ScriptedModel(GenericFakeChatModel):
    """Answers from a script (AIMessages, tool calls included); records its inputs."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def __init__(self, script: Sequence[AIMessage | str]) -> None:
        super().__init__(messages=iter(list(script)))

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def call(name: str, args: dict[str, Any], call_id: str = "c1") -> AIMessage:
    """An AI message asking for one tool call."""
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])
