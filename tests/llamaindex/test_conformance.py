"""The shared conformance kit, run against the LlamaIndex memory and retriever on
SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem import Memory
from chronomem_adapters.conformance import ConformanceTests, KitClock
from llama_index.memory.chronomem.conformance import MemoryHarness, RetrieverHarness


class TestChronomemMemoryConformance(ConformanceTests):
    harness_class = MemoryHarness

    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[MemoryHarness]:
        root = Memory(url, clock=kit_clock)
        try:
            yield MemoryHarness(root, kit_clock)
        finally:
            root.close()


class TestChronomemRetrieverConformance(ConformanceTests):
    harness_class = RetrieverHarness

    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[RetrieverHarness]:
        root = Memory(url, clock=kit_clock)
        try:
            yield RetrieverHarness(root, kit_clock)
        finally:
            root.close()
