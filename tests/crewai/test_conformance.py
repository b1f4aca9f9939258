"""The shared conformance kit, run against the CrewAI adapters on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem import Memory
from chronomem_adapters.conformance import BASE_SCOPE, ConformanceTests, KitClock
from crewai_chronomem import ChronomemStorage
from crewai_chronomem.conformance import (
    CrewAIMemoryHarness,
    CrewAIStorageHarness,
    kit_embedder,
)


class TestCrewAIMemoryConformance(ConformanceTests):
    harness_class = CrewAIMemoryHarness

    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[CrewAIMemoryHarness]:
        root = Memory(url, clock=kit_clock)
        try:
            yield CrewAIMemoryHarness(root, kit_clock)
        finally:
            root.close()


class TestCrewAIStorageConformance(ConformanceTests):
    harness_class = CrewAIStorageHarness

    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[CrewAIStorageHarness]:
        storage = ChronomemStorage(url, embedder=kit_embedder, clock=kit_clock, **BASE_SCOPE)
        try:
            yield CrewAIStorageHarness(storage, kit_clock)
        finally:
            storage.close()
