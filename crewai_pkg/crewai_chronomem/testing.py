"""A scripted CrewAI LLM for tests and examples: no key, no network.

``ScriptedLLM`` is a real ``crewai.llms.base_llm.BaseLLM`` subclass, so agents,
crews and memories use it exactly as they use a hosted model. Each call's
messages are recorded in ``calls``; the answer comes from ``respond(prompt)``
(the call's messages joined as text), or from the fixed ``replies`` in turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crewai.llms.base_llm import BaseLLM
from pydantic import Field, PrivateAttr


def prompt_text(messages: Any) -> str:
    """A call's messages as one text (``str`` or ``[{"role", "content"}]``)."""
    if isinstance(messages, str):
        return messages
    parts = []
    for m in messages or []:
        content = m.get("content") if isinstance(m, dict) else getattr(m, "content", m)
        parts.append(content if isinstance(content, str) else str(content))
    return "\n".join(parts)


class ScriptedLLM(BaseLLM):
    """Canned answers: ``respond(prompt) -> str`` if given, else ``replies`` in order
    (the last one repeats)."""

    model: str = "scripted"
    replies: list[str] = Field(default_factory=lambda: ["Final Answer: done"])
    respond: Callable[[str], str] | None = Field(default=None, exclude=True)
    _calls: list[Any] = PrivateAttr(default_factory=list)

    def __init__(self, **data: Any):
        data.setdefault("model", "scripted")  # BaseLLM refuses an empty model name
        super().__init__(**data)

    @property
    def calls(self) -> list[Any]:
        """The messages of every call, in order."""
        return self._calls

    def call(
        self,
        messages: Any,
        tools: Any = None,
        callbacks: Any = None,
        available_functions: Any = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> str:
        self._calls.append(messages)
        if self.respond is not None:
            return self.respond(prompt_text(messages))
        i = min(len(self._calls) - 1, len(self.replies) - 1)
        return self.replies[i]

    async def acall(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        return self.call(messages, *args, **kwargs)

    def supports_function_calling(self) -> bool:
        return False

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 32_000
