"""The running LangGraph step, read once for every package that runs inside one.

``langgraph_pkg`` (the store: pinned reads, read tags) and ``langchain_pkg``
(the middleware and tools under ``create_agent``, retrievers in a graph node)
both ask "which run, thread and checkpoint is this?". The answer is read here,
from the same places, so both packages tag a read the same way:

- ``run``: the graph's run id (``ExecutionInfo.run_id``, else the config's
  ``run_id``, else its ``metadata["run_id"]``);
- ``thread``: ``ExecutionInfo.thread_id``, else ``configurable["thread_id"]``;
- ``checkpoint``: the checkpoint the step runs on (``ExecutionInfo.checkpoint_id``,
  else ``configurable["checkpoint_map"][""]``);
- ``fork_of``: the past checkpoint a replay or fork started from (the
  ``checkpoint_id`` the run was invoked with, which LangGraph copies into the
  config's ``metadata``);
- ``checkpointer``: the graph's checkpointer, when LangGraph hands it to the step.

LangGraph is imported only when asked (``current_step``): without it no graph
can be running, and the answer is ``None``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# LangGraph's key for the running graph's checkpointer in a step's config
# (langgraph._internal._constants.CONFIG_KEY_CHECKPOINTER)
CHECKPOINTER_KEY = "__pregel_checkpointer"


def _str(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


@dataclass(frozen=True)
class GraphStep:
    """What the running graph step says about itself."""

    run: str | None
    thread: str | None
    checkpoint: str | None
    fork_of: str | None
    checkpointer: Any = None


def read_step(config: Mapping[str, Any], info: object = None) -> GraphStep:
    """A step's identity from its ``RunnableConfig`` and, when LangGraph gives one,
    its runtime's ``ExecutionInfo`` (see the module docstring for the order)."""
    conf: Mapping[str, Any] = config.get("configurable") or {}
    meta: Mapping[str, Any] = config.get("metadata") or {}
    cmap = conf.get("checkpoint_map") or {}
    return GraphStep(
        run=_str(getattr(info, "run_id", None) or config.get("run_id") or meta.get("run_id")),
        thread=_str(getattr(info, "thread_id", None) or conf.get("thread_id")),
        checkpoint=_str(
            getattr(info, "checkpoint_id", None)
            or (cmap.get("") if isinstance(cmap, Mapping) else None)
        ),
        fork_of=_str(conf.get("checkpoint_id") or meta.get("checkpoint_id")),
        checkpointer=conf.get(CHECKPOINTER_KEY),
    )


def current_step() -> GraphStep | None:
    """The running LangGraph step, or ``None`` outside a graph run."""
    try:
        from langgraph.config import get_config
    except ImportError:  # langchain-core alone: no graph can be running
        return None
    try:
        config = get_config()
    except RuntimeError:  # not inside a graph run
        return None
    runtime = (config.get("configurable") or {}).get("__pregel_runtime")
    return read_step(config, getattr(runtime, "execution_info", None))
