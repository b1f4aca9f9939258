"""The vector rows the indexer writes for inserted versions (``Indexer.on_versions``):
each row's text is ``fact_text`` of it, and its blob is its row of the embedded
matrix as ``tobytes`` gives it (the matrix copied out once and sliced), for any
vectors and any mix of texts (an index text, none, blank)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronomem.embedding import embed_checked
from chronomem.retrieval import indexing

DIM = 5


class _Table:
    """An embedder that returns the vectors the test drew, one per text, in order."""

    name = "table"
    dim = DIM

    def __init__(self, table: dict[str, list[float]]):
        self.table = table

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray([self.table[t] for t in texts], dtype=np.float32)


class _Capture:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def insert_rows(self, conn: Any, table: Any, rows: list[dict[str, Any]]) -> None:
        self.rows += rows

    def after_insert_vectors(self, conn: Any, n: int) -> None:
        pass


texts = st.one_of(st.none(), st.sampled_from(["", "  ", "a", "b c", "a"]), st.text(max_size=6))
floats = st.floats(-1e6, 1e6, allow_nan=False, width=32)


@given(
    index_texts=st.lists(texts, min_size=1, max_size=12),
    vectors=st.lists(st.lists(floats, min_size=DIM, max_size=DIM), min_size=40, max_size=40),
)
@settings(max_examples=80, deadline=None)
def test_vector_rows_are_each_rows_bytes(
    index_texts: list[str | None], vectors: list[list[float]]
) -> None:
    rows = [
        {
            "tenant": "t",
            "id": f"v{i}",
            "index_text": t,
            "subject": f"s{i}",
            "predicate": "lives_in",
            "object": f"o{i % 3}",
        }
        for i, t in enumerate(index_texts)
    ]
    wanted = [indexing.fact_text(r) for r in rows]  # the reference: one call per row
    table = {t: vectors[n % len(vectors)] for n, t in enumerate(dict.fromkeys(wanted))}
    embedder = _Table(table)
    capture = _Capture()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(indexing, "of", lambda conn: capture)
        indexing.Indexer(embedder).on_versions(None, rows)  # type: ignore[arg-type]
    kept = [(r, t) for r, t in zip(rows, wanted, strict=True) if t.strip()]
    assert [v["item_id"] for v in capture.rows] == [r["id"] for r, _ in kept]
    if not kept:
        return
    expected = embed_checked(embedder, [t for _, t in kept])
    for got, want in zip(capture.rows, expected, strict=True):
        assert got["vec"] == np.ascontiguousarray(want, dtype="<f4").tobytes()
        assert type(got["vec"]) is bytes
        assert {k: got[k] for k in ("tenant", "kind", "embedder", "dim", "norm")} == {
            "tenant": "t",
            "kind": "v",
            "embedder": "table",
            "dim": DIM,
            "norm": 1.0,
        }
