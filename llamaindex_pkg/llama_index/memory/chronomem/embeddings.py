"""A LlamaIndex ``BaseEmbedding`` as chronomem's embedder.

``Memory(url, embedder=embedder_from(embed_model))``: documents go through
``get_text_embedding_batch``, queries through ``get_query_embedding`` (models
that embed queries differently keep doing so). The store records the model's
name (``llamaindex/<class>/<model_name>``, the rule every package follows; a
store that recorded the older ``llamaindex:<class>:<model_name>`` keeps opening);
reopening it with another model is refused until it is re-embedded (see
``chronomem_adapters.embedders``)."""

from __future__ import annotations

from llama_index.core.base.embeddings.base import BaseEmbedding

from chronomem import InvalidType
from chronomem_adapters.embedders import CallableEmbedder, model_embedder


def embedder_from(embed_model: BaseEmbedding, *, dim: int | None = None) -> CallableEmbedder:
    """Wrap ``embed_model`` (dimension probed once when not given)."""
    if not isinstance(embed_model, BaseEmbedding):
        raise InvalidType(
            f"embed_model must be a llama_index BaseEmbedding, not {type(embed_model).__name__}"
        )
    return model_embedder(
        embed_model,
        "llamaindex",
        embed_model.get_text_embedding_batch,
        embed_query=embed_model.get_query_embedding,
        dim=dim,
    )
