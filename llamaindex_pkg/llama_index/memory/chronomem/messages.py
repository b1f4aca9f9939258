"""LlamaIndex ``ChatMessage`` values as transcript messages and extraction turns.

A message is stored as LlamaIndex serialises it itself (``model_dump_json``,
as its SQL chat store does), so ``get_all`` rebuilds it with
``ChatMessage.model_validate``: text, images, documents, tool-call blocks and
``additional_kwargs`` come back as LlamaIndex's own stores return them.
Before anything is written a message is checked: it must be a ``ChatMessage``
and a naive ``datetime`` anywhere in ``additional_kwargs`` is refused
(``NaiveDatetime``), because its JSON form would silently lose which instant
it meant.

Only the text of user and assistant messages reaches extraction; tool output,
system prompts and non-text blocks stay in the transcript only."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock
from pydantic_core import PydanticSerializationError

from chronomem import InvalidInput, InvalidType, NaiveDatetime
from chronomem.extraction import Turn
from chronomem_adapters.transcript import TranscriptMessage

EXTRACTED_ROLES = frozenset({"user", "assistant"})
SESSION_KEY = "llamaindex_session"


def _check_naive(value: Any, where: str) -> None:
    if isinstance(value, datetime):
        if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
            raise NaiveDatetime(
                f"{where} is a naive datetime; pass a timezone-aware one (its stored "
                "JSON form would not say which instant it meant)"
            )
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _check_naive(v, f"{where}[{k!r}]")
    elif isinstance(value, list | tuple | set | frozenset):
        for i, v in enumerate(value):
            _check_naive(v, f"{where}[{i}]")


def checked(messages: object, where: str = "messages") -> list[ChatMessage]:
    """``messages`` as a list of ``ChatMessage``, or a clear ``InvalidType``."""
    if isinstance(messages, ChatMessage | str | bytes | Mapping):
        raise InvalidType(f"{where} must be a list of ChatMessage, not {type(messages).__name__}")
    if not isinstance(messages, Iterable):
        raise InvalidType(f"{where} must be a list of ChatMessage, not {type(messages).__name__}")
    out = [checked_one(m, f"{where}[{i}]") for i, m in enumerate(messages)]
    return out


def checked_one(message: object, where: str = "message") -> ChatMessage:
    if not isinstance(message, ChatMessage):
        raise InvalidType(
            f"{where} must be a llama_index ChatMessage, not {type(message).__name__}"
        )
    _check_naive(message.additional_kwargs, f"{where}.additional_kwargs")
    return message


def role_of(message: ChatMessage) -> str:
    role = message.role
    return role.value if isinstance(role, MessageRole) else str(role)


def text_of(message: ChatMessage) -> str:
    """The message's text blocks, joined (``""`` for a tool call or an image)."""
    return "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock))


def payload_of(message: ChatMessage) -> dict[str, Any]:
    """LlamaIndex's own JSON form of the message (``InvalidInput`` if it has none)."""
    try:
        data: dict[str, Any] = json.loads(message.model_dump_json())
    except (PydanticSerializationError, ValueError) as exc:
        raise InvalidInput(f"the message cannot be stored as JSON: {exc}") from None
    return data


def to_transcript(message: ChatMessage) -> TranscriptMessage:
    return TranscriptMessage(
        role=role_of(message), text=text_of(message), payload=payload_of(message)
    )


def from_transcript(message: TranscriptMessage) -> ChatMessage:
    if message.payload:
        return ChatMessage.model_validate(message.payload)
    return ChatMessage(role=message.role or "user", content=message.text)  # a foreign episode


def to_turns(messages: Sequence[ChatMessage], session: str | None) -> list[Turn]:
    """The messages extraction reads: user and assistant text."""
    meta = {SESSION_KEY: session} if session else {}
    turns = []
    for m in messages:
        role = role_of(m)
        text = text_of(m)
        if role in EXTRACTED_ROLES and text.strip():
            speaker = "user" if role == "user" else role
            turns.append(Turn(text=text, role=role, speaker=speaker, metadata=meta))
    return turns


def last_user_text(messages: Sequence[ChatMessage]) -> str | None:
    for m in reversed(messages):
        if role_of(m) == "user":
            text = text_of(m).strip()
            if text:
                return text
    return None


# roles a trimmed history may not start with (ChatMemoryBuffer.get's rule)
LEADING_REFUSED = ("assistant", "tool")


def fit(
    messages: Sequence[ChatMessage], budget: int, count: Callable[[ChatMessage], int]
) -> list[ChatMessage]:
    """The most recent messages within ``budget`` tokens, dropping whole oldest
    messages. The newest message is always kept (a prompt without the turn being
    answered is useless). The result opens with a user message whenever the
    history holds one (several providers refuse a history that does not, and a
    tool result needs its call): leading assistant and tool messages are dropped,
    as ``ChatMemoryBuffer`` does; if only such messages fit, the turn is kept
    whole from its user message, over budget, as LlamaIndex's ``Memory`` does."""
    if not messages:
        return []
    kept = [messages[-1]]
    used = count(messages[-1])
    for m in reversed(messages[:-1]):
        cost = count(m)
        if used + cost > budget:
            break
        kept.append(m)
        used += cost
    kept.reverse()
    while len(kept) > 1 and role_of(kept[0]) in LEADING_REFUSED:
        kept.pop(0)
    if role_of(kept[0]) in LEADING_REFUSED:
        for i in range(len(messages) - 2, -1, -1):
            if role_of(messages[i]) == "user":
                return list(messages[i:])
    return kept


TOKEN_MEMO = 4096  # distinct texts whose token length a counter remembers


def token_lengths(tokenizer: Callable[[str], Sequence[Any]]) -> Callable[[str], int]:
    """``len(tokenizer(text))``, remembered for the last ``TOKEN_MEMO`` distinct
    texts: a turn re-reads the transcript's tail, whose texts were counted
    already, and a text's length is a function of the text alone."""
    return lru_cache(maxsize=TOKEN_MEMO)(lambda text: len(tokenizer(text)))


def token_counter(tokenizer: Callable[[str], Sequence[Any]]) -> Callable[[ChatMessage], int]:
    """Tokens of a message's text plus a flat cost per non-text block and kwargs
    (each text tokenized once per ``TOKEN_MEMO`` distinct texts: ``token_lengths``)."""
    length = token_lengths(tokenizer)

    def count(message: ChatMessage) -> int:
        n = length(text_of(message)) + 4
        for b in message.blocks:
            if not isinstance(b, TextBlock):
                n += (
                    256
                    if b.block_type in ("image", "audio", "video", "document")
                    else length(b.model_dump_json())
                )
        if message.additional_kwargs:
            n += length(json.dumps(payload_of(message).get("additional_kwargs", {})))
        return n

    return count
