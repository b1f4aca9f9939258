"""LangChain integration for chronomem: a retriever with per-call time travel,
agent middleware, tools, a chat message history, an embeddings bridge and an
extractor built from a LangChain chat model. See the package README."""

from __future__ import annotations

from .embeddings import chronomem_embedder
from .extractor import chat_model_extractor
from .history import ChronomemChatMessageHistory
from .middleware import ChronomemMiddleware
from .retriever import ChronomemRetriever
from .tools import memory_tools

__all__ = [
    "ChronomemChatMessageHistory",
    "ChronomemMiddleware",
    "ChronomemRetriever",
    "chat_model_extractor",
    "chronomem_embedder",
    "memory_tools",
]
