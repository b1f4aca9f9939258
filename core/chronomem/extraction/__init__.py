"""Extraction: from messages to facts, offline first.

``add_messages(memory, messages)`` stores the messages as episodes, reads facts
from them with an extractor (default: the offline ``RuleExtractor``) and writes
the facts through the state machine in one transaction. Extractors follow one
protocol (``Extractor``: ``name``, ``version``, ``extract(turns)``, batched); the
``LLMExtractor`` plugs any chat model in, ``OpenAICompatibleExtractor`` any
``/chat/completions`` endpoint (``httpx``, the ``chronomem[http]`` extra)."""

from __future__ import annotations

from ..model import ExtractionReceipt
from .base import (
    Extracted,
    ExtractionError,
    ExtractionResult,
    Extractor,
    SchemaAware,
    Turn,
    content_text,
    normalize_messages,
    normalize_role,
)
from .ingest import add_messages, default_extractor
from .llm import (
    ANSWER_SCHEMA,
    CARDINALITY_SCHEMA,
    DEFAULT_CONFIDENCE,
    LLMExtractor,
    OpenAICompatibleExtractor,
    Request,
    parse_answer,
)
from .rules import RuleExtractor
from .salience import is_salient, is_small_talk
from .timeexpr import find_times, resolve

__all__ = [
    "ANSWER_SCHEMA",
    "CARDINALITY_SCHEMA",
    "DEFAULT_CONFIDENCE",
    "Extracted",
    "ExtractionError",
    "ExtractionReceipt",
    "ExtractionResult",
    "Extractor",
    "LLMExtractor",
    "OpenAICompatibleExtractor",
    "Request",
    "RuleExtractor",
    "SchemaAware",
    "Turn",
    "add_messages",
    "content_text",
    "default_extractor",
    "find_times",
    "is_salient",
    "is_small_talk",
    "normalize_messages",
    "normalize_role",
    "parse_answer",
    "resolve",
]
