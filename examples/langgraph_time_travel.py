"""LangGraph time travel that also travels memory (offline, no LLM).

LangGraph replays or forks a run from any past checkpoint; with
``ChronomemStore(pin_reads="checkpoint")`` the store reads inside that run are
served as memory was when the checkpoint was written, while a normal run reads
today's memory. Writes made by the replay go to the present, tagged with the
checkpoint they forked from. With ``read_log=True`` every read is logged with
its thread and checkpoint, so "what did the agent know?" has an answer.

    .venv/bin/python examples/langgraph_time_travel.py            # InMemorySaver
    .venv/bin/python examples/langgraph_time_travel.py --sqlite   # SqliteSaver
"""

from __future__ import annotations

import sqlite3
import sys
from typing import Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from chronomem import Fact
from langgraph.store.chronomem import ChronomemStore, item_value, keys

DISHES = {"vegetarian": "mushroom risotto", "pescatarian": "grilled sea bass"}


class State(TypedDict, total=False):
    user: str
    greeting: str
    recommendation: str


def greet(state: State) -> dict[str, Any]:
    return {"greeting": f"hello {state['user']}"}


def recommend(state: State, runtime: Runtime) -> dict[str, Any]:
    assert runtime.store is not None
    item = runtime.store.get(("users", state["user"]), "diet")
    diet = item.value["diet"] if item else "unknown"
    dish = DISHES.get(diet, "chef's choice")
    runtime.store.put(("users", state["user"]), "last_dish", {"dish": dish})
    return {"recommendation": f"{dish} (diet: {diet})"}


def checkpointer(use_sqlite: bool) -> BaseCheckpointSaver[Any]:
    if use_sqlite:
        from langgraph.checkpoint.sqlite import SqliteSaver

        return SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    return InMemorySaver()


def main(use_sqlite: bool = False) -> None:
    builder = StateGraph(State)
    builder.add_node("greet", greet)
    builder.add_node("recommend", recommend)
    builder.add_edge(START, "greet")
    builder.add_edge("greet", "recommend")
    builder.add_edge("recommend", END)

    saver = checkpointer(use_sqlite)
    store = ChronomemStore(pin_reads="checkpoint", read_log=True)
    graph = builder.compile(store=store, checkpointer=saver)
    print(f"checkpointer: {type(saver).__name__}")

    ada = ("users", "ada")
    store.put(ada, "diet", {"diet": "vegetarian"})
    run1 = {"configurable": {"thread_id": "ada-1"}}
    print(f"run 1:               {graph.invoke({'user': 'ada'}, run1)['recommendation']}")

    store.put(ada, "diet", {"diet": "pescatarian"})  # memory changes after run 1
    run2 = {"configurable": {"thread_id": "ada-2"}}
    print(f"run 2 (today):       {graph.invoke({'user': 'ada'}, run2)['recommendation']}")

    # replay run 1 from its checkpoint before "recommend": memory as it was then
    before = next(s for s in graph.get_state_history(run1) if s.next == ("recommend",))
    replay = graph.invoke(None, before.config)["recommendation"]
    print(f"replay of run 1:     {replay}")

    # the replay's write went to the present, tagged with the fork
    (dish,) = [
        f
        for f in store.memory.facts(subject=keys.subject(ada, "last_dish"), exact=True)
        if f.predicate == keys.DOC and f.metadata.get("langgraph_fork")
    ]
    fork = dish.metadata["langgraph_fork"]
    same = fork["checkpoint_id"] == before.config["configurable"]["checkpoint_id"]
    print(f"replay wrote:        {item_value(dish)['dish']} (tagged with its checkpoint: {same})")
    latest = store.get(ada, "last_dish")
    print(f"last_dish now:       {latest.value['dish'] if latest else None}")

    # what did the agent know? the store's reads, by thread
    for thread in ("ada-1", "ada-2"):
        served = store.memory.served(tag={"thread": thread})
        diets = sorted(
            {
                value["diet"]
                for i in served.items
                if isinstance(i.then, Fact)
                and i.then.predicate == keys.DOC
                and "diet" in (value := item_value(i.then) or {})
            }
        )
        print(f"thread {thread} was served diet: {', '.join(diets)}")
    store.close()


if __name__ == "__main__":
    main(use_sqlite="--sqlite" in sys.argv[1:])
