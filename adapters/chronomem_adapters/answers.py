"""Core's extraction answer (``chronomem.extraction.ANSWER_SCHEMA``) as pydantic
models, for frameworks whose structured output takes a model class (LlamaIndex's
``as_structured_llm``, CrewAI's ``response_model``).

The fields, their meaning and the cardinality answer are written once here;
each package only names its class (the name is the schema's name on the wire).
A filled answer goes back to core as JSON (``answer_json``) and is validated by
core's ``parse_answer`` like any other: no field is trusted because the model
filled a schema. Needs pydantic (every framework that asks for these has it)."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field, create_model


class FactItem(BaseModel):
    """One fact a speaker stated about themself."""

    turn: int = Field(description="The number of the turn the fact comes from.")
    subject: str = Field(description="The speaker's name, as in the turn's speaker field.")
    predicate: str = Field(description="A snake_case predicate such as lives_in or works_at.")
    object: str | None = Field(description="A short noun phrase; null only for an end.")
    op: Literal["assert", "end"] = Field(description="assert: it holds; end: it stopped.")
    valid_from: str | None = Field(default=None, description="ISO 8601 date, if said.")
    valid_to: str | None = Field(default=None, description="ISO 8601 date, if said.")
    confidence: float | None = Field(default=None, description="0..1")


class CardinalityAnswer(BaseModel):
    """Whether a subject has one value of the predicate at a time, or many."""

    cardinality: Literal["one", "many"]


def facts_model(name: str) -> type[BaseModel]:
    """The answer model (``{"facts": [FactItem, ...]}``) under the class name a
    framework's requests carry."""
    model: type[BaseModel] = create_model(
        name,
        __doc__="The durable facts stated in the turns (an empty list when there are none).",
        facts=(list[FactItem], Field(default_factory=list)),
    )
    return model


def answer_json(answer: BaseModel) -> str:
    """A filled answer as the JSON ``parse_answer`` reads; a confidence the model
    left out stays out (core's ``DEFAULT_CONFIDENCE`` applies)."""
    data = answer.model_dump()
    for item in data.get("facts", ()):
        if item.get("confidence") is None:
            item.pop("confidence", None)
    return json.dumps(data, ensure_ascii=False)
