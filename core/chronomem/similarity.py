"""How close a query is to given fact versions: ``Memory.similarities``.

Search ranks (its vector leg returns the nearest versions, fused with the
lexical and entity legs); a caller that must report a similarity for versions
search did not return (LangGraph's ``SearchItem.score`` is the cosine of the
query to every item a namespace search reaches, negative included) asks here:
the query is embedded once, as search embeds it (``embed_query`` when the
embedder has one), and compared with the vectors the store keeps for those
versions. The read goes through the backend like every other read."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from sqlalchemy import select

from .batching import chunks
from .embedding import Embedder, embed_query_checked
from .engine import Engine
from .errors import InvalidType
from .schema import vectors


def similarities(
    engine: Engine, tenant: str, embedder: Embedder, query: str, version_ids: Iterable[str]
) -> dict[str, float]:
    """The cosine similarity of ``query`` to each version's stored embedding, by
    version id, in [-1, 1]. A version without an embedding (or of another
    dimension) is left out; a zero vector has similarity 0."""
    if not isinstance(query, str):
        raise InvalidType(f"query must be a str, not {type(query).__name__}")
    if isinstance(version_ids, str):
        raise InvalidType("version_ids must be a collection of version ids, not a str")
    ids = sorted(set(version_ids))
    if not ids:
        return {}
    q = embed_query_checked(embedder, query).astype(np.float64)
    qn = float(np.linalg.norm(q)) or 1.0
    out: dict[str, float] = {}
    with engine.backend.read() as conn:
        for chunk in chunks(ids):
            rows = conn.execute(
                select(vectors.c.item_id, vectors.c.vec).where(
                    vectors.c.tenant == tenant,
                    vectors.c.kind == "v",
                    vectors.c.item_id.in_(chunk),
                )
            )
            for item_id, blob in rows:
                v = np.frombuffer(blob, dtype="<f4").astype(np.float64)
                if v.shape != q.shape:
                    continue
                vn = float(np.linalg.norm(v))
                out[item_id] = float(v @ q) / (vn * qn) if vn else 0.0
    return out
