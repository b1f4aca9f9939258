"""Replay a LangGraph run against the memory it had then (offline, no LLM).

A graph recommends a dinner from what it remembers about the user. After the
user's diet changes, ``store.as_of(t)`` gives a read-only view of the store as
it was at ``t``; compiling the same graph with it replays the old run exactly,
which is how you debug "why did the agent say that?".

    .venv/bin/python examples/langgraph_replay.py
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from langgraph.store.chronomem import ChronomemStore, ReadOnlyView

DISHES = {"vegetarian": "mushroom risotto", "pescatarian": "grilled sea bass", None: "steak frites"}


class State(TypedDict, total=False):
    user: str
    recommendation: str


def recommend(state: State, runtime: Runtime) -> dict[str, Any]:
    assert runtime.store is not None
    item = runtime.store.get(("users", state["user"]), "diet")
    diet = item.value.get("diet") if item else None
    return {"recommendation": f"{DISHES[diet]} (diet: {diet or 'unknown'})"}


def main() -> None:
    builder = StateGraph(State)
    builder.add_node("recommend", recommend)
    builder.add_edge(START, "recommend")
    builder.add_edge("recommend", END)

    store = ChronomemStore()
    graph = builder.compile(store=store)

    store.put(("users", "ada"), "diet", {"diet": "vegetarian"})
    first = graph.invoke({"user": "ada"})["recommendation"]
    then = datetime.now(timezone.utc)
    print(f"run 1 (vegetarian):  {first}")

    store.put(("users", "ada"), "diet", {"diet": "pescatarian"})
    print(f"run 2 (pescatarian): {graph.invoke({'user': 'ada'})['recommendation']}")
    store.delete(("users", "ada"), "diet")
    print(f"run 3 (forgotten):   {graph.invoke({'user': 'ada'})['recommendation']}")

    replay = builder.compile(store=store.as_of(then)).invoke({"user": "ada"})["recommendation"]
    print(f"replay of run 1:     {replay}")
    print(f"replay identical:    {replay == first}")

    try:
        store.as_of(then).put(("users", "ada"), "diet", {"diet": "vegan"})
    except ReadOnlyView as exc:
        print(f"writing to the past: refused ({type(exc).__name__})")

    print("audit trail of 'diet':")
    for v in store.history(("users", "ada"), "diet", "diet"):
        print(f"  {v.value} [{v.state.value}]")
    store.close()


if __name__ == "__main__":
    main()
