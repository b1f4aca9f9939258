"""LangChain's own standard tests (``langchain-tests``) for the retriever, on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from chronomem import Memory
from langchain_chronomem import ChronomemRetriever

from ..conftest import ManualClock

PETS = ["cat", "dog", "parrot", "hamster", "tortoise"]


class TestChronomemRetrieverStandard(RetrieversIntegrationTests):
    """The standard suite builds retrievers from ``retriever_constructor_params``;
    the memory behind them is filled once per test (five ``has`` facts about ada)."""

    @pytest.fixture(autouse=True)
    def _memory(self, url: str | None, clock: ManualClock) -> Iterator[None]:
        root = Memory(url, clock=clock)
        self._mem = root.scoped(user="standard")
        for pet in PETS:
            self._mem.remember("ada", "has", pet)
        try:
            yield
        finally:
            root.close()

    @property
    def retriever_constructor(self) -> type[ChronomemRetriever]:
        return ChronomemRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self._mem}

    @property
    def retriever_query_example(self) -> str:
        return "what pets does ada have"
