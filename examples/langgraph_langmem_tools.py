"""langmem's memory tools over ChronomemStore (offline: the tools are called
directly, as an agent's tool calls would call them; no LLM).

An update through langmem's manage tool becomes a supersession (the old
content ends, still in history and in ``as_of`` views); a delete becomes a
retraction. The search tool reports LangGraph's score (a cosine similarity).

    .venv/bin/python examples/langgraph_langmem_tools.py
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

from langmem import create_manage_memory_tool, create_search_memory_tool

from langgraph.store.chronomem import ChronomemStore

NS = ("memories", "ada")


def main() -> None:
    store = ChronomemStore()
    manage = create_manage_memory_tool(namespace=NS, store=store)
    search = create_search_memory_tool(namespace=NS, store=store)

    created = manage.invoke({"content": "Ada lives in Paris", "action": "create"})
    key = created.split()[-1]
    manage.invoke({"content": "Ada likes green tea", "action": "create"})
    time.sleep(0.01)
    before_move = datetime.now(timezone.utc)
    time.sleep(0.01)
    manage.invoke({"content": "Ada lives in Berlin", "action": "update", "id": key})

    hits = json.loads(search.invoke({"query": "where does Ada live"}))
    best = hits[0]
    print(f"search: {best['value']['content']} (score {best['score']:.3f}, a cosine)")

    then = store.as_of(before_move).get(NS, key)
    print(f"as of before the move: {then.value['content'] if then else None}")

    tea = next(h["key"] for h in hits if "tea" in h["value"]["content"])
    manage.invoke({"action": "delete", "id": tea})
    left = [
        h for h in json.loads(search.invoke({"query": "tea"})) if "tea" in h["value"]["content"]
    ]
    print(f"after delete: {len(left)} memories about tea")

    print("history of the home memory:")
    for v in store.history(NS, key, "content"):
        print(f"  {v.value} [{v.state.value}]")
    print("history of the tea memory:")
    for v in store.history(NS, tea, "content"):
        print(f"  {v.value} [{v.state.value}]")
    store.close()


if __name__ == "__main__":
    main()
