"""The served-read log through the LangChain adapters: each read is tagged with the
LangChain run that made it (a retriever's callback-manager run, a tool's run, the
agent's run for the middleware's recall), and ``served(run=R)`` answers what the
agent knew in run R after a later correction and erasure."""

from __future__ import annotations

import uuid
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver

from chronomem import Memory
from langchain_chronomem import ChronomemMiddleware, ChronomemRetriever

from ..conftest import ManualClock
from .conftest import sqlite_only
from .fakes import ScriptedModel, call


@sqlite_only
def test_the_log_is_off_unless_asked(mem: Memory) -> None:
    mem.remember("ada", "lives_in", "Paris")
    ChronomemRetriever(memory=mem).invoke("where does ada live")
    assert mem.read_log is False and mem.reads() == []


class Runs(BaseCallbackHandler):
    """The retriever runs LangChain's callback manager started."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str | None]] = []

    def on_retriever_start(self, serialized: Any, query: str, **kw: Any) -> None:
        parent = kw.get("parent_run_id")
        self.started.append((str(kw["run_id"]), None if parent is None else str(parent)))


def test_a_retriever_read_is_tagged_with_its_run(mem: Memory) -> None:
    mem.remember("ada", "lives_in", "Paris")
    retriever = ChronomemRetriever(memory=mem, read_log=True)
    runs = Runs()
    docs = retriever.invoke("where does ada live", config={"callbacks": [runs]})
    ((run, parent),) = runs.started
    (read,) = mem.reads(run=run)
    assert read.op == "search" and read.args["query"] == "where does ada live"
    assert [i.id for i in read.items] == [d.id for d in docs] and docs
    assert parent is None and "parent_run" not in read.tag  # invoked directly
    given = uuid.uuid4()  # a run id the caller chose
    retriever.invoke("ada", run_id=given)
    assert len(mem.reads(run=str(given))) == 1
    # inside a chain: the retriever's own run, with the chain's run as its parent
    chain_run = uuid.uuid4()
    chained = (RunnableLambda(lambda q: q) | retriever).invoke(
        "where does ada live", config={"run_id": chain_run, "callbacks": [runs]}
    )
    inner_run, inner_parent = runs.started[-1]
    (inner,) = mem.reads(tag={"parent_run": str(chain_run)})
    assert inner.tag["run"] == inner_run and inner_parent == str(chain_run)
    assert [i.id for i in inner.items] == [d.id for d in chained]


async def test_an_async_retriever_read_is_tagged_too(mem: Memory) -> None:
    mem.remember("ada", "lives_in", "Paris")
    runs = Runs()
    docs = await ChronomemRetriever(memory=mem, read_log=True).ainvoke(
        "ada", config={"callbacks": [runs]}
    )
    ((run, _),) = runs.started
    (read,) = mem.reads(run=run)
    assert [i.id for i in read.items] == [d.id for d in docs] and docs


def test_an_enclosing_tag_wins(mem: Memory) -> None:
    mem.read_log = True  # a Memory(read_log=True) is honoured without read_log= on the adapter
    mem.remember("ada", "lives_in", "Paris")
    with mem.read_tag(run="incident-42"):
        ChronomemRetriever(memory=mem).invoke("ada", config={"run_id": uuid.uuid4()})
    (read,) = mem.reads()
    assert read.tag["run"] == "incident-42"


def test_an_agent_run_tags_recall_and_tool_reads_and_served_answers_for_it(
    mem: Memory, clock: ManualClock
) -> None:
    home = mem.remember("user", "lives_in", "Lisbon").fact_ids[0]
    diet = mem.remember("user", "diet", "vegan").fact_ids[0]
    model = ScriptedModel([call("search_memory", {"query": "user diet"}), "You are vegan."])
    mw = ChronomemMiddleware(mem, tools=True, read_log=True, record=False)
    agent = create_agent(model, tools=mw.tools, middleware=[mw], checkpointer=InMemorySaver())
    run = uuid.uuid4()
    agent.invoke(
        {"messages": [HumanMessage("Where do I live and what do I eat?")]},
        config={"run_id": run, "configurable": {"thread_id": "t1"}},
    )
    logged = mem.reads(run=str(run))
    assert [r.op for r in logged] == ["recall", "search", "recall"]  # model, tool, model
    assert all(r.tag["thread"] == "t1" and r.tag["checkpoint"] for r in logged)
    assert logged[0].tag["checkpoint"] != logged[2].tag["checkpoint"]  # one per step
    assert logged[1].args["query"] == "user diet"
    served = {i.id for r in logged for i in r.items}
    (lisbon,) = mem.facts(predicate="lives_in")
    (vegan,) = mem.facts(predicate="diet")
    assert served == {lisbon.version_id, vegan.version_id}
    assert "Lisbon" in str(model.seen[0])  # what the log says it served, the model was shown

    clock.advance(days=1)
    mem.correct(home, "Porto")
    mem.erase(diet)
    knew = mem.served(run=str(run))
    changes = {(it.then.object if it.then else None, it.change) for it in knew.items}
    assert ("Lisbon", "corrected") in changes and (None, "erased") in changes
    assert "vegan" not in knew.text() and "corrected to 'Porto'" in knew.text()
