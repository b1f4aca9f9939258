"""What a LlamaIndex read is tagged with in the served-read log (``read_log=True``).

- ``session``: the conversation: ``ChronomemMemory``'s ``session_id``, the
  ``session_id`` LlamaIndex's ``Memory`` hands its blocks, or the session of
  the chronomem scope the retriever reads;
- ``run``: the workflow run the read is part of (an agent's ``run(...)``: the
  ``handler.run_id`` its ``WorkflowHandler`` reports), which LlamaIndex's
  workflow ``Context`` puts in the instrumentation tags as
  ``llamaindex.run_id`` for every step.

The precedence and the switch are ``chronomem_adapters.readtags``'s."""

from __future__ import annotations

from llama_index.core.instrumentation.dispatcher import active_instrument_tags

RUN_KEY = "llamaindex.run_id"


def workflow_run() -> str | None:
    """The running workflow's run id, or ``None`` outside a workflow."""
    value = (active_instrument_tags.get() or {}).get(RUN_KEY)
    return None if value is None or value == "" else str(value)


def llamaindex_tag(session: str | None) -> dict[str, str | None]:
    return {"run": workflow_run(), "session": session}
