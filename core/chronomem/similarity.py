"""How close a query is to given fact versions: ``Memory.similarities``.

Search ranks (its vector leg returns the nearest versions, fused with the
lexical and entity legs); a caller that must report a similarity for versions
search did not return (LangGraph's ``SearchItem.score`` is the cosine of the
query to every item a namespace search reaches, negative included) asks here:
the query is embedded once, as search embeds it (``embed_query`` when the
embedder has one), and compared with the vectors the store keeps for those
versions. The read goes through the backend like every other read. Given what a
search within a prefix held (``Held``: its query's vector and the rows it read,
each with its stored vector; ``Memory.search_scored``'s ``ScoredHits.held``),
the versions among those rows need no read and the query no embedding: the same
vector bytes and the same arithmetic (``cosine``), so the same floats."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from sqlalchemy import select

from .batching import chunks
from .embedding import Embedder, embed_query_checked
from .engine import Engine
from .errors import InvalidType
from .model import Held
from .schema import vectors


def cosine(blob: Any, q: np.ndarray, qn: float) -> float | None:
    """The cosine of a stored vector (little-endian float32 bytes) to ``q``
    (float64, of norm ``qn``), in float64; None when the dimensions differ."""
    v = np.frombuffer(blob, dtype="<f4").astype(np.float64)
    if v.shape != q.shape:
        return None
    vn = float(np.linalg.norm(v))
    return float(v @ q) / (vn * qn) if vn else 0.0


def similarities(
    engine: Engine,
    tenant: str,
    embedder: Embedder,
    query: str,
    version_ids: Iterable[str],
    held: Held | None = None,
) -> dict[str, float]:
    """The cosine similarity of ``query`` to each version's stored embedding, by
    version id, in [-1, 1]. A version without an embedding (or of another
    dimension) is left out; a zero vector has similarity 0. ``held``: a search's
    rows (of the same query), the versions among them answered from their held
    vectors, the rest read."""
    if not isinstance(query, str):
        raise InvalidType(f"query must be a str, not {type(query).__name__}")
    if isinstance(version_ids, str):
        raise InvalidType("version_ids must be a collection of version ids, not a str")
    ids = sorted(set(version_ids))
    if not ids:
        return {}
    if held is not None and held.query != query:
        held = None
    base = embed_query_checked(embedder, query) if held is None else held.vector
    q = base.astype(np.float64)
    qn = float(np.linalg.norm(q)) or 1.0
    out: dict[str, float] = {}
    rest = ids
    if held is not None:
        rest = []
        rows = held.rows
        for vid in ids:
            row = rows.get(vid)
            if row is None or "_vec" not in row:
                rest.append(vid)
            elif (blob := row["_vec"]) is not None and (c := cosine(blob, q, qn)) is not None:
                out[vid] = c
    if not rest:
        return out
    with engine.backend.read() as conn:
        for chunk in chunks(rest):
            rows_read = conn.execute(
                select(vectors.c.item_id, vectors.c.vec).where(
                    vectors.c.tenant == tenant,
                    vectors.c.kind == "v",
                    vectors.c.item_id.in_(chunk),
                )
            )
            for item_id, blob in rows_read:
                c = cosine(blob, q, qn)
                if c is not None:
                    out[item_id] = c
    return out
