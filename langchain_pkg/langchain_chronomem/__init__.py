"""LangChain integration for chronomem: a retriever with per-call time travel,
agent middleware, tools, a chat message history, an embeddings bridge and an
extractor built from a LangChain chat model. See the package README."""

from __future__ import annotations

from .history import ChronomemChatMessageHistory
from .retriever import ChronomemRetriever

__all__ = ["ChronomemChatMessageHistory", "ChronomemRetriever"]
