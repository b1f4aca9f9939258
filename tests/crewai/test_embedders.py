"""CrewAI's own embedder objects, LangChain-style objects and plain callables as
the chronomem store's embedder (through the shared ``CallableEmbedder``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from crewai.memory import Memory as CrewMemory
from crewai.rag.embeddings.factory import build_embedder
from crewai.rag.embeddings.providers.custom.embedding_callable import CustomEmbeddingFunction

from chronomem import InvalidType, Memory
from chronomem.embedding import HashingEmbedder
from crewai_chronomem import ChronomemMemory, ChronomemStorage
from crewai_chronomem.embedders import as_embedder

_HASH = HashingEmbedder(32)


class HashingFunction(CustomEmbeddingFunction):
    """A CrewAI custom embedding function (chromadb style: numpy rows)."""

    def __call__(self, input: Any) -> Any:
        return list(_HASH.embed(list(input)))


def crewai_embedder() -> Any:
    return build_embedder({"provider": "custom", "config": {"embedding_callable": HashingFunction}})


def test_crewai_embedder_object_drives_chronomem_memory() -> None:
    emb = as_embedder(crewai_embedder(), name="crewai-hashing-32")
    assert emb.dim == 32 and emb.name == "crewai-hashing-32"
    store = Memory(embedder=emb)
    cm = ChronomemMemory(memory=store)
    cm.remember("I live in Paris.", source="dana")
    found = cm.recall("Paris")
    assert any(m.record.metadata.get("object") == "Paris" for m in found)
    assert store.embedder.name == "crewai-hashing-32"


def test_crewai_memory_with_crewai_embedder_over_chronomem_storage() -> None:
    embedder = crewai_embedder()
    storage = ChronomemStorage(embedder=embedder)
    memory = CrewMemory(
        storage=storage, embedder=embedder, llm="unused", consolidation_threshold=1.0
    )
    memory.remember("Dana loves ramen", scope="/crew/a", categories=["food"], importance=0.7)
    memory.remember("Bo prefers tea", scope="/crew/b", categories=["drink"], importance=0.4)
    found = memory.recall("ramen", depth="shallow", limit=1)
    assert [m.record.content for m in found] == ["Dana loves ramen"]
    assert found[0].record.scope == "/crew/a" and found[0].record.categories == ["food"]
    memory.close()


def test_callables_and_embed_query_objects() -> None:
    plain = as_embedder(lambda texts: [[1.0, 0.0, float(len(t))] for t in texts])
    assert plain.dim == 3
    assert np.allclose(np.linalg.norm(plain.embed(["ab"]), axis=1), 1.0)

    class LangChainStyle:
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 2.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [2.0, 1.0]

    lc = as_embedder(LangChainStyle())
    assert lc.dim == 2 and list(lc.embed_query("q")) == [2.0, 1.0]  # type: ignore[attr-defined]
    with pytest.raises(InvalidType):
        as_embedder(42)
