"""Fact extraction with a LangChain chat model (``BaseChatModel``).

``chat_model_extractor(model)`` is core's ``LLMExtractor`` (same prompt, one
call per batch of turns, and the same strict validation of the answer before
anything is written) with the model called through LangChain. Where the model
supports structured output (``with_structured_output``: tool calling or JSON
mode), the facts are requested against core's answer schema
(``chronomem.extraction.ANSWER_SCHEMA``; core says which call asks for facts); the raw
dict the model produced is still validated by ``parse_answer`` (no silent
coercion), and a model without structured output answers in JSON text.

    memory.add(messages, extractor=chat_model_extractor(ChatOpenAI(model=...)))"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from chronomem import InvalidType
from chronomem.extraction import ANSWER_SCHEMA, LLMExtractor, Request, content_text

_ROLES = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}


def _to_langchain(messages: list[dict[str, str]]) -> list[BaseMessage]:
    return [_ROLES[m["role"]](content=m["content"]) for m in messages]


class ChatModelComplete:
    """``complete(messages) -> str`` over a LangChain chat model (what ``LLMExtractor`` calls)."""

    def __init__(self, model: BaseChatModel, *, structured: bool = True):
        self.model = model
        self.structured_model: Any = None
        if structured:
            try:
                self.structured_model = model.with_structured_output(ANSWER_SCHEMA)
            except NotImplementedError:  # no tool calling / JSON mode: plain JSON text
                self.structured_model = None

    def __call__(self, messages: list[dict[str, str]], kind: Request = Request.FACTS) -> str:
        lc = _to_langchain(messages)
        if kind is Request.FACTS and self.structured_model is not None:
            answer = self.structured_model.invoke(lc)
            if isinstance(answer, BaseMessage):  # some providers hand back the message
                return content_text(answer.content) or ""
            return json.dumps(answer, ensure_ascii=False)  # validated by parse_answer
        reply = self.model.invoke(lc)
        return content_text(reply.content) or ""


def chat_model_extractor(
    model: BaseChatModel,
    *,
    structured: bool = True,
    name: str | None = None,
    batch_size: int = 16,
) -> LLMExtractor:
    """An extractor for ``Memory.add(..., extractor=...)`` that reads facts with ``model``.

    ``structured``: ask for structured output where the model supports it.
    ``name``: recorded with every fact it writes (default ``langchain/<class>``).
    Model failures never raise out of extraction: the batch's turns are
    reported as failed on the receipt and nothing from them is written."""
    if not isinstance(model, BaseChatModel):
        raise InvalidType(f"model must be a LangChain BaseChatModel, not {type(model).__name__}")
    return LLMExtractor(
        ChatModelComplete(model, structured=structured),
        name=name or f"langchain/{type(model).__name__}",
        batch_size=batch_size,
        kinds=True,
    )
