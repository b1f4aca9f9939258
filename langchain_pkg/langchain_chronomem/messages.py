"""LangChain messages <-> transcript messages, exactly.

The payload is LangChain's own serialisation (``message_to_dict``), so
``messages_from_dict`` rebuilds the same class with the same content, id,
name, additional kwargs, tool calls and response metadata. The episode text is
the message's readable text (what search and extraction see)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict

from chronomem import InvalidType
from chronomem.extraction import content_text, normalize_role
from chronomem_adapters.transcript import TranscriptMessage


def to_transcript(message: object) -> TranscriptMessage:
    """One LangChain message as the transcript stores it."""
    if not isinstance(message, BaseMessage):
        raise InvalidType(f"expected a LangChain BaseMessage, not {type(message).__name__}")
    role = getattr(message, "role", None) if message.type == "chat" else None
    return TranscriptMessage(
        role=normalize_role(role if isinstance(role, str) else message.type),
        text=content_text(message.content) or "",
        message_id=message.id,
        payload=message_to_dict(message),
    )


def to_transcripts(messages: Iterable[object]) -> list[TranscriptMessage]:
    """All of ``messages`` converted before anything is written (one bad item, nothing stored)."""
    if isinstance(messages, BaseMessage | str) or not isinstance(messages, Iterable):
        raise InvalidType(
            f"messages must be a sequence of LangChain messages, not {type(messages).__name__}"
        )
    return [to_transcript(m) for m in messages]


def from_transcript(messages: Sequence[TranscriptMessage]) -> list[BaseMessage]:
    """The LangChain messages back, in transcript order."""
    return messages_from_dict([m.payload for m in messages])
