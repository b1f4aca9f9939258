"""Pinned reads (issue #16): a LangGraph run replayed or forked from a past
checkpoint reads memory as of that checkpoint (``pin_reads="checkpoint"``); a
normal run reads today's; the replay's writes land in the present, tagged with
the fork; the read log is tagged with the thread and checkpoint. Real graphs,
real checkpointers (``InMemorySaver``, ``SqliteSaver``), both backends."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from chronomem import InvalidInput
from langgraph.store.chronomem import ChronomemStore, PinUnavailable, item_value, keys

from ..examples_runner import run_example

ADA = ("users", "ada")


class S(TypedDict, total=False):
    step: int
    seen: str


def _start(state: S) -> dict[str, Any]:
    return {"step": 1}


def _read(state: S, runtime: Runtime) -> dict[str, Any]:
    assert runtime.store is not None
    item = runtime.store.get(ADA, "city")
    hits = runtime.store.search(("users",), query="city")
    seen = item.value["city"] if item else "-"
    runtime.store.put(ADA, "last_seen", {"city": seen})
    return {"seen": f"{seen}|{len(hits)}"}


async def _aread(state: S, runtime: Runtime) -> dict[str, Any]:
    assert runtime.store is not None
    item = await runtime.store.aget(ADA, "city")
    return {"seen": item.value["city"] if item else "-"}


def _graph(node: Any = _read) -> StateGraph[S]:
    g: StateGraph[S] = StateGraph(S)
    g.add_node("start", _start)
    g.add_node("read", node)
    g.add_edge(START, "start")
    g.add_edge("start", "read")
    g.add_edge("read", END)
    return g


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest) -> Iterator[BaseCheckpointSaver[Any]]:
    if request.param == "memory":
        yield InMemorySaver()
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(":memory:", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


class _RealClock:
    """Advancing is a no-op: the checkpointer stamps with the wall clock, so the
    store uses it too (the default ``system_clock``)."""

    def advance(self, **_: float) -> None:
        import time

        time.sleep(0.002)


def _history(
    store: ChronomemStore, saver: BaseCheckpointSaver[Any], clock: _RealClock
) -> tuple[Any, dict[str, Any]]:
    """Run 1 sees Paris; memory then moves to Berlin; returns the graph and the
    config of run 1's checkpoint before "read"."""
    graph = _graph().compile(store=store, checkpointer=saver)
    store.put(ADA, "city", {"city": "Paris"})
    clock.advance(seconds=5)
    run1 = {"configurable": {"thread_id": "t1"}}
    assert graph.invoke({}, run1)["seen"] == "Paris|1"
    clock.advance(seconds=5)
    store.put(ADA, "city", {"city": "Berlin"})
    clock.advance(seconds=5)
    before = next(s for s in graph.get_state_history(run1) if s.next == ("read",))
    return graph, before.config


def test_replay_reads_memory_of_its_checkpoint_and_a_normal_run_reads_today(
    url: str | None, saver: BaseCheckpointSaver[Any]
) -> None:
    store = ChronomemStore(url, pin_reads="checkpoint")
    try:
        clock = _RealClock()
        graph, before = _history(store, saver, clock)
        assert graph.invoke(None, before)["seen"] == "Paris|1"  # the memory of that moment
        # today: Berlin, and the search also finds the item run 1 wrote after it searched
        assert graph.invoke({}, {"configurable": {"thread_id": "t2"}})["seen"] == "Berlin|2"
        assert graph.invoke({}, {"configurable": {"thread_id": "t1"}})["seen"] == "Berlin|2"
        # the replay wrote in the present, tagged with the checkpoint it forked from
        facts = store.memory.facts(subject=keys.subject(ADA, "last_seen"), exact=True)
        forked = [f for f in facts if f.metadata.get("langgraph_fork")]
        assert forked == []  # the latest normal run wrote last: Berlin, untagged
        all_versions = store.memory.facts(
            subject=keys.subject(ADA, "last_seen"), exact=True, states=["live", "ended"]
        )
        tags = [
            f.metadata["langgraph_fork"] for f in all_versions if "langgraph_fork" in f.metadata
        ]
        assert tags == [
            {"thread_id": "t1", "checkpoint_id": before["configurable"]["checkpoint_id"]}
        ]
        assert store.get(ADA, "city").value == {"city": "Berlin"}  # type: ignore[union-attr]
    finally:
        store.close()


