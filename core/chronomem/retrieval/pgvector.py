"""The vector legs on PostgreSQL with pgvector: an HNSW (cosine) index on
``cm_vectors.embedding``, queried with the temporal predicate and the scope in
the same SQL statement, and iterative index scans so a selective filter still
fills the top k (pgvector >= 0.8)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import (
    Connection,
    Integer,
    String,
    and_,
    bindparam,
    cast,
    literal_column,
    select,
    text,
)
from sqlalchemy.types import UserDefinedType

from ..backends import of
from ..prepared import ByShape, ShapedTerms
from ..schema import episodes, vectors, versions
from ..scope import Scope
from .legs import Ranking, TimeFilter, episode_leg_filters, fact_leg_filters


class Vector(UserDefinedType[Any]):
    """pgvector's ``vector`` type, for casts of bound parameters."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "vector"


# Below this many vectors in a tenant, order by an expression the HNSW index
# cannot serve: an exact scan is fast there, and exact means two ingests of one
# corpus rank identically. Above it, HNSW (approximate) keeps search fast.
EXACT_BELOW = 50_000


def vector_literal(v: np.ndarray) -> str:
    """``v`` as pgvector's text: each component ``%.7g`` (the same text as
    ``f"{x:.7g}"`` per component), by one ``%`` format of every component at once
    (a quarter faster than a format per component, itself a quarter faster than
    f-strings; a batch's vector rows format every component of every vector)."""
    return _literal_format(len(v)) % tuple(v.tolist())


@functools.cache
def _literal_format(dim: int) -> str:
    return "[" + ",".join(["%.7g"] * dim) + "]"


_POW10 = np.array([float(10**i) for i in range(23)])  # exact doubles, 1 to 1e22


def stored_floats(vecs: np.ndarray) -> np.ndarray | None:
    """The float32 components pgvector stores for ``vector_literal`` of each row of
    ``vecs`` (its input function reads each ``%.7g`` text with ``strtof``), computed
    in bulk without the text; None when some component is outside what the
    computation is exact for (the caller then sends the literals).

    Each component's value (and whether it is refused) depends on that component
    alone, and a zero is stored as given: when most components are zeros (a
    hashing embedder's vectors hold about one in nine nonzero) only the nonzero
    ones go through ``_stored``, the zeros copied with their sign (the same
    result as the whole array through it, a fifth of the work there)."""
    d = np.asarray(vecs, dtype=np.float64)
    flat = d.reshape(-1)
    nonzero = np.flatnonzero(flat)
    if 2 * len(nonzero) >= len(flat):
        return _stored(d)
    out = flat.astype(np.float32)  # the zeros as given (their sign too)
    if not len(nonzero):
        return out.reshape(d.shape)
    part = _stored(flat[nonzero])
    if part is None:
        return None
    out[nonzero] = part
    return out.reshape(d.shape)


def _stored(d: np.ndarray) -> np.ndarray | None:
    """``stored_floats`` of every component of ``d`` (float64), one by one in bulk.

    Per component ``x`` (|x| in [1e-16, 1e6); zeros are stored as given): ``%.7g``
    is ``m * 10**-k`` with ``m`` the integer nearest ``|x| * 10**k`` in [1e6, 1e7)
    (ties to even, on the exact value). ``10**k`` is an exact double (k <= 22), so
    the product is off by at most half an ulp (< 1.2e-9): ``rint`` is exact unless
    the product is within 2e-9 of a half, which is refused.
    ``m / 10**k`` is then the double nearest the decimal, and its float32 rounding is
    ``strtof``'s unless that double is exactly halfway between two float32s (a second
    rounding could then differ from the first), which is refused too. Checked
    against the server's own reading of the literals (tests/test_pgvector_binary)."""
    a = np.abs(d)
    zero = a == 0
    if not np.isfinite(a).all() or (a >= 1e6).any() or ((a < 1e-16) & ~zero).any():
        return None
    a = np.where(zero, 1.0, a)
    k = np.clip(6 - np.floor(np.log10(a)).astype(np.int64), 0, 22)
    q = a * _POW10[k]
    k += (q < 1e6).astype(np.int64) - (q >= 1e7).astype(np.int64)  # log10 off by one
    if k.min() < 0 or k.max() > 22:
        return None
    q = a * _POW10[k]
    # q off by less than 1.2e-9: a product that is really just past either end
    # rounds to the same decimal at the neighbouring exponent (9999999.99… up to
    # 1e7, the same value as 1e6 one exponent lower)
    if ((q < 1e6) | (q >= 1e7)).any() or (np.abs(q - np.floor(q) - 0.5) < 2e-9).any():
        return None
    g = np.rint(q) / _POW10[k]
    if ((g.view(np.uint64) & 0x1FFFFFFF) == 0x10000000).any():
        return None
    out = np.copysign(g, d).astype(np.float32)
    out[zero] = d[zero]
    return out


