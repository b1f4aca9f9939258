"""chronomem for LlamaIndex: bitemporal agent memory with time travel.

- ``ChronomemMemory`` — the ``BaseMemory`` an agent is given
  (``FunctionAgent.run(..., memory=ChronomemMemory.from_defaults(memory=mem, session_id=...))``);
- ``ChronomemMemoryBlock`` — a block for LlamaIndex's own ``Memory``;
- ``ChronomemRetriever`` — a ``BaseRetriever`` over facts, one node per fact version;
- ``embedder_from`` — a LlamaIndex ``BaseEmbedding`` as the store's embedder;
- ``LlamaIndexExtractor`` — fact extraction by a LlamaIndex ``LLM``.

See the package README."""

from __future__ import annotations

from .block import ChronomemMemoryBlock
from .embeddings import embedder_from
from .extraction import LlamaIndexExtractor
from .memory import ChronomemMemory
from .retriever import ChronomemRetriever

__all__ = [
    "ChronomemMemory",
    "ChronomemMemoryBlock",
    "ChronomemRetriever",
    "LlamaIndexExtractor",
    "embedder_from",
]
