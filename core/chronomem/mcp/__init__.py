"""``chronomem mcp``: chronomem's memory for any MCP client (needs ``chronomem[mcp]``).

``build_server(memory)`` returns a fastmcp server whose tools (``TOOL_NAMES``)
take every instant as ISO 8601 and answer with both clocks and the state of
each fact, as structured content and as text; ``chronomem mcp`` serves it over
stdio (default) or streamable HTTP on 127.0.0.1. Modules: ``arguments`` (checks
and bounds), ``tools`` (what each tool does), ``rendering`` (what it returns),
``auth`` (bearer tokens mapped to scopes), ``server`` (the fastmcp wiring)."""

from __future__ import annotations

from .arguments import MAX_K, MAX_NAME, MAX_TEXT, ArgumentError
from .server import TOOL_NAMES, build_server
from .tools import MemoryTools

__all__ = [
    "MAX_K",
    "MAX_NAME",
    "MAX_TEXT",
    "TOOL_NAMES",
    "ArgumentError",
    "MemoryTools",
    "build_server",
]