def ensure_column(conn: Connection, dim: int) -> None:
    """``embedding vector(dim)`` with an HNSW index; rebuilt when the dimension changes."""
    current = conn.execute(
        text(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'cm_vectors'::regclass "
            "AND attname = 'embedding' AND NOT attisdropped"
        )
    ).scalar()
    if current == dim:
        return
    if current is not None:
        conn.execute(text("DROP INDEX IF EXISTS cm_vectors_hnsw"))
        conn.execute(text("ALTER TABLE cm_vectors DROP COLUMN embedding"))
    conn.execute(text(f"ALTER TABLE cm_vectors ADD COLUMN embedding vector({int(dim)})"))
    conn.execute(
        text("CREATE INDEX cm_vectors_hnsw ON cm_vectors USING hnsw (embedding vector_cosine_ops)")
    )
    # Backfill from the float32 blobs (a store created before pgvector was installed).
    rows = conn.execute(
        select(vectors.c.tenant, vectors.c.kind, vectors.c.item_id, vectors.c.vec).where(
            vectors.c.dim == dim
        )
    ).all()
    if rows:
        write_embeddings(
            conn,
            [
                {
                    "t": r.tenant,
                    "k": r.kind,
                    "i": r.item_id,
                    "e": vector_literal(np.frombuffer(r.vec, "<f4")),
                }
                for r in rows
            ],
        )


_SET_EMBEDDINGS = text(
    "UPDATE cm_vectors AS v SET embedding = CAST(u.e AS vector) "
    "FROM unnest(CAST(:ids AS text[]), CAST(:es AS text[])) AS u(i, e) "
    "WHERE v.tenant = :t AND v.kind = :k AND v.item_id = u.i"
)


def write_vectors(
    conn: Connection, tenants: Sequence[str], kind: str, ids: Sequence[str], vecs: np.ndarray
) -> None:
    """``write_embeddings`` of each row of ``vecs`` (its ``vector_literal``) for the
    (tenant, ``kind``, id) rows. The writer's vector rows, still queued, of one
    tenant: their insert stores the components those literals are read as
    (``stored_floats``) from one binary ``real[]``, without the text (formatting
    it was a quarter of a LangGraph put's client time on pgvector)."""
    from ..backends.postgres import embed_in_queued_insert

    if tenants and all(t == tenants[0] for t in tenants):
        floats = stored_floats(vecs)
        if floats is not None and embed_in_queued_insert(
            conn, tenants[0], kind, ids, floats=floats
        ):
            return
    write_embeddings(
        conn,
        [
            {"t": t, "k": kind, "i": i, "e": vector_literal(v)}
            for t, i, v in zip(tenants, ids, vecs, strict=True)
        ],
    )


def write_embeddings(conn: Connection, params: list[dict[str, Any]]) -> None:
    """Set ``embedding`` of the given (tenant ``t``, kind ``k``, item ``i``) rows to
    ``e`` (a vector literal): one ``UPDATE … FROM unnest(…)`` per tenant and kind,
    not one statement per row."""
    from ..backends.postgres import embed_in_queued_insert

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in params:
        groups.setdefault((p["t"], p["k"]), []).append(p)
    for (tenant, kind), rows in groups.items():
        ids, es = [r["i"] for r in rows], [r["e"] for r in rows]
        # the writer's vector rows, still queued: inserted with their embedding
        if embed_in_queued_insert(conn, tenant, kind, ids, es):
            continue
        # queued behind the vector rows' insert when the writer queues (no round trip)
        of(conn).run_write(
            conn,
            _SET_EMBEDDINGS,
            {"t": tenant, "k": kind, "ids": ids, "es": es},
        )


