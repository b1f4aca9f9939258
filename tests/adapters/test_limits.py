"""One documented upper bound on ``k`` across the adapters (issue #29):
``chronomem_adapters.limits.MAX_K``; CrewAI's is checked in tests/crewai/test_limits.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chronomem import Memory
from chronomem_adapters.limits import MAX_K


def langchain_retriever(memory: Memory, k: int) -> Any:
    from langchain_chronomem import ChronomemRetriever

    return ChronomemRetriever(memory=memory).invoke("x", k=k)


def langchain_middleware(memory: Memory, k: int) -> Any:
    from langchain_chronomem import ChronomemMiddleware

    return ChronomemMiddleware(memory, k=k)


def llamaindex_retriever(memory: Memory, k: int) -> Any:
    from llama_index.memory.chronomem import ChronomemRetriever

    return ChronomemRetriever(memory, k=k)


def llamaindex_memory(memory: Memory, k: int) -> Any:
    from llama_index.memory.chronomem import ChronomemMemory

    return ChronomemMemory.from_defaults(memory=memory, recall_k=k)


def llamaindex_block(memory: Memory, k: int) -> Any:
    from llama_index.memory.chronomem import ChronomemMemoryBlock

    return ChronomemMemoryBlock(memory=memory, recall_k=k)


READS = [
    langchain_retriever,
    langchain_middleware,
    llamaindex_retriever,
    llamaindex_memory,
    llamaindex_block,
]


@pytest.mark.parametrize("read", READS, ids=[r.__name__ for r in READS])
def test_every_adapter_read_takes_max_k_and_refuses_more(
    read: Callable[[Memory, int], Any],
) -> None:
    memory = Memory()
    read(memory, MAX_K)
    with pytest.raises(ValueError, match=str(MAX_K)):
        read(memory, MAX_K + 1)


def test_the_block_without_a_store_says_so() -> None:
    from llama_index.memory.chronomem import ChronomemMemoryBlock

    with pytest.raises(ValueError, match="no chronomem store given") as info:
        ChronomemMemoryBlock(memory=None)
    assert "serialised" not in str(info.value)
