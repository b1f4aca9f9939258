"""The hashing embedder's vectors are byte for byte those of the plain word-by-word
sum (the model below), whatever the batch, the text or the state of its word table."""

from __future__ import annotations

import copy
import pickle
import re
import zlib
from collections.abc import Sequence
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from chronomem import embedding
from chronomem.embedding import HashingEmbedder, embed_checked


class ModelHashingEmbedder:
    """The definition: every word of the casefolded text (``\\w+``), then each trigram
    of ``<word>`` for words over three characters, CRC32-hashed to a bucket and a sign,
    added into a float32 row one feature at a time, in order; rows unit length."""

    def __init__(self, dim: int, trigram_weight: float = 0.35):
        self.dim = dim
        self.trigram_weight = trigram_weight

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.casefold()):
                feats = [(word, 1.0)]
                if len(word) > 3:
                    padded = f"<{word}>"
                    feats += [
                        ("#" + padded[i : i + 3], self.trigram_weight)
                        for i in range(len(padded) - 2)
                    ]
                for f, w in feats:
                    h = zlib.crc32(f.encode("utf-8", "surrogatepass"))
                    b = h % self.dim
                    out[row, b] = out[row, b] + np.float32(w if (h >> 31) & 1 == 0 else -w)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(out / norms, dtype=np.float32)


WORDS = ["alice", "Paris", "lives", "in", "ÉCOLE", "straße", "İstanbul", "a_b", "42", "x"]
word_texts = st.lists(st.sampled_from(WORDS), max_size=30).flatmap(
    lambda ws: st.sampled_from([" ", "  ", ", ", "\n", "\x00", "-"]).map(lambda sep: sep.join(ws))
)
texts = st.one_of(
    st.text(max_size=60),  # any unicode, surrogates included
    st.text(alphabet=st.characters(max_codepoint=127), max_size=60),  # ASCII, NULs too
    word_texts,  # words repeated within and across texts
    st.text(alphabet="ab c", min_size=500, max_size=3000),  # long: many equal features
)
batches = st.lists(st.lists(texts, max_size=12), min_size=1, max_size=4)


@given(batches=batches, dim=st.sampled_from([8, 64, 256]), table=st.sampled_from([3, 10, 10**6]))
@settings(max_examples=300)
def test_vectors_equal_the_word_by_word_model(
    batches: list[list[str]], dim: int, table: int
) -> None:
    """One embedder over several batches (its table grows, or empties when it would
    pass ``table`` words), as ``embed`` and as stored (``embed_checked``)."""
    model = ModelHashingEmbedder(dim)
    with mock.patch.object(embedding, "_MAX_WORDS", table):
        e = HashingEmbedder(dim)
        for batch in batches:
            want = model.embed(batch)
            got = e.embed(batch)
            assert got.dtype == np.float32 and got.shape == want.shape
            assert got.tobytes() == want.tobytes()
            if batch:
                stored = embed_checked(e, batch).tobytes()
                assert stored == embed_checked(ModelHashingEmbedder(dim), batch).tobytes()  # type: ignore[arg-type]


@given(
    text=texts,
    known=st.lists(texts, max_size=4),
    dim=st.sampled_from([8, 64, 256]),
    table=st.sampled_from([3, 10, 10**6]),
)
@settings(max_examples=300)
def test_one_text_is_embedded_as_the_model_embeds_it(
    text: str, known: list[str], dim: int, table: int
) -> None:
    """A batch of one (a query; ``embed``'s own path for it, ``_one``) gives the
    model's row, with its words new to the table or already in it, and as a row of
    a larger batch gives it."""
    with mock.patch.object(embedding, "_MAX_WORDS", table):
        e = HashingEmbedder(dim)
        e.embed(known)
        want = ModelHashingEmbedder(dim).embed([text])
        for _ in range(2):  # new words, then known ones
            got = e.embed([text])
            assert got.dtype == np.float32 and got.shape == (1, dim)
            assert got.tobytes() == want.tobytes()
        assert e.embed([text, *known])[:1].tobytes() == want.tobytes()


def test_a_batch_adds_its_features_in_one_call() -> None:
    """The features of a whole batch go into the rows in one ``np.add.at``, not one
    call per word (the word-by-word loop cost a write batch as much as SQLite did)."""
    e = HashingEmbedder()
    batch = [f"Alice {i} lives in Paris number {i}" for i in range(50)]
    e.embed(batch)  # the words are known
    with mock.patch.object(np.add, "at", wraps=np.add.at) as add_at:
        e.embed(batch)
    assert add_at.call_count == 1


def test_copies_and_pickles_embed_the_same() -> None:
    e = HashingEmbedder(64)
    text = ["Alice lives in Paris", "ÉCOLE straße"]
    want = e.embed(text).tobytes()
    assert copy.deepcopy(e).embed(text).tobytes() == want
    assert pickle.loads(pickle.dumps(e)).embed(text).tobytes() == want


@given(
    values=st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), max_size=300),
    scale=st.sampled_from([1e-30, 1e-3, 1.0, 1e3, 1e15]),
)
@settings(max_examples=300)
def test_a_query_vector_is_normalized_as_a_row(values: list[float], scale: float) -> None:
    """``embedding.unit`` (a query's vector, per search) gives ``normalize_rows``'s
    floats bit for bit, zero vectors and tiny or huge norms included."""
    with np.errstate(all="ignore"):  # a huge norm overflows alike in both
        v = (np.asarray(values, dtype=np.float32) * np.float32(scale)).astype(np.float32)
        got = embedding.unit(v)
        want = embedding.normalize_rows(v.reshape(1, -1))[0]
    assert got.dtype == np.float32 and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
