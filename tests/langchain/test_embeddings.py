"""chronomem_embedder: a LangChain Embeddings object as the store's embedder."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from chronomem import InvalidType, Memory, SchemaMismatch
from langchain_chronomem import chronomem_embedder
from langchain_chronomem.embeddings import embedder_name


class CountingEmbedding(DeterministicFakeEmbedding):
    queries: int = 0

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return super().embed_query(text)


def test_search_uses_the_langchain_model(tmp_path: Path) -> None:
    emb = CountingEmbedding(size=24)
    e = chronomem_embedder(emb)
    assert (e.name, e.dim) == ("langchain/CountingEmbedding", 24)
    with Memory(str(tmp_path / "m.db"), embedder=e) as m:
        m.remember("ada", "likes", "green tea")
        hits = m.search("green tea")
        assert [h.fact.object for h in hits if h.fact] == ["green tea"]
        assert emb.queries >= 1


def test_reopening_with_another_dimension_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    with Memory(path, embedder=chronomem_embedder(DeterministicFakeEmbedding(size=16))) as m:
        m.remember("ada", "likes", "tea")
    with Memory(path, embedder=chronomem_embedder(DeterministicFakeEmbedding(size=16))) as m:
        assert len(m.facts()) == 1
    with pytest.raises(SchemaMismatch):
        Memory(path, embedder=chronomem_embedder(DeterministicFakeEmbedding(size=32)))


def test_names_and_bad_input() -> None:
    class Named(DeterministicFakeEmbedding):
        model: str = "text-embedding-3-small"

    assert embedder_name(Named(size=4)) == "langchain/Named/text-embedding-3-small"
    assert chronomem_embedder(Named(size=4), name="mine").name == "mine"
    with pytest.raises(InvalidType):
        chronomem_embedder(object())  # type: ignore[arg-type]
