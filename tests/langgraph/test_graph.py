"""The store inside real LangGraph graphs: ``compile(store=...)``, a node using
``runtime.store``, one using ``get_store()``, an ``InjectedStore`` tool, async
invocation, and replay of an earlier run through ``store.as_of(...)``."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.config import get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock


class State(TypedDict, total=False):
    user: str
    city: str
    recalled: str | None


def remember(state: State, runtime: Runtime) -> dict[str, Any]:
    if state.get("city"):
        assert runtime.store is not None
        runtime.store.put(("users", state["user"]), "profile", {"city": state["city"]})
    return {}


def recall(state: State) -> dict[str, Any]:
    item = get_store().get(("users", state["user"]), "profile")
    return {"recalled": item.value["city"] if item else None}


def _builder() -> StateGraph:
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder


def test_graph_reads_and_writes_through_the_store(store: ChronomemStore) -> None:
    graph = _builder().compile(store=store)
    assert graph.invoke({"user": "ada", "city": "Paris"})["recalled"] == "Paris"
    assert graph.invoke({"user": "ada"})["recalled"] == "Paris"
    assert graph.invoke({"user": "bob"})["recalled"] is None
    item = store.get(("users", "ada"), "profile")
    assert item is not None and item.value == {"city": "Paris"}


def test_replay_an_earlier_run(store: ChronomemStore, clock: ManualClock) -> None:
    builder = _builder()
    graph = builder.compile(store=store)
    graph.invoke({"user": "ada", "city": "Paris"})
    then = clock.advance(minutes=1)
    clock.advance(minutes=1)
    graph.invoke({"user": "ada", "city": "Berlin"})
    assert graph.invoke({"user": "ada"})["recalled"] == "Berlin"
    replay = builder.compile(store=store.as_of(then))
    assert replay.invoke({"user": "ada"})["recalled"] == "Paris"
    # a replayed run that tries to write fails loudly instead of rewriting the past
    try:
        replay.invoke({"user": "ada", "city": "Rome"})
    except Exception as exc:  # LangGraph may wrap node errors
        assert "time-travel view" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("a write through a view must raise")
    assert graph.invoke({"user": "ada"})["recalled"] == "Berlin"


def test_async_graph(store: ChronomemStore) -> None:
    graph = _builder().compile(store=store)

    async def run() -> list[Any]:
        first = await graph.ainvoke({"user": "ada", "city": "Oslo"})
        second = await graph.ainvoke({"user": "ada"})
        return [first["recalled"], second["recalled"]]

    assert asyncio.run(run()) == ["Oslo", "Oslo"]


@tool
def save_city(city: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Remember the user's city."""
    store.put(("memories",), "city", {"city": city})
    return f"saved {city}"


@tool
def read_city(store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Read the user's city."""
    item = store.get(("memories",), "city")
    return item.value["city"] if item else "unknown"


def test_injected_store_tools(store: ChronomemStore) -> None:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([save_city, read_city]))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    graph = builder.compile(store=store)
    call = AIMessage(
        content="", tool_calls=[{"name": "save_city", "args": {"city": "Lima"}, "id": "1"}]
    )
    out = graph.invoke({"messages": [call]})
    assert out["messages"][-1].content == "saved Lima"
    call = AIMessage(content="", tool_calls=[{"name": "read_city", "args": {}, "id": "2"}])
    assert graph.invoke({"messages": [call]})["messages"][-1].content == "Lima"
    assert [v.value for v in store.history(("memories",), "city")] == ["Lima"]
