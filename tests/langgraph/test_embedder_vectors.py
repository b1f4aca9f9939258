"""What ``embed_documents`` returns becomes the same float32 matrix, bit for bit, as
``np.asarray(vectors, dtype=np.float32)`` made of it (or the same refusal): the
conversion the store made before it packed the numbers itself."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronomem import InvalidInput
from langgraph.store.chronomem import LangChainEmbedder

numbers = st.one_of(
    st.floats(width=64),  # NaNs and infinities too
    st.floats(width=32).map(np.float32),
    st.floats().map(np.float64),
    st.sampled_from(["1.5", "-2e3", "nan"]),  # asarray parses numeric strings
    st.integers(min_value=-(2**60), max_value=2**60),
    st.booleans(),
)
rows = st.integers(1, 6).flatmap(
    lambda dim: st.tuples(
        st.just(dim),
        st.lists(st.lists(numbers, min_size=dim, max_size=dim), min_size=1, max_size=5),
    )
)


pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")


def _model(vectors: Any) -> np.ndarray:
    return np.asarray(vectors, dtype=np.float32)


@given(case=rows)
@settings(max_examples=300)
def test_documents_become_the_asarray_matrix(case: tuple[int, list[list[Any]]]) -> None:
    dim, vectors = case
    e = LangChainEmbedder(lambda texts: vectors, dim)
    got = e.embed([f"t{i}" for i in range(len(vectors))])
    want = _model(vectors)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize(
    "vectors",
    [
        [[1.0, 2.0], [3.0]],  # ragged
        [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]],  # another dimension
        [[1.0, 2.0]],  # too few rows
        [[1.0, "x"], [1.0, 2.0]],  # not a number
    ],
)
def test_wrong_documents_are_refused(vectors: list[list[Any]]) -> None:
    e = LangChainEmbedder(lambda texts: vectors, 2)
    with pytest.raises((InvalidInput, ValueError)):
        e.embed(["a", "b"])


@given(case=rows)
@settings(max_examples=300)
def test_a_query_becomes_the_asarray_vector(case: tuple[int, list[list[Any]]]) -> None:
    """``embed_query``'s list is packed as ``embed``'s batch is (``_as_vector``): the
    same float32 vector, bit for bit, as ``np.asarray`` made of it."""
    dim, vectors = case
    for vector in vectors:
        e = LangChainEmbedder(lambda texts, v=vector: [v for _ in texts], dim)
        got = e.embed_query("q")
        want = _model(vector)
        assert got.dtype == np.float32 and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