# Both HNSW settings in one round trip (two ``SET LOCAL`` statements were two per
# vector leg): for the rest of the transaction, or (``is_local`` false) the session.
_SETTINGS = text(
    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', :local), "
    "set_config('hnsw.ef_search', '100', :local)"
)
_SESSION_SET = "chronomem_hnsw_settings"  # key in the pooled connection's ``info``


def _prepare(conn: Connection) -> None:
    """The HNSW settings the vector legs run with. In a transaction, for that
    transaction (``SET LOCAL``: nothing outlives it). Outside one (a search's
    autocommit read, ``Backend.statement_read``) a local setting would end with
    its own statement, so they are set for the session, once per pooled
    connection: no round trip on later searches. Only the vector legs read them
    (they configure HNSW index scans)."""
    if not of(conn).statement_at_a_time(conn):
        conn.execute(_SETTINGS, {"local": True})
        return
    info = conn.connection.info
    if not info.get(_SESSION_SET):
        conn.execute(_SETTINGS, {"local": False})
        info[_SESSION_SET] = True


# the vector legs' statements, compiled once per shape (table, filters, order)
_STATEMENTS = ByShape()


def _statement(tbl: Any, kind: str, terms: tuple[Any, ...], hnsw: bool) -> Any:
    """The leg's SELECT over named bind parameters: the query vector ``q`` (a
    vector literal), the ``tenant`` and the filters' own, and the cut ``vec_n``."""
    emb: Any = literal_column("cm_vectors.embedding")
    dist = emb.op("<=>")(cast(bindparam("q", type_=String()), Vector()))
    tiebreak = [
        tbl.c.content_hash,
        *([tbl.c.occurred_at] if "occurred_at" in tbl.c else []),
        tbl.c.id,
    ]
    # With HNSW, ordered by the distance alone, so the index can serve the order (an
    # ORDER BY with more keys cannot use it); the filters sit in the same query, so
    # the iterative index scan goes on until n rows pass them. Ties are ordered here.
    # Exact: the distance hidden from the index, then the tiebreak (a reproducible cut).
    order = [dist] if hnsw else [dist + 0, *tiebreak]
    return (
        select(tbl.c.id, dist.label("d"), tbl.c.content_hash, *tiebreak[1:])
        .select_from(
            vectors.join(tbl, and_(tbl.c.tenant == vectors.c.tenant, tbl.c.id == vectors.c.item_id))
        )
        .where(vectors.c.tenant == bindparam("tenant"), vectors.c.kind == kind, *terms)
        .order_by(*order)
        .limit(bindparam("vec_n", type_=Integer()))
    )


def _leg(
    conn: Connection,
    tbl: Any,
    kind: str,
    filters: ShapedTerms,
    q: np.ndarray,
    n: int,
    rows_in_tenant: int,
) -> Ranking:
    """The leg's ranking: its statement built and compiled once per shape of the
    filters (``ByShape``; built and compiled on every search, it cost more Python
    than the server's HNSW scan), this search's values bound."""
    _prepare(conn)
    hnsw = rows_in_tenant >= EXACT_BELOW
    key = ("vector", tbl.name, kind, hnsw, filters.shape)
    params = {**filters.params, "q": vector_literal(q), "vec_n": n}
    rows = _STATEMENTS.rows(conn, key, lambda: _statement(tbl, kind, filters.terms, hnsw), params)
    # Best first; equal distances ordered by content hash (reproducible across
    # ingests), then occurrence and id.
    rows = sorted(rows, key=lambda r: (float(r[1]), *r[2:]))
    return [(r[0], 1.0 - float(r[1])) for r in rows if float(r[1]) < 1.0]


def fact_leg(
    conn: Connection,
    scope: Scope,
    tf: TimeFilter,
    q: np.ndarray,
    n: int,
    *,
    subject_prefix: str | None = None,
    predicates: Sequence[str] | None = None,
    subject_key: str | None = None,
    rows_in_tenant: int = EXACT_BELOW,
) -> Ranking:
    filters = fact_leg_filters(
        scope, tf, subject_prefix=subject_prefix, predicates=predicates, subject_key=subject_key
    )
    return _leg(conn, versions, "v", filters, q, n, rows_in_tenant)


def episode_leg(
    conn: Connection,
    scope: Scope,
    tf: TimeFilter,
    q: np.ndarray,
    n: int,
    rows_in_tenant: int = EXACT_BELOW,
) -> Ranking:
    return _leg(conn, episodes, "e", episode_leg_filters(scope, tf), q, n, rows_in_tenant)
