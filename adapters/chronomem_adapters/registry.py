"""The adapters chronomem ships, by import path (imported lazily: no framework is
imported until a row of the table or a test asks for it)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from .declaration import AdapterSpec, spec_of


@dataclass(frozen=True)
class AdapterEntry:
    """One row of the semantics table: a framework-facing adapter class."""

    label: str  # what the README row calls it
    distribution: str  # the package to install
    target: str  # "module:Class"

    def load(self) -> type:
        module, _, attr = self.target.partition(":")
        cls = getattr(importlib.import_module(module), attr)
        if not isinstance(cls, type):
            raise TypeError(f"{self.target} is not a class")
        return cls

    def spec(self) -> AdapterSpec | None:
        """The adapter's declaration, or ``None`` when its package is not installed."""
        try:
            cls = self.load()
        except ImportError:
            return None
        return spec_of(cls)


ADAPTERS: tuple[AdapterEntry, ...] = (
    AdapterEntry(
        "LangGraph store", "langgraph-store-chronomem", "langgraph.store.chronomem:ChronomemStore"
    ),
    AdapterEntry(
        "LangChain retriever", "langchain-chronomem", "langchain_chronomem:ChronomemRetriever"
    ),
    AdapterEntry(
        "LangChain chat history",
        "langchain-chronomem",
        "langchain_chronomem:ChronomemChatMessageHistory",
    ),
    AdapterEntry(
        "LangChain agent middleware",
        "langchain-chronomem",
        "langchain_chronomem:ChronomemMiddleware",
    ),
    AdapterEntry(
        "LlamaIndex memory",
        "llama-index-memory-chronomem",
        "llama_index.memory.chronomem:ChronomemMemory",
    ),
    AdapterEntry(
        "LlamaIndex retriever",
        "llama-index-memory-chronomem",
        "llama_index.memory.chronomem:ChronomemRetriever",
    ),
    AdapterEntry("CrewAI memory", "crewai-chronomem", "crewai_chronomem:ChronomemMemory"),
    AdapterEntry("CrewAI storage", "crewai-chronomem", "crewai_chronomem:ChronomemStorage"),
    AdapterEntry("MCP server", "chronomem[mcp]", "chronomem_adapters.mcp:ChronomemMCP"),
)
