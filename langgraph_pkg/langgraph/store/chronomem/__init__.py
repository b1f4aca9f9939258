"""A LangGraph ``BaseStore`` backed by chronomem: bitemporal long-term memory.

from langgraph.store.chronomem import ChronomemStore

store = ChronomemStore("memory.db")
graph = builder.compile(store=store)
...
replay = builder.compile(store=store.as_of(yesterday))  # what memory held then
"""

from __future__ import annotations

from .embedder import LangChainEmbedder
from .errors import PinUnavailable, ReadOnlyView
from .filters import InvalidFilter
from .history import FieldVersion
from .records import item_value
from .store import ChronomemStore

__all__ = [
    "ChronomemStore",
    "FieldVersion",
    "InvalidFilter",
    "LangChainEmbedder",
    "PinUnavailable",
    "ReadOnlyView",
    "item_value",
]
