"""The shared conformance kit, run against the MCP server's tools on SQLite and
PostgreSQL (every request a tool call through fastmcp's ``Client``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem import Memory
from chronomem_adapters.conformance import ConformanceTests, KitClock

from .harness import MCPHarness


class TestMCPConformance(ConformanceTests):
    harness_class = MCPHarness

    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[MCPHarness]:
        root = Memory(url, clock=kit_clock)
        h = MCPHarness(root, kit_clock)
        try:
            yield h
        finally:
            h.close()
            root.close()
