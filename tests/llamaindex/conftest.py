"""LlamaIndex tests run offline. llama-index-core and workflows send no telemetry
(checked in the installed sources); the global default model and embedder are
disabled, so anything that falls back to ``Settings.llm``/``embed_model`` gets
LlamaIndex's own mocks instead of reaching for the network."""

from __future__ import annotations

import pytest
from llama_index.core import Settings

from chronomem import Memory

Settings.llm = None
Settings.embed_model = None


@pytest.fixture
def store(memory: Memory) -> Memory:
    """The memory a LlamaIndex app hands the adapters: one user's (the root
    ``memory`` fixture, on every backend, closes it)."""
    return memory.scoped(user="ada")
