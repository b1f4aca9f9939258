"""``SearchItem.score`` as LangGraph's stores mean it: the cosine similarity of
the query to the item's best-matching indexed field.

chronomem's search finds the candidates (lexical, vector and entity legs fused
by reciprocal rank, the temporal predicate inside each leg); the score an item
reports is then the best cosine similarity between the query's embedding and
the stored embeddings of the item's index entries that the search returned
(the same vectors the vector leg ranks, from ``cm_vectors``). Identical texts
have identical vectors, so they get identical scores. Items are ordered by that
score, ties by the fused relevance (``score="fused"`` on the store reports and
orders by the fused score instead)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from sqlalchemy import select

from chronomem import Memory
from chronomem.batching import chunks
from chronomem.embedding import embed_query_checked
from chronomem.schema import vectors

SCORE_MODES = ("cosine", "fused")
DIGITS = 6  # scores are rounded: the same text scores the same whatever the float noise


def leg_cosine(explain: Mapping[str, Any]) -> float | None:
    """The cosine the search's fact vector leg already computed for a hit (its
    query embedding, the stored vector), when that leg returned the hit."""
    leg = (explain.get("legs") or {}).get("fact_vector")
    if not leg or leg.get("score") is None:
        return None
    return round(float(leg["score"]), DIGITS)


def cosines(memory: Memory, query: str, version_ids: Iterable[str]) -> dict[str, float]:
    """The cosine similarity of ``query`` to each version's stored embedding
    (a version without one is left out). Embeds the query: only for hits the
    vector leg did not return (``leg_cosine``)."""
    ids = sorted(set(version_ids))
    if not ids:
        return {}
    embedder = memory.embedder
    q = embed_query_checked(embedder, query).astype(np.float64)
    qn = float(np.linalg.norm(q)) or 1.0
    out: dict[str, float] = {}
    tenant = memory.scope.tenant
    with memory.backend.read() as conn:
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
                out[item_id] = round(float(v @ q) / (vn * qn), DIGITS) if vn else 0.0
    return out
