"""Errors the CrewAI adapters raise beyond chronomem's own."""

from __future__ import annotations

from crewai.memory.storage.backend import EmbeddingDimensionMismatchError

from chronomem import ChronomemError, InvalidInput


class ReadOnlyView(ChronomemError, RuntimeError):
    """A write (remember, update, forget, reset, erase) was sent to an ``as_of`` view."""


class DimensionMismatch(InvalidInput, EmbeddingDimensionMismatchError):
    """A vector's dimension differs from the store's: CrewAI's
    ``EmbeddingDimensionMismatchError`` (what its LanceDB and Qdrant backends
    raise, with the same migration guidance) and a chronomem ``InvalidInput``."""

    def __init__(self, stored_dim: int, new_dim: int) -> None:
        EmbeddingDimensionMismatchError.__init__(self, stored_dim, new_dim)
