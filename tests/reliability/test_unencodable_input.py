"""Issue #14 I, the last hostile inputs: a lone surrogate in a LangGraph value or
field name and a self-referencing metadata dict were raw ``UnicodeEncodeError`` /
``RecursionError``; each is now a chronomem error and nothing is written."""

from __future__ import annotations

from typing import Any

import pytest

from chronomem import InvalidInput, InvalidType, Memory
from langgraph.store.chronomem import ChronomemStore


def _cycle() -> dict[str, Any]:
    d: dict[str, Any] = {"a": 1}
    d["self"] = d
    return d


@pytest.mark.parametrize(
    "value",
    [{"v": "x\ud800y"}, {"f\udc00": 1}, {"v": ["ok", {"deep": "\udfff"}]}],
    ids=["value", "field-name", "nested"],
)
def test_langgraph_put_with_a_lone_surrogate_is_refused(url: str | None, value: Any) -> None:
    store = ChronomemStore(url)
    try:
        with pytest.raises(InvalidInput, match="lone surrogate"):
            store.put(("users", "ada"), "profile", value)
        assert store.get(("users", "ada"), "profile") is None
        assert store.memory.facts(states=["live", "ended", "scheduled", "retracted"]) == []
    finally:
        store.close()


def test_langgraph_put_of_a_cycle_is_refused(url: str | None) -> None:
    store = ChronomemStore(url)
    try:
        with pytest.raises(InvalidType, match="not JSON-serialisable"):
            store.put(("users", "ada"), "profile", {"v": _cycle()})
        assert store.get(("users", "ada"), "profile") is None
    finally:
        store.close()


def test_self_referencing_metadata_is_refused(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="reference cycle"):
        memory.remember("ann", "likes", "tea", metadata=_cycle())
    with pytest.raises(InvalidInput, match="reference cycle"):
        memory.add_episode("hello", metadata={"list": [_cycle()]})
    assert memory.facts() == [] and memory.episodes() == []
    shared = [1, 2]  # the same list twice is not a cycle
    memory.remember("ann", "likes", "tea", metadata={"a": shared, "b": shared})
    assert memory.facts()[0].metadata == {"a": [1, 2], "b": [1, 2]}