def test_off_by_default_a_replay_reads_today(url: str | None) -> None:
    store = ChronomemStore(url)
    try:
        graph, before = _history(store, InMemorySaver(), _RealClock())
        assert graph.invoke(None, before)["seen"] == "Berlin|2"
    finally:
        store.close()


def test_the_replay_is_pinned_by_the_checkpointer_given_and_refused_when_it_lacks_it(
    url: str | None,
) -> None:
    saver = InMemorySaver()
    store = ChronomemStore(url, pin_reads="checkpoint", checkpointer=saver)
    other = ChronomemStore(store.memory, pin_reads="checkpoint", checkpointer=InMemorySaver())
    try:
        graph, before = _history(store, saver, _RealClock())
        assert graph.invoke(None, before)["seen"] == "Paris|1"
        lost = _graph().compile(store=other, checkpointer=saver)
        with pytest.raises(PinUnavailable):
            lost.invoke(None, before)
    finally:
        store.close()


def test_pin_reads_refuses_an_unknown_mode() -> None:
    with pytest.raises(InvalidInput):
        ChronomemStore(pin_reads="latest")


async def test_async_replay_is_pinned(url: str | None) -> None:
    saver = InMemorySaver()
    store = ChronomemStore(url, pin_reads="checkpoint")
    try:
        graph = _graph(_aread).compile(store=store, checkpointer=saver)
        await store.aput(ADA, "city", {"city": "Paris"})
        run1 = {"configurable": {"thread_id": "a1"}}
        assert (await graph.ainvoke({}, run1))["seen"] == "Paris"
        _RealClock().advance()
        await store.aput(ADA, "city", {"city": "Berlin"})
        states = [s async for s in graph.aget_state_history(run1) if s.next == ("read",)]
        (before,) = states
        assert (await graph.ainvoke(None, before.config))["seen"] == "Paris"
        assert (await graph.ainvoke({}, {"configurable": {"thread_id": "a2"}}))["seen"] == "Berlin"
    finally:
        store.close()


def test_reads_are_logged_with_thread_and_checkpoint(url: str | None) -> None:
    saver = InMemorySaver()
    store = ChronomemStore(url, pin_reads="checkpoint", read_log=True)
    try:
        graph, before = _history(store, saver, _RealClock())
        graph.invoke(None, before)
        replayed = store.memory.reads(tag={"fork_of": before["configurable"]["checkpoint_id"]})
        assert replayed and all(r.tag["thread"] == "t1" and r.tag["checkpoint"] for r in replayed)
        first = store.memory.reads(tag={"thread": "t1"})
        assert {r.tag.get("fork_of") for r in first} == {
            None,
            before["configurable"]["checkpoint_id"],
        }
        # the replay's reads were served at the checkpoint: Paris, then and now on replay
        knew = store.memory.served(tag={"fork_of": before["configurable"]["checkpoint_id"]})
        cities = {
            (item_value(i.then) or {}).get("city")
            for i in knew.items
            if i.then is not None and i.then.predicate == keys.DOC
        }
        assert cities == {"Paris"}
        for r in replayed:
            store.memory.replay(r.id)  # replayable
    finally:
        store.close()


@pytest.mark.parametrize("flag", [[], ["--sqlite"]])
def test_time_travel_example(flag: list[str]) -> None:
    out = run_example("langgraph_time_travel.py", *flag)
    assert ("SqliteSaver" if flag else "InMemorySaver") in out
    assert "run 1:               mushroom risotto (diet: vegetarian)" in out
    assert "run 2 (today):       grilled sea bass (diet: pescatarian)" in out
    assert "replay of run 1:     mushroom risotto (diet: vegetarian)" in out
    assert "replay wrote:        mushroom risotto (tagged with its checkpoint: True)" in out
    assert "last_dish now:       mushroom risotto" in out
    assert "thread ada-1 was served diet: vegetarian\n" in out
    assert "thread ada-2 was served diet: pescatarian\n" in out
