"""Fact extraction by a LlamaIndex ``LLM`` (issue #18), on core's ``LLMExtractor``.

``LlamaIndexExtractor(llm)`` sends core's extraction prompt through the
LlamaIndex model and hands the answer to core's strict validation
(``chronomem.extraction.parse_answer``): a malformed or partial answer fails
its whole batch, nothing from it is written, and the failure is reported on
the receipt. With a function-calling model (``llm.metadata.is_function_calling_model``)
the answer is *structured*: the model fills the ``ExtractedFacts`` schema
through LlamaIndex's ``as_structured_llm``, and the filled object, dumped back
to JSON, goes through the same validation. Any other model answers in plain
chat and must return the JSON object itself."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import BaseModel, Field
from llama_index.core.llms.llm import LLM

from chronomem import InvalidType
from chronomem.extraction import LLMExtractor
from chronomem.extraction.llm import SYSTEM_PROMPT


class ExtractedFact(BaseModel):
    """One fact a speaker stated about themself."""

    turn: int = Field(description="The number of the turn the fact comes from.")
    subject: str = Field(description="The speaker's name, as in the turn's speaker field.")
    predicate: str = Field(description="A snake_case predicate such as lives_in or works_at.")
    object: str | None = Field(description="A short noun phrase; null only for an end.")
    op: Literal["assert", "end"] = Field(description="assert: it holds; end: it stopped.")
    valid_from: str | None = Field(default=None, description="ISO 8601 date, if said.")
    valid_to: str | None = Field(default=None, description="ISO 8601 date, if said.")
    confidence: float | None = Field(default=None, description="0..1")


class ExtractedFacts(BaseModel):
    """The durable facts stated in the turns (an empty list when there are none)."""

    facts: list[ExtractedFact] = Field(default_factory=list)


def _dump(answer: ExtractedFacts) -> str:
    data = answer.model_dump()
    for item in data["facts"]:
        if item.get("confidence") is None:
            item.pop("confidence", None)  # absent means the extractor's default
    return json.dumps(data)


class LlamaIndexExtractor(LLMExtractor):
    """``LLMExtractor`` whose model is a LlamaIndex ``LLM``.

    ``structured``: fill the ``ExtractedFacts`` schema (default: when the model
    is a function-calling model); otherwise plain chat returning JSON.
    Other keywords as ``LLMExtractor`` (``batch_size``, ``roles``, ``max_chars``)."""

    def __init__(
        self, llm: LLM, *, structured: bool | None = None, name: str | None = None, **kwargs: Any
    ):
        if not isinstance(llm, LLM):
            raise InvalidType(f"llm must be a llama_index LLM, not {type(llm).__name__}")
        if structured is None:
            structured = bool(getattr(llm.metadata, "is_function_calling_model", False))
        self.llm = llm
        self.structured = structured
        model = getattr(llm.metadata, "model_name", None)
        if not model or model == "unknown":
            model = type(llm).__name__
        super().__init__(self._complete, name=name or f"llamaindex:{model}", **kwargs)

    @staticmethod
    def _chat(messages: Sequence[dict[str, str]]) -> list[ChatMessage]:
        return [ChatMessage(role=m["role"], content=m["content"]) for m in messages]

    def _complete(self, messages: list[dict[str, str]]) -> str:
        chat = self._chat(messages)
        if self.structured and messages and messages[0]["content"] == SYSTEM_PROMPT:
            response = self.llm.as_structured_llm(ExtractedFacts).chat(chat)
            raw = response.raw
            if isinstance(raw, ExtractedFacts):
                return _dump(raw)
            return str(response.message.content or "")
        response = self.llm.chat(chat)
        return str(response.message.content or "")
