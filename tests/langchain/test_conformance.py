"""The shared conformance kit, run against each LangChain class on both backends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem import Memory
from chronomem_adapters.conformance import ConformanceTests, KitClock
from langchain_chronomem.conformance import HistoryHarness, MiddlewareHarness, RetrieverHarness


class TestRetrieverConformance(ConformanceTests):
    harness_class = RetrieverHarness

    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[RetrieverHarness]:
        root = Memory(url, clock=kit_clock)
        try:
            yield RetrieverHarness(root, kit_clock)
        finally:
            root.close()


class TestHistoryConformance(ConformanceTests):
    harness_class = HistoryHarness

    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[HistoryHarness]:
        root = Memory(url, clock=kit_clock)
        try:
            yield HistoryHarness(root, kit_clock)
        finally:
            root.close()


class TestMiddlewareConformance(ConformanceTests):
    harness_class = MiddlewareHarness

    @pytest.fixture
    def harness(self, url: str | None, kit_clock: KitClock) -> Iterator[MiddlewareHarness]:
        root = Memory(url, clock=kit_clock)
        try:
            yield MiddlewareHarness(root, kit_clock)
        finally:
            root.close()
