"""CrewAI embedders (or any callable) as chronomem embedders.

CrewAI's ``Memory`` takes an embedder as a callable ``list[str] -> vectors``
(its ``build_embedder`` returns chromadb-style embedding functions, which are
such callables) or as an object with ``embed_documents``/``embed_query``.
``as_embedder`` wraps either in the shared ``CallableEmbedder``; a LangChain
``Embeddings`` (or LlamaIndex ``BaseEmbedding``) is named as every package names
it (``chronomem_adapters.embedders.model_identity``)."""

from __future__ import annotations

from typing import Any

from chronomem import InvalidType
from chronomem_adapters.embedders import CallableEmbedder, family_of, model_embedder


def _rows(result: Any) -> list[list[float]]:
    return [list(map(float, r.tolist() if hasattr(r, "tolist") else r)) for r in result]


def as_embedder(embedder: object, *, name: str | None = None) -> CallableEmbedder:
    """A CrewAI embedder, a LangChain-style object or a plain callable -> ``CallableEmbedder``."""
    if isinstance(embedder, CallableEmbedder):
        return embedder
    label = name or getattr(embedder, "name", None)
    family = family_of(embedder)
    if not isinstance(label, str) or not label:
        label = None if family else f"crewai-{type(embedder).__name__}"
    docs = getattr(embedder, "embed_documents", None)
    if callable(docs):
        query = getattr(embedder, "embed_query", None)
        return model_embedder(
            embedder,
            family or "crewai",
            lambda texts: _rows(docs(texts)),
            embed_query=(lambda text: _rows([query(text)])[0]) if callable(query) else None,
            name=label,
        )
    if callable(embedder):
        fn = embedder
        return CallableEmbedder(
            lambda texts: _rows(fn(texts)), name=label or f"crewai-{type(embedder).__name__}"
        )
    raise InvalidType(
        "embedder must be a CrewAI embedder, an object with embed_documents, or a callable "
        f"list[str] -> vectors; not {type(embedder).__name__}"
    )
