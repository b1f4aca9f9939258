"""Messages of every shape become ``Turn`` values, by duck typing."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timezone

import pytest

from chronomem.errors import InvalidType, NaiveDatetime
from chronomem.extraction import Turn, normalize_messages


def test_a_string_is_one_user_turn():
    assert normalize_messages("I live in Paris") == [Turn("I live in Paris")]


def test_a_list_of_strings():
    turns = normalize_messages(["a b", "c d"])
    assert [(t.text, t.role, t.speaker) for t in turns] == [
        ("a b", "user", "user"),
        ("c d", "user", "user"),
    ]


def test_openai_dicts_with_parts_names_and_times():
    at = "2024-06-12T10:00:00Z"
    turns = normalize_messages(
        [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "name": "Ada", "content": [{"type": "text", "text": "I live in"},
                                                        {"type": "image_url", "image_url": {"url": "x"}},
                                                        {"type": "text", "text": "London"}],
             "timestamp": at},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
            {"role": "assistant", "content": "Noted."},
        ]
    )  # fmt: skip
    assert [t.role for t in turns] == ["system", "user", "assistant"]
    assert turns[1].text == "I live in\nLondon"
    assert turns[1].speaker == "Ada"
    assert turns[1].occurred_at == datetime(2024, 6, 12, 10, tzinfo=timezone.utc)
    assert turns[2].speaker == "assistant"


class _Role(str, enum.Enum):
    USER = "user"
    ASSISTANT = "assistant"


@dataclass
class LlamaLikeMessage:  # LlamaIndex ChatMessage: .role is an enum, .content a str
    role: _Role
    content: str


@dataclass
class LangChainLikeMessage:  # LangChain BaseMessage: .type, .content (str or parts), .name
    type: str
    content: object
    name: str | None = None

    def __iter__(self):  # pydantic models are iterable: must still count as ONE message
        return iter([("type", self.type), ("content", self.content)])


def test_framework_message_objects_by_duck_typing():
    turns = normalize_messages(
        [
            LangChainLikeMessage("human", "I work at Acme"),
            LangChainLikeMessage("ai", [{"type": "text", "text": "Great!"}]),
            LlamaLikeMessage(_Role.USER, "I speak Welsh"),
            LlamaLikeMessage(_Role.ASSISTANT, "Da iawn"),
            ("human", "tuple message"),
        ]
    )
    assert [(t.role, t.text) for t in turns] == [
        ("user", "I work at Acme"),
        ("assistant", "Great!"),
        ("user", "I speak Welsh"),
        ("assistant", "Da iawn"),
        ("user", "tuple message"),
    ]
    single = normalize_messages(LangChainLikeMessage("human", "one message", name="Bo"))
    assert [(t.text, t.speaker) for t in single] == [("one message", "Bo")]


def test_bad_input_is_a_clear_error():
    with pytest.raises(InvalidType):
        normalize_messages(None)
    with pytest.raises(InvalidType):
        normalize_messages([42])
    with pytest.raises(NaiveDatetime):
        normalize_messages([{"role": "user", "content": "x", "occurred_at": datetime(2024, 1, 1)}])
