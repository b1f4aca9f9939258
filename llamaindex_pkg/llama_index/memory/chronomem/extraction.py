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

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms.llm import LLM

from chronomem import InvalidType
from chronomem.extraction import LLMExtractor, Request
from chronomem_adapters.answers import answer_json, facts_model

# core's answer schema as the pydantic model LlamaIndex fills (its name is on the wire)
ExtractedFacts = facts_model("ExtractedFacts")


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
        super().__init__(self._complete, name=name or f"llamaindex:{model}", kinds=True, **kwargs)

    @staticmethod
    def _chat(messages: Sequence[dict[str, str]]) -> list[ChatMessage]:
        return [ChatMessage(role=m["role"], content=m["content"]) for m in messages]

    def _complete(self, messages: list[dict[str, str]], kind: Request) -> str:
        chat = self._chat(messages)
        if self.structured and kind is Request.FACTS:
            response = self.llm.as_structured_llm(ExtractedFacts).chat(chat)
            raw = response.raw
            if isinstance(raw, ExtractedFacts):
                return answer_json(raw)
            return str(response.message.content or "")
        response = self.llm.chat(chat)
        return str(response.message.content or "")
