"""The shared conformance kit, run against the LangGraph store on both backends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem import Memory
from chronomem_adapters.conformance import ConformanceTests, KitClock
from langgraph.store.chronomem.conformance import LangGraphHarness


class TestLangGraphConformance(ConformanceTests):
    harness_class = LangGraphHarness

    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[LangGraphHarness]:
        root = Memory(url, clock=kit_clock)
        try:
            yield LangGraphHarness(root, kit_clock)
        finally:
            root.close()
