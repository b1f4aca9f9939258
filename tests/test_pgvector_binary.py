"""pgvector: the writer's vector rows store their embeddings from one binary
``real[]`` (``pgvector.stored_floats``, ``pgarrays.float4s``) instead of
one ``%.7g`` literal per vector that the client formatted and the server read
(a quarter of a LangGraph put's client time). The components stored are the
ones the literal gave: ``stored_floats`` is checked against the server's own
reading of the literals, and a store written through the writer holds, in every
row, exactly what the literal of its vector reads as."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text

from chronomem import Memory
from chronomem.retrieval import pgvector as pgv
from chronomem.retrieval.pgvector import stored_floats, vector_literal

from .conftest import ManualClock
from .statements import counting


def _vectors() -> np.ndarray:
    """Unit vectors (as embedders return them), a few with hard components:
    zeros of both signs, tiny and large values, float32 neighbours of decimal
    ties and of powers of ten."""
    rng = np.random.default_rng(11)
    v = rng.standard_normal((300, 64)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    hard = np.array(
        [0.0, -0.0, 1.0, -1.0, 0.1, 1e-15, 3.3e-9, 0.5, 0.25, 0.015625, 1 / 3, 5e5],
        dtype=np.float32,
    )
    nonzero = hard[hard != 0]
    near = np.concatenate(
        [np.nextafter(nonzero, np.float32(2)), np.nextafter(nonzero, np.float32(-2))]
    )
    v[0, : len(hard)] = hard
    v[1, : len(near)] = near
    return v


def _server_reads(url: str, vecs: np.ndarray) -> np.ndarray:
    """The float32 components the server stores for each row's literal."""
    eng = create_engine(url)
    try:
        with eng.connect() as conn:
            rows = conn.execute(
                text("SELECT CAST(CAST(e AS vector) AS real[]) FROM unnest(CAST(:es AS text[])) e"),
                {"es": [vector_literal(v) for v in vecs]},
            ).all()
    finally:
        eng.dispose()
    return np.array([r[0] for r in rows], dtype=np.float32)


def test_stored_floats_are_the_servers_reading_of_the_literals(pgvector_url: str) -> None:
    vecs = _vectors()
    got = stored_floats(vecs)
    assert got is not None
    want = _server_reads(pgvector_url, vecs)
    # bit for bit (zeros keep their sign)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_a_decimal_tie_is_left_to_the_literal() -> None:
    # 27 / 256 = 0.10546875: seven digits end on an exact half (ties to even)
    assert stored_floats(np.array([[27 / 256]], dtype=np.float32)) is None
    assert stored_floats(np.array([[np.inf]], dtype=np.float32)) is None


# components a sparse vector holds: zeros of both signs (most of them), ordinary
# values, and the ones refused or at an edge (ties, tiny, huge, non-finite)
_COMPONENT = st.one_of(
    st.just(0.0),
    st.just(-0.0),
    st.floats(-1.0, 1.0, width=32),
    st.sampled_from([27 / 256, 1e-15, 1e-17, 3.3e-9, 5e5, 2e6, np.inf, -np.inf, np.nan]),
    st.floats(width=32),
)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda dim: st.lists(
            st.lists(_COMPONENT, min_size=dim, max_size=dim), min_size=1, max_size=8
        )
    ),
    st.integers(0, 100),
)
def test_sparse_vectors_store_what_the_whole_array_computation_gives(
    rows: list[list[float]], zero_percent: int
) -> None:
    """``stored_floats`` of a mostly-zero batch (its nonzero components alone through
    ``_stored``) is what every component through ``_stored`` gives: the same
    float32 bits, zeros keeping their sign, and None for the same batches."""
    rng = np.random.default_rng(len(rows) * 101 + zero_percent)
    vecs = np.array(rows, dtype=np.float32)
    vecs[rng.random(vecs.shape) * 100 < zero_percent] = 0.0
    whole = pgv._stored(vecs.astype(np.float64))
    got = stored_floats(vecs)
    if whole is None:
        assert got is None
        return
    assert got is not None and got.shape == vecs.shape and got.dtype == np.float32
    assert np.array_equal(got.view(np.uint32), whole.view(np.uint32))


def test_a_sparse_batch_takes_the_nonzero_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hypothesis test above can only compare the two paths if the sparse one
    runs: a batch with fewer nonzero components than zeros sends only those."""
    seen: list[int] = []
    inner = pgv._stored
    monkeypatch.setattr(pgv, "_stored", lambda d: seen.append(d.size) or inner(d))
    v = np.zeros((3, 8), dtype=np.float32)
    v[:, 0] = [0.5, -0.25, 1 / 3]
    v[1, 1] = -0.0
    got = stored_floats(v)
    assert seen == [3]
    assert got is not None
    assert np.signbit(got[1, 1]) and got[1, 1] == 0
    assert stored_floats(np.zeros((2, 4), dtype=np.float32)) is not None
    assert seen == [3]  # all zeros: nothing to compute
    dense = np.full((2, 4), 0.5, dtype=np.float32)
    assert stored_floats(dense) is not None
    assert seen == [3, 8]


def _stored_against_literals(m: Memory, url: str) -> tuple[int, int]:
    """(rows, rows whose embedding is not what the server reads its vector's literal as)."""
    with m.backend.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT vec, CAST(embedding AS real[]) FROM cm_vectors WHERE tenant = :t"),
            {"t": m.scope.tenant},
        ).all()
    vecs = np.array([np.frombuffer(r[0], "<f4") for r in rows])
    stored = np.array([r[1] for r in rows], dtype=np.float32).view(np.uint32)
    want = _server_reads(url, vecs).view(np.uint32)
    return len(rows), int((stored != want).any(axis=1).sum())


def test_the_writer_sends_its_vectors_as_one_real_array(pgvector_url: str) -> None:
    m = Memory(pgvector_url, clock=ManualClock())
    try:
        with counting(m) as cost:
            m.remember_many(
                [
                    {"subject": f"user {i}", "predicate": "likes", "obj": f"thing {i}"}
                    for i in range(50)
                ]
            )
        inserts = [
            (s, p) for s, p in zip(cost.statements, cost.params, strict=True) if "cm_vectors" in s
        ]
        assert len(inserts) == 1
        sql, params = inserts[0]
        assert "real[]" in sql and "text_embedding" not in sql
        assert params["dim_embedding"] == m._retrieval.embedder.dim
        assert _stored_against_literals(m, pgvector_url) == (50, 0)
    finally:
        m.close()


def test_a_batch_refused_goes_in_as_literals(
    pgvector_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch ``stored_floats`` refuses (a decimal tie) is sent as literals, as before."""
    from chronomem.retrieval import pgvector as pgv

    monkeypatch.setattr(pgv, "stored_floats", lambda vecs: None)
    m = Memory(pgvector_url, clock=ManualClock())
    try:
        with counting(m) as cost:
            m.remember_many(
                [
                    {"subject": f"user {i}", "predicate": "likes", "obj": f"thing {i}"}
                    for i in range(20)
                ]
            )
        sql: Any = next(s for s in cost.statements if "cm_vectors" in s)
        assert "text[]" in sql and "real[]" not in sql
        assert _stored_against_literals(m, pgvector_url) == (20, 0)
    finally:
        m.close()
