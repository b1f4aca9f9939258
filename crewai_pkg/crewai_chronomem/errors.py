"""Errors the CrewAI adapters raise: chronomem's own (``ReadOnlyView``: a write
(remember, update, forget, reset, erase) sent to an ``as_of`` view)."""

from __future__ import annotations

from crewai.memory.storage.backend import EmbeddingDimensionMismatchError

from chronomem import InvalidInput, ReadOnlyView

__all__ = ["DimensionMismatch", "ReadOnlyView"]


class DimensionMismatch(InvalidInput, EmbeddingDimensionMismatchError):
    """A vector's dimension differs from the store's: CrewAI's
    ``EmbeddingDimensionMismatchError`` (what its LanceDB and Qdrant backends
    raise, with the same migration guidance) and a chronomem ``InvalidInput``."""

    def __init__(self, stored_dim: int, new_dim: int) -> None:
        EmbeddingDimensionMismatchError.__init__(self, stored_dim, new_dim)
