"""``HashingEmbedder``'s one-text path (``_one``: a query, a single put) against a
reference: each word's features added in float32, one by one in order, then the
row made unit length (``normalize_rows``); and against the batch path's row.
The word table's spans stay in step with it when it is emptied."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import embedding
from chronomem.embedding import HashingEmbedder, _words, normalize_rows

WORDS = st.sampled_from(
    ["alice", "lives", "in", "paris", "gallery", "spring", "note", "a", "harbor", "ünïcode"]
)
TEXTS = st.lists(WORDS | st.text(max_size=8), max_size=12).map(" ".join)


def reference(e: HashingEmbedder, text: str) -> np.ndarray:
    """The features of each word of ``text``, added one at a time in float32."""
    out = np.zeros(e.dim, dtype=np.float32)
    for word in _words([text])[0]:
        idx, val = e._features(word)
        for i, v in zip(idx.tolist(), val.tolist(), strict=True):
            out[i] = np.float32(out[i] + np.float32(v))
    return normalize_rows(out.reshape(1, -1))[0]


@given(texts=st.lists(TEXTS, min_size=1, max_size=6))
def test_one_text_is_the_reference_and_the_batch_row(texts: list[str]) -> None:
    e = HashingEmbedder(dim=64)
    batch = HashingEmbedder(dim=64).embed(texts) if len(texts) > 1 else None
    for j, text in enumerate(texts):
        got = e.embed([text])[0]
        assert np.array_equal(got, reference(e, text))
        if batch is not None:
            assert np.array_equal(got, batch[j])


def test_one_text_after_the_table_is_emptied(monkeypatch: pytest.MonkeyPatch) -> None:
    """A table emptied to learn new words (``_MAX_WORDS``) embeds as a new one."""
    monkeypatch.setattr(embedding, "_MAX_WORDS", 5)
    e = HashingEmbedder(dim=64)
    texts = ["alpha beta", "gamma delta", "epsilon zeta eta", "alpha theta", "beta"]
    for _ in range(3):
        for text in texts:
            assert np.array_equal(e.embed([text])[0], HashingEmbedder(dim=64).embed([text])[0])
