"""Hybrid temporal retrieval (docs/design.md §6): lexical, vector and entity-graph legs
with the temporal predicate inside each, fused by reciprocal rank."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import backends
from ..embedding import Embedder, HashingEmbedder
from ..errors import InvalidType
from .cache import MirrorSet
from .indexing import Indexer, check_embedder, mismatch_error
from .rerank import Reranker
from .search import Hit, Retrieval, SearchFailed, SearchResult, search
from .staleness import RecordScore, lift_records

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = [
    "Hit",
    "RecordScore",
    "Reranker",
    "Retrieval",
    "SearchFailed",
    "SearchResult",
    "attach",
    "lift_records",
    "search",
]


def attach(engine: Engine, embedder: Any = None, *, reembed: bool = False) -> Retrieval:
    """Give a store its embedder, vector indexer and mirrors (called on open): the
    indexer hooks into every insert of versions and episodes, and a store that an
    earlier embedder indexed is refused (or, with ``reembed``, re-embedded)."""
    emb = embedder if embedder is not None else HashingEmbedder()
    if not isinstance(emb, Embedder):
        raise InvalidType(
            "embedder must have name, dim and embed(texts) (chronomem.embedding.Embedder)"
        )
    with engine.backend.write() as conn:
        stored = check_embedder(conn, emb)
        if stored is not None and not reembed:
            raise mismatch_error(stored, emb)
        backends.of(conn).tune_indexes(conn)
        pgvector = backends.of(conn).has_pgvector(conn)
        if pgvector:
            from .pgvector import ensure_column

            ensure_column(conn, emb.dim)
    mirrors = MirrorSet(emb.dim, with_vectors=not pgvector)  # pgvector ranks vectors in SQL
    r = Retrieval(emb, Indexer(emb, pgvector=pgvector), mirrors, pgvector=pgvector)
    engine.retrieval = r
    engine.hooks.append(r.indexer.on_versions)
    engine.episode_hooks.append(r.indexer.on_episodes)
    if stored is not None:
        from .reembed import reembed_all

        reembed_all(engine, r)
    return r
