"""A synchronous handle on a real fastmcp ``Client``: its event loop runs in a
background thread, so plain (non-async) code — the conformance harness, the
subprocess tests — can call tools one after another over one MCP session."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from fastmcp import Client
from mcp.types import CallToolResult


class SyncClient:
    def __init__(self, target: Any, **client_kw: Any):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.client = Client(target, **client_kw)
        try:
            self._run(self.client.__aenter__())
        except BaseException:
            self._stop()
            raise

    def _run(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        """The raw result, errors included (``isError``), never an exception."""
        return self._run(self.client.call_tool_mcp(tool, arguments))  # type: ignore[no-any-return]

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The structured content of a call that must succeed."""
        r = self.call(tool, **arguments)
        assert not r.isError, f"{tool}({arguments}) failed: {r.content}"
        assert r.structuredContent is not None
        return r.structuredContent

    def text(self, result: CallToolResult) -> str:
        return "\n".join(getattr(c, "text", "") for c in result.content)

    def read(self, uri: str) -> Any:
        contents = self._run(self.client.read_resource(uri))
        return json.loads(contents[0].text)

    def tool_names(self) -> list[str]:
        return [t.name for t in self._run(self.client.list_tools())]

    def close(self) -> None:
        try:
            self._run(self.client.__aexit__(None, None, None))
        finally:
            self._stop()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
