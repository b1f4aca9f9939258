"""The reranker protocol (off by default).

A reranker reorders the fused hits, e.g. with a cross-encoder. No
cross-encoder can be had offline here (the bundled MiniLM is a bi-encoder),
so chronomem ships only the protocol; pass any object with ``rerank`` as
``Memory(..., reranker=...)`` or ``memory.set_reranker(...)``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .search import Hit


@runtime_checkable
class Reranker(Protocol):
    def rerank(self, query: str, hits: Sequence[Hit]) -> Sequence[Hit]:
        """Return the hits in a new order (a subset is allowed)."""
        ...
