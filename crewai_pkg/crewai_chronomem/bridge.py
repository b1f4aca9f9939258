"""A chronomem ``Embedder`` that reuses the vectors CrewAI already computed.

CrewAI's ``Memory`` embeds every record before ``StorageBackend.save`` and every
query before ``StorageBackend.search``; the storage receives vectors, never the
query text. ``VectorBridge`` lets chronomem index and search exactly those
vectors: the storage *stashes* them (per thread) around its call into chronomem,
and the bridge answers chronomem's ``embed``/``embed_query`` from the stash. A
text that was not stashed (a re-embed, a record saved without a vector) goes
to the ``fallback`` embedder (CrewAI's embedder or any callable, through the
shared ``CallableEmbedder``), or is refused with a clear error."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from chronomem import InvalidInput
from chronomem.embedding import normalize_rows

from .errors import DimensionMismatch

QUERY = "\u2063"  # what chronomem is asked to search for: no words, so only the vector leg runs


class VectorBridge:
    """``embed`` from stashed document vectors, ``embed_query`` from the stashed query."""

    def __init__(self, dim: int, *, fallback: object = None, name: str | None = None):
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise InvalidInput("dim must be a positive int")
        self.dim = dim
        self.fallback = fallback
        base = getattr(fallback, "name", None) or "vectors"
        self.name = name or f"crewai-{base}-{dim}"
        self._local = threading.local()

    def _check(self, vec: Sequence[float], what: str) -> list[float]:
        row = [float(x) for x in vec]
        if len(row) != self.dim:
            raise DimensionMismatch(self.dim, len(row))
        if not all(np.isfinite(row)):
            raise InvalidInput(f"{what} holds NaN or infinite values")
        return row

    @contextmanager
    def documents(self, vectors: Mapping[str, Sequence[float]]) -> Iterator[None]:
        stash = {t: self._check(v, f"the embedding of {t[:40]!r}") for t, v in vectors.items()}
        self._local.docs = stash
        try:
            yield
        finally:
            self._local.docs = {}

    @contextmanager
    def query(self, vector: Sequence[float]) -> Iterator[None]:
        self._local.query = self._check(vector, "the query embedding")
        try:
            yield
        finally:
            self._local.query = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        stash: dict[str, list[float]] = getattr(self._local, "docs", {}) or {}
        if all(t in stash for t in texts):
            return normalize_rows(np.asarray([stash[t] for t in texts], dtype=np.float32))
        if self.fallback is not None:
            rows = np.asarray(self.fallback.embed(list(texts)))  # type: ignore[attr-defined]
            if rows.ndim == 2 and rows.shape[1] != self.dim:
                raise DimensionMismatch(self.dim, int(rows.shape[1]))
            return normalize_rows(rows)
        raise InvalidInput(
            "no vector for a text and no embedder: give ChronomemStorage an embedder= "
            "(CrewAI's embedder or a callable) or save records with their embedding"
        )

    def embed_query(self, text: str) -> np.ndarray:
        q = getattr(self._local, "query", None)
        if text == QUERY and q is not None:
            return normalize_rows(np.asarray([q], dtype=np.float32))[0]
        if self.fallback is not None:
            return self.embed([text])[0]
        raise InvalidInput("a text query needs an embedder: give ChronomemStorage an embedder=")
