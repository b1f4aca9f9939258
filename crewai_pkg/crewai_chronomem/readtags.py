"""What a CrewAI read is tagged with in the served-read log (``read_log=True``).

CrewAI hands a memory's ``recall`` only the query (the task's description)
and a limit; who is asking is in CrewAI's context variables, read here:

- ``run``: the kickoff's execution id (``crewai.execution.get_execution_uuid``,
  CrewAI's ``kickoff_id``), shared by every task of one ``crew.kickoff()``;
- ``task``: the id of the task being executed (``crewai.context.get_current_task_id``:
  ``str(task.id)``);
- ``source``: the ``source`` a recall was given (CrewAI's provenance filter).

The agent's role reaches a memory only with saves (``remember_many(...,
agent_role=...)``), never with a read, so it is not in the tag. The
precedence and the switch are ``chronomem_adapters.readtags``'s."""

from __future__ import annotations


def crewai_tag(source: str | None = None) -> dict[str, str | None]:
    from crewai.context import get_current_task_id
    from crewai.execution import get_execution_uuid

    return {"run": get_execution_uuid(), "task": get_current_task_id(), "source": source}
