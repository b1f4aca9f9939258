"""Any LangChain ``Embeddings`` object as chronomem's embedder.

``Memory(url, embedder=chronomem_embedder(OpenAIEmbeddings(...)))``: stored
texts go through ``embed_documents``, queries through ``embed_query``. The
dimension is probed once (or given as ``dim``) and recorded in the store with
the embedder's name; reopening the store with another model or dimension is
refused (``SchemaMismatch``) until it is re-embedded (``reembed=True``)."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from chronomem import InvalidType
from chronomem_adapters.embedders import CallableEmbedder

_MODEL_ATTRS = ("model", "model_name", "deployment", "model_id")


def embedder_name(embeddings: Embeddings) -> str:
    """``langchain/<class>[/<model>]``: what the store records to recognise the model."""
    name = f"langchain/{type(embeddings).__name__}"
    for attr in _MODEL_ATTRS:
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value:
            return f"{name}/{value}"
    return name


def chronomem_embedder(
    embeddings: Embeddings, *, name: str | None = None, dim: int | None = None
) -> CallableEmbedder:
    """Wrap a LangChain ``Embeddings`` for ``Memory(embedder=...)``."""
    if not isinstance(embeddings, Embeddings):
        raise InvalidType(
            f"embeddings must be a LangChain Embeddings, not {type(embeddings).__name__}"
        )
    return CallableEmbedder(
        embeddings.embed_documents,
        name=name or embedder_name(embeddings),
        embed_query=embeddings.embed_query,
        dim=dim,
    )
