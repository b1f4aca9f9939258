"""Hybrid temporal retrieval (docs/design.md §6): lexical, vector and entity-graph legs
with the temporal predicate inside each, fused by reciprocal rank."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..embedding import Embedder, HashingEmbedder
from ..errors import InvalidType
from ..schema import has_pgvector
from .cache import MirrorSet
from .indexing import Indexer, check_embedder, mismatch_error
from .rerank import Reranker
from .search import Hit, Retrieval, SearchFailed, SearchResult, search

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["Hit", "Reranker", "Retrieval", "SearchFailed", "SearchResult", "attach", "search"]


def attach(mem: Memory, embedder: Any = None, *, reembed: bool = False) -> Retrieval:
    """Give a store its embedder, vector indexer and mirrors (called on open)."""
    emb = embedder if embedder is not None else HashingEmbedder()
    if not isinstance(emb, Embedder):
        raise InvalidType(
            "embedder must have name, dim and embed(texts) (chronomem.embedding.Embedder)"
        )
    sh = mem._shared
    with sh.backend.write() as conn:
        stored = check_embedder(conn, emb)
        if stored is not None and not reembed:
            raise mismatch_error(stored, emb)
        pgvector = has_pgvector(conn)
        if pgvector:
            from .pgvector import ensure_column

            ensure_column(conn, emb.dim)
    r = Retrieval(emb, Indexer(emb, pgvector=pgvector), MirrorSet(emb.dim), pgvector=pgvector)
    sh.extensions["retrieval"] = r
    sh.extensions["vector_cache"] = r.mirrors
    sh.hooks.append(r.indexer.on_versions)
    sh.episode_hooks.append(r.indexer.on_episodes)
    if stored is not None:
        from .reembed import reembed_all

        reembed_all(mem, r)
    return r
