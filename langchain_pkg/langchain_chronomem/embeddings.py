"""Any LangChain ``Embeddings`` object as chronomem's embedder.

``Memory(url, embedder=chronomem_embedder(OpenAIEmbeddings(...)))``: stored
texts go through ``embed_documents``, queries through ``embed_query``. The
dimension is probed once (or given as ``dim``) and recorded in the store with
the embedder's name; reopening the store with another model or dimension is
refused (``SchemaMismatch``) until it is re-embedded (``reembed=True``)."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from chronomem import InvalidType
from chronomem_adapters.embedders import CallableEmbedder, model_embedder, model_identity


def embedder_name(embeddings: Embeddings) -> str:
    """``langchain/<class>[/<model>]``: what the store records to recognise the
    model (``chronomem_adapters.embedders.model_identity``, the rule every package
    follows)."""
    return model_identity(embeddings, "langchain")


def chronomem_embedder(
    embeddings: Embeddings, *, name: str | None = None, dim: int | None = None
) -> CallableEmbedder:
    """Wrap a LangChain ``Embeddings`` for ``Memory(embedder=...)``."""
    if not isinstance(embeddings, Embeddings):
        raise InvalidType(
            f"embeddings must be a LangChain Embeddings, not {type(embeddings).__name__}"
        )
    return model_embedder(
        embeddings,
        "langchain",
        embeddings.embed_documents,
        embed_query=embeddings.embed_query,
        dim=dim,
        name=name,
    )
