"""Fact extraction with a CrewAI ``LLM`` (issue #18): core's ``LLMExtractor``
driven by the crew's own model.

``CrewAIExtractor(llm)`` sends core's extraction prompt through ``llm.call``
(any ``crewai.llms.base_llm.BaseLLM``: ``crewai.LLM``, native providers, a
custom subclass). With ``structured=True`` (the default) it asks for CrewAI's
structured output (``response_model``: the answer schema as a pydantic model),
which providers that support it enforce; a plain-text answer is accepted too.
Either way the answer is validated by core's strict ``parse_answer`` before
anything is written: a malformed answer fails its whole batch and writes
nothing. ``ChronomemMemory(extractor="llm")`` builds one from the memory's
``llm``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from crewai.llms.base_llm import BaseLLM
from pydantic import BaseModel

from chronomem.extraction import LLMExtractor, Request
from chronomem_adapters.answers import CardinalityAnswer, answer_json, facts_model

# core's answer schema as the pydantic model CrewAI's response_model takes
FactsAnswer = facts_model("FactsAnswer")
SCHEMAS: dict[Request, type[BaseModel]] = {
    Request.FACTS: FactsAnswer,
    Request.CARDINALITY: CardinalityAnswer,
}


def _text(answer: Any) -> str:
    if isinstance(answer, BaseModel):
        return answer_json(answer)
    if isinstance(answer, str):
        return answer
    if isinstance(answer, dict | list):
        return json.dumps(answer)
    raise TypeError(f"the model returned {type(answer).__name__}, not text")


class CrewAIExtractor(LLMExtractor):
    """``LLMExtractor`` whose model is a CrewAI ``BaseLLM``."""

    def __init__(
        self,
        llm: BaseLLM,
        *,
        structured: bool = True,
        batch_size: int = 16,
        roles: Sequence[str] = ("user",),
        name: str | None = None,
    ):
        if not isinstance(llm, BaseLLM):
            raise TypeError(f"llm must be a CrewAI BaseLLM, not {type(llm).__name__}")
        self.llm = llm
        self.structured = structured
        super().__init__(
            self._complete,
            name=name or f"crewai:{llm.model}",
            batch_size=batch_size,
            roles=roles,
            kinds=True,
        )

    def _complete(self, messages: list[dict[str, str]], kind: Request) -> str:
        schema = SCHEMAS[kind] if self.structured else None
        return _text(self.llm.call(messages, response_model=schema))  # type: ignore[arg-type]
