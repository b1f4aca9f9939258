"""The shared conformance kit, run against the CrewAI adapters on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem import Memory
from chronomem_adapters.conformance import ConformanceTests, KitClock
from crewai_chronomem.conformance import CrewAIMemoryHarness


class TestCrewAIMemoryConformance(ConformanceTests):
    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[CrewAIMemoryHarness]:
        root = Memory(url, clock=kit_clock)
        try:
            yield CrewAIMemoryHarness(root, kit_clock)
        finally:
            root.close()
