"""What a LangChain read is tagged with in the served-read log (``read_log=True``).

- ``run``: inside a LangGraph run (``create_agent``, a graph node) the graph's
  run id (``ExecutionInfo.run_id``: the ``run_id`` of the config the agent was
  invoked with, or the one LangChain generated); outside a graph, the run id
  the callback manager gave this retriever or tool call (a handler's
  ``on_retriever_start``/``on_tool_start`` sees the same id;
  ``retriever.invoke(q, run_id=R)`` chooses it: a retriever does not read
  ``config["run_id"]``);
- ``parent_run``: the run that called it (the callback manager's parent run:
  the chain around a retriever, the model node around the middleware's recall);
- ``thread`` and ``checkpoint``: the graph's thread id and the checkpoint the
  step runs on, when there is one.

The precedence and the switch are ``chronomem_adapters.readtags``'s; the
graph's run, thread and checkpoint are read by ``chronomem_adapters.graphconfig``."""

from __future__ import annotations

from typing import Any

from chronomem_adapters.graphconfig import current_step


def _str(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def graph_tag() -> dict[str, str | None]:
    """The running LangGraph step's run, thread and checkpoint, read as the
    LangGraph store reads them (``chronomem_adapters.graphconfig``); ``{}``
    outside a graph."""
    step = current_step()
    if step is None:
        return {}
    return {"run": step.run, "thread": step.thread, "checkpoint": step.checkpoint}


def run_tag(own: object = None, parent: object = None) -> dict[str, str | None]:
    """The tag of a call whose callback manager gave ``own`` (its run id) and
    ``parent`` (its parent run id)."""
    tag = graph_tag()
    if not tag.get("run"):
        tag["run"] = _str(own)
    tag["parent_run"] = _str(parent)
    return tag


def manager_tag(manager: Any) -> dict[str, str | None]:
    """The tag of a retriever call, from its ``CallbackManagerForRetrieverRun``."""
    return run_tag(getattr(manager, "run_id", None), getattr(manager, "parent_run_id", None))
