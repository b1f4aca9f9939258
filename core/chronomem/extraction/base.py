"""The extraction protocol: turns in, candidate facts out.

Extraction runs *before* the state machine, never instead of it: an extractor
only proposes ``Extracted`` facts; ``chronomem.extraction.ingest`` turns them
into write operations and applies them through ``Memory.apply``.

Messages arrive in many shapes (a string, OpenAI-style dicts, LangChain or
LlamaIndex message objects); ``normalize_messages`` turns every one of them into
``Turn`` values by duck typing, so core never imports an agent framework."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import ChronomemError, InvalidInput, InvalidType
from ..timeutil import instant

Op = Literal["assert", "end"]
OPS: frozenset[str] = frozenset({"assert", "end"})

DEFAULT_SPEAKER = "user"


class ExtractionError(ChronomemError):
    """An extractor's answer could not be used (malformed, partial, transport
    failure). Nothing from the failing batch is written.

    ``failures`` maps turn indexes to the reason; ``receipt`` (when raised by
    ``add_messages(..., on_error="raise")``) says what *was* written."""

    def __init__(
        self,
        message: str,
        *,
        failures: Mapping[int, str] | None = None,
        receipt: Any = None,
    ):
        super().__init__(message)
        self.failures: dict[int, str] = dict(failures or {})
        self.receipt = receipt


@dataclass(frozen=True)
class Turn:
    """One message as the extractors see it.

    ``speaker`` is whom first-person statements are about: ``"user"`` by
    default, or the name the message carries (OpenAI ``name``, a framework
    message's ``name``)."""

    text: str
    role: str = "user"
    occurred_at: datetime | None = None
    episode_id: str | None = None
    speaker: str = DEFAULT_SPEAKER
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def subject(self) -> str:
        return self.speaker


@dataclass(frozen=True)
class Extracted:
    """A candidate fact read from one turn.

    ``op="assert"``: ``subject predicate obj`` holds from ``valid_from`` (``None``:
    the turn's time) until ``valid_to`` (``None``: the next known change).
    ``op="end"``: the value stopped holding at ``valid_to`` (falling back to
    ``valid_from``, then the turn's time); ``obj=None`` ends whatever value the
    slot has ("I quit my job").

    ``held`` (ends only): the speaker says the value *did* hold until then ("I
    quit Deloitte", "I used to live in Madrid", "I no longer work at IBM"), as
    opposed to a plain denial ("I don't speak German"). An end that is held is
    a fact even when the store knows no earlier value: ingestion writes it as
    the value holding from an unknown start until ``valid_to`` (see
    ``chronomem.extraction.ingest``). A plain denial only ends what is known."""

    subject: str
    predicate: str
    obj: str | None
    op: Op = "assert"
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    confidence: float = 1.0
    evidence: str | None = None  # the part of the text the fact was read from
    held: bool = False  # an end the speaker says was true until then (see above)

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise InvalidInput(f"op must be 'assert' or 'end', not {self.op!r}")
        if self.op == "assert" and not self.obj:
            raise InvalidInput("an asserted fact needs an object")


@dataclass(frozen=True)
class ExtractionResult:
    """What an extractor made of one turn (results come back in turn order).

    ``skipped``: the salience gate dropped the turn (small talk, not a user
    turn) before any extraction work. ``error``: extraction failed for the
    turn's batch; nothing from that batch is written."""

    turn: Turn
    facts: list[Extracted] = field(default_factory=list)
    skipped: bool = False
    error: str | None = None


@runtime_checkable
class Extractor(Protocol):
    """Reads facts from turns, batched: ``extract`` returns one result per turn,
    in order. ``name`` and ``version`` are recorded on every fact written
    (``extractor="name/version"``), so ``why()`` says who read it."""

    name: str
    version: str

    def extract(self, turns: Sequence[Turn]) -> list[ExtractionResult]: ...


@runtime_checkable
class SchemaAware(Protocol):
    """An extractor that can tell the cardinality of a predicate it invented.

    ``add_messages`` asks it once per unknown predicate (and persists the answer
    with ``Memory.register_predicate``); ``None`` means "don't know" (the
    predicate stays ``MANY``)."""

    def cardinality_of(self, predicate: str, example: Extracted | None = None) -> str | None: ...


# -- message normalisation ---------------------------------------------------------------

_ROLE_ALIASES = {
    "human": "user",
    "humanmessage": "user",
    "humanmessagechunk": "user",
    "ai": "assistant",
    "aimessage": "assistant",
    "aimessagechunk": "assistant",
    "bot": "assistant",
    "chatbot": "assistant",
    "model": "assistant",
    "function": "tool",
    "developer": "system",
}

_KNOWN_ROLES = frozenset({"user", "assistant", "system", "tool", *_ROLE_ALIASES})

_TIME_KEYS = ("occurred_at", "timestamp", "created_at", "time")


def normalize_role(role: object) -> str:
    """``human``/``HumanMessage`` -> ``user``, ``ai`` -> ``assistant``, enums by value."""
    if isinstance(role, enum.Enum):
        role = role.value
    if role is None:
        return "user"
    if not isinstance(role, str):
        raise InvalidType(f"a message role must be a str, not {type(role).__name__}")
    key = role.strip().lower()
    return _ROLE_ALIASES.get(key, key or "user")


def content_text(content: object) -> str | None:
    """A message's text: a str, or the text parts of a list of parts
    (``{"type": "text", "text": ...}``, plain strings, objects with ``.text``)."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        text = content.get("text")
        if content.get("type", "text") == "text" and isinstance(text, str):
            return text
        return None
    if isinstance(content, Iterable):
        parts = [p for p in (content_text(c) for c in content) if p]
        return "\n".join(parts) if parts else None
    text = getattr(content, "text", None)
    return text if isinstance(text, str) else None


def _parse_time(value: object, name: str) -> datetime | None:
    if value is not None and not isinstance(value, str | datetime):
        raise InvalidType(f"{name} must be a datetime, not {type(value).__name__}")
    return instant(value, name)


def _one(message: object, index: int) -> Turn | None:
    where = f"messages[{index}]"
    if isinstance(message, Turn):
        return message
    name: object = None
    when: object = None
    metadata: object = None
    text: str | None
    if isinstance(message, str):
        role: object = "user"
        text = message
    elif (
        isinstance(message, tuple)
        and len(message) == 2
        and isinstance(message[0], str)
        and message[0].strip().lower() in _KNOWN_ROLES
    ):
        role, text = message[0], content_text(message[1])  # LangChain ("human", "hi") tuples
    elif isinstance(message, Mapping):
        role = message.get("role", message.get("type", "user"))
        text = content_text(message.get("content", message.get("text")))
        name = message.get("name") or message.get("speaker")
        when = next((message[k] for k in _TIME_KEYS if message.get(k) is not None), None)
        metadata = message.get("metadata")
    elif hasattr(message, "content") or hasattr(message, "text"):
        role = getattr(message, "role", None) or getattr(message, "type", None) or "user"
        raw = getattr(message, "content", None)
        text = content_text(raw if raw is not None else getattr(message, "text", None))
        name = getattr(message, "name", None)
        when = next(
            (v for k in _TIME_KEYS if isinstance(v := getattr(message, k, None), datetime | str)),
            None,
        )
    else:
        raise InvalidType(
            f"{where}: a message must be a str, a {{'role', 'content'}} mapping or an "
            f"object with .role/.type and .content, not {type(message).__name__}"
        )
    if text is None or not text.strip():
        return None  # nothing to store or read (a tool-call stub, an image-only message)
    norm_role = normalize_role(role)
    speaker = name if isinstance(name, str) and name.strip() else None
    if speaker is None:
        speaker = DEFAULT_SPEAKER if norm_role == "user" else norm_role
    meta: dict[str, Any] = dict(metadata) if isinstance(metadata, Mapping) else {}
    return Turn(
        text=text,
        role=norm_role,
        occurred_at=_parse_time(when, f"{where}.occurred_at"),
        speaker=speaker.strip(),
        metadata=meta,
    )


def normalize_messages(messages: object) -> list[Turn]:
    """Every accepted message shape -> ``Turn`` values, in order.

    Accepts a str (one user message), ``Turn`` values, OpenAI-style mappings
    (``role``, ``content`` as a str or a list of ``{"type": "text", ...}`` parts,
    optional ``name`` and ``occurred_at``/``timestamp``), ``(role, text)`` tuples,
    and objects with ``.role``/``.type`` and ``.content`` (LangChain and
    LlamaIndex messages, by duck typing), or a list of any of these. Roles are
    normalised (``human`` -> ``user``, ``ai`` -> ``assistant``). Messages with no
    text are left out."""
    if messages is None:
        raise InvalidType("messages must not be None")
    if isinstance(messages, str | Turn | Mapping) or hasattr(messages, "content"):
        items: list[object] = [messages]  # one message (pydantic messages are iterable too)
    elif isinstance(messages, Iterable):
        items = list(messages)
    else:
        items = [messages]  # _one() says what is wrong with it
    turns = []
    for i, m in enumerate(items):
        t = _one(m, i)
        if t is not None:
            turns.append(t)
    return turns
