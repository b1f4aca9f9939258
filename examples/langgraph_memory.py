"""LangGraph long-term memory on chronomem (offline, no LLM).

A graph learns facts about a user from what they say and answers from its
memory. The store is a drop-in LangGraph ``BaseStore``; unlike the others, a
changed value is not overwritten: it ends, and stays in the history.

    .venv/bin/python examples/langgraph_memory.py
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from langgraph.store.chronomem import ChronomemStore

RULES = {"city": r"I live in (\w+)", "employer": r"I work at (\w+)", "pet": r"I have a (\w+)"}


class State(TypedDict, total=False):
    user: str
    message: str
    reply: str


def learn(state: State, runtime: Runtime) -> dict[str, Any]:
    """Turn "I live in Paris" into the field city=Paris of the user's profile."""
    store = runtime.store
    assert store is not None
    ns = ("users", state["user"])
    profile = dict(item.value) if (item := store.get(ns, "profile")) else {}
    for field, pattern in RULES.items():
        if m := re.search(pattern, state["message"]):
            profile[field] = m.group(1)
    if "no pets" in state["message"]:
        profile.pop("pet", None)
    store.put(ns, "profile", profile)
    return {}


def answer(state: State) -> dict[str, Any]:
    item = get_store().get(("users", state["user"]), "profile")
    known = ", ".join(f"{k}={v}" for k, v in item.value.items()) if item else "nothing"
    return {"reply": f"I know: {known}"}


def main() -> None:
    builder = StateGraph(State)
    builder.add_node("learn", learn)
    builder.add_node("answer", answer)
    builder.add_edge(START, "learn")
    builder.add_edge("learn", "answer")
    builder.add_edge("answer", END)

    with ChronomemStore() as store:  # ChronomemStore("memory.db") keeps it on disk
        graph = builder.compile(store=store)
        for message in [
            "I live in Paris and I have a cat",
            "I work at Acme",
            "I live in Berlin now",
            "Sadly, no pets any more",
        ]:
            out = graph.invoke({"user": "ada", "message": message})
            print(f"ada: {message}\n  -> {out['reply']}")

        print("\nhistory of ada's profile (nothing was overwritten):")
        for v in store.history(("users", "ada"), "profile"):
            print(f"  {v.field:<8} = {v.value:<7} [{v.state.value}]")

        hit = store.search(("users",), query="Berlin")[0]
        print(f"\nsearch 'Berlin' -> {hit.namespace[-1]}: {hit.value}")


if __name__ == "__main__":
    main()
