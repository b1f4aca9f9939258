"""Deterministic offline embeddings for the store tests (a bag of characters,
so texts sharing letters are close: "blue car" ~ "bbbbluuu")."""

from __future__ import annotations

import math

from langchain_core.embeddings import Embeddings


class CharEmbeddings(Embeddings):
    def __init__(self, dims: int = 64):
        self.dims = dims
        self.calls = 0

    def _one(self, text: str) -> list[float]:
        v = [0.0] * self.dims
        for ch in text.casefold():
            if ch.isalnum():
                v[ord(ch) % self.dims] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)
