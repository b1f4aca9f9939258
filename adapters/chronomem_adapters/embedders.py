"""Any framework's embedding model as a chronomem ``Embedder``.

LangChain ``Embeddings``, LlamaIndex ``BaseEmbedding`` and CrewAI embedder
callables all come down to "embed these documents" and, sometimes, "embed this
query". ``CallableEmbedder`` wraps those two callables; each adapter package
only says which methods to call and what the model is called. The dimension is
probed once when not given, and every answer's shape is checked by core
(``chronomem.embedding.embed_checked``), so a model that changes dimension is a
clear error, never a silently wrong index. The name is recorded in the store:
reopening a store with another model is refused until it is re-embedded
(docs/design.md §6)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from chronomem import InvalidInput, InvalidType
from chronomem.embedding import normalize_rows

EmbedDocuments = Callable[[list[str]], Sequence[Sequence[float]]]
EmbedQuery = Callable[[str], Sequence[float]]

PROBE = "dimension probe"


class CallableEmbedder:
    """``embed`` via ``embed_documents``; ``embed_query`` when the model has one."""

    def __init__(
        self,
        embed_documents: EmbedDocuments,
        *,
        name: str,
        embed_query: EmbedQuery | None = None,
        dim: int | None = None,
    ):
        if not callable(embed_documents):
            raise InvalidType("embed_documents must be callable")
        if embed_query is not None and not callable(embed_query):
            raise InvalidType("embed_query must be callable")
        if not isinstance(name, str) or not name:
            raise InvalidInput("an embedder needs a non-empty name (it is recorded in the store)")
        self._documents = embed_documents
        self._query = embed_query
        self.name = name
        if dim is None:
            probe = np.asarray(embed_documents([PROBE]), dtype=np.float32)
            if probe.ndim != 2 or probe.shape[0] != 1 or probe.shape[1] < 1:
                raise InvalidInput(f"embedder {name!r} returned shape {probe.shape} for one text")
            dim = int(probe.shape[1])
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            raise InvalidInput("dim must be a positive int")
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return normalize_rows(np.asarray(self._documents(list(texts)), dtype=np.float32))

    def __getattr__(self, attr: str) -> object:
        # ``embed_query`` exists only when the model has one: core then uses it.
        if attr == "embed_query" and self.__dict__.get("_query") is not None:
            return self.__dict__["_query"]
        raise AttributeError(attr)
