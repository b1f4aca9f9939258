"""An application's ``with memory.read_tag(run=...)`` wins inside every adapter
(issue #33, ``chronomem_adapters.readtags``): the adapter fills only the keys the
application left unset, the LangGraph store included."""

from __future__ import annotations

from typing import Any, TypedDict

from chronomem import Memory

from ..conftest import ManualClock

APP_RUN = "incident-42"


def test_langgraph_store_inside_a_graph(memory: Memory) -> None:
    from langgraph.config import get_store
    from langgraph.graph import START, StateGraph

    from langgraph.store.chronomem import ChronomemStore

    class State(TypedDict, total=False):
        seen: Any

    def read(state: State) -> dict[str, Any]:
        item = get_store().get(("users",), "ada")
        return {"seen": None if item is None else item.value}

    store = ChronomemStore(memory, read_log=True)
    store.put(("users",), "ada", {"city": "Paris"})
    before = {r.id for r in memory.reads()}
    graph = StateGraph(State).add_node("read", read).add_edge(START, "read").compile(store=store)
    with memory.read_tag(run=APP_RUN):
        out = graph.invoke({}, {"run_id": "0a6f3c2e-0000-4000-8000-000000000001"})
    assert out["seen"] == {"city": "Paris"}
    inside = [r for r in memory.reads() if r.id not in before]
    assert inside and {r.tag["run"] for r in inside} == {APP_RUN}  # not the graph's run id
    # outside the application's tag the graph's run id is used
    graph.invoke({}, {"run_id": "0a6f3c2e-0000-4000-8000-000000000002"})
    after = [r for r in memory.reads() if r.id not in before]
    assert {r.tag["run"] for r in after} == {APP_RUN, "0a6f3c2e-0000-4000-8000-000000000002"}


def test_langchain_retriever(memory: Memory) -> None:
    from langchain_chronomem import ChronomemRetriever

    memory.remember("ada", "lives_in", "Paris")
    retriever = ChronomemRetriever(memory=memory, read_log=True)
    with memory.read_tag(run=APP_RUN):
        retriever.invoke("where does ada live")
    (read,) = memory.reads()
    assert read.tag["run"] == APP_RUN


def test_llamaindex_retriever(memory: Memory) -> None:
    from llama_index.memory.chronomem import ChronomemRetriever

    session = memory.scoped(session="chat-9")
    session.remember("user", "lives_in", "Lisbon")
    with memory.read_tag(run=APP_RUN, session="app-session"):
        ChronomemRetriever(session, read_log=True).retrieve("where does the user live")
    (read,) = memory.reads()
    assert read.tag == {"run": APP_RUN, "session": "app-session"}


def test_crewai_memory_and_storage(url: str | None, clock: ManualClock) -> None:
    from crewai.execution import clear_execution_uuid, set_execution_uuid

    from crewai_chronomem import ChronomemMemory

    memory = Memory(clock=clock)
    cm = ChronomemMemory(memory=memory, read_log=True)
    cm.remember("I live in Paris.", source="dana")
    token = set_execution_uuid("kickoff-1")
    try:
        with memory.read_tag(run=APP_RUN):
            cm.recall("where does dana live")
    finally:
        clear_execution_uuid(token)
    reads = memory.reads()
    assert reads and {r.tag["run"] for r in reads} == {APP_RUN}
