"""The MCP server's row of the semantics table: what ``chronomem mcp``'s tools
(``chronomem.mcp``) keep, declared in the adapter vocabulary (core knows no
adapter vocabulary, so the declaration lives here). Importing it needs
``chronomem[mcp]``; without it the row reads "not installed"."""

from __future__ import annotations

from chronomem.mcp import TOOL_NAMES

from .declaration import declare
from .semantics import Semantic, TimeKeeping


@declare(
    [
        Semantic.CURRENT_VIEW,  # search and recall answer "now" unless given an instant
        Semantic.SUPERSESSION,
        Semantic.VALID_TIME,  # search(valid_at=…), search/recall(as_of=…)
        Semantic.TRANSACTION_TIME,  # search(known_at=…)
        Semantic.HISTORY,  # history: every value with its state
        Semantic.RETRACTION,  # forget/correct retract; history(include_retracted=true)
        Semantic.PROVENANCE,  # why(fact_id): the source episodes
        Semantic.TIME_IN_OUTPUT,  # every fact carries valid_from/valid_to/recorded_at
    ],
    as_of=TimeKeeping.PER_CALL,
    name="chronomem MCP server",
    notes={
        Semantic.ERASURE: "the server has no erase tool: irreversible deletion stays with "
        "the CLI and the Python API",
        Semantic.TRANSCRIPT: "remember stores each text as an episode; no tool reads a "
        "conversation back in order",
    },
)
class ChronomemMCP:
    """The tools ``chronomem mcp`` serves, as the semantics table and the
    conformance kit see them."""

    TOOLS = TOOL_NAMES
