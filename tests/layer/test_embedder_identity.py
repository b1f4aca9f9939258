"""One name for one embedding object, whichever package opened the store (issue #33).

A LangGraph app's ``ChronomemStore`` and a LangChain ``ChronomemRetriever`` given
the same ``Embeddings`` record the same embedder name, so each opens the other's
store; stores recorded under a package's former name keep opening."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import ensure_embeddings

from chronomem import Memory, SchemaMismatch
from chronomem_adapters.embedders import CallableEmbedder, family_of, model_identity
from langchain_chronomem import ChronomemRetriever, chronomem_embedder
from langgraph.store.chronomem import ChronomemStore

DIMS = 16


class LetterEmbeddings(Embeddings):
    """Counts letters: deterministic, offline."""

    def __init__(self, model: str = "letters-v1") -> None:
        self.model = model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        v = [0.0] * DIMS
        for ch in text.casefold():
            if ch.isalpha():
                v[ord(ch) % DIMS] += 1.0
        return v


def letters_fn(texts: list[str]) -> list[list[float]]:
    return LetterEmbeddings().embed_documents(texts)


def test_one_rule_names_every_family() -> None:
    emb = LetterEmbeddings()
    assert family_of(emb) == "langchain" and family_of(object()) is None
    assert model_identity(emb, "langchain") == "langchain/LetterEmbeddings/letters-v1"
    assert model_identity(ensure_embeddings(letters_fn), "langchain") == (
        f"langchain/fn/{__name__}.letters_fn"
    )
    assert chronomem_embedder(emb).name == "langchain/LetterEmbeddings/letters-v1"


def test_a_langgraph_store_opens_in_the_langchain_retriever(durable_url: str) -> None:
    emb = LetterEmbeddings()
    with ChronomemStore(durable_url, index={"embed": emb, "dims": DIMS}) as store:
        store.put(("users", "ada"), "profile", {"city": "Paris"})
    retriever_memory = Memory(durable_url, embedder=chronomem_embedder(emb))
    try:
        retriever_memory.remember("ada", "lives_in", "Paris")
        docs = ChronomemRetriever(memory=retriever_memory).invoke("Paris")
        assert "Paris" in [d.metadata["object"] for d in docs]
    finally:
        retriever_memory.close()
    # and back: the store opens a database the retriever's memory wrote
    with ChronomemStore(durable_url, index={"embed": emb, "dims": DIMS}) as store:
        assert store.get(("users", "ada"), "profile").value == {"city": "Paris"}  # type: ignore[union-attr]


def _write_under(url: str, name: str) -> None:
    emb = CallableEmbedder(LetterEmbeddings().embed_documents, name=name, dim=DIMS)
    with Memory(url, embedder=emb) as m:
        m.remember("ada", "lives_in", "Paris")


@pytest.mark.parametrize(
    "old",
    [
        f"langchain:{__name__}.LetterEmbeddings:letters-v1:{DIMS}",  # langgraph_pkg before
        "crewai-LetterEmbeddings",  # crewai_pkg before, for a LangChain object
    ],
)
def test_stores_recorded_under_a_former_name_still_open(durable_url: str, old: str) -> None:
    _write_under(durable_url, old)
    emb = LetterEmbeddings()
    with Memory(durable_url, embedder=chronomem_embedder(emb)) as m:
        assert [f.object for f in m.facts()] == ["Paris"]
    with ChronomemStore(durable_url, index={"embed": emb, "dims": DIMS}) as store:
        assert store.search(("users",)) == []


def test_a_former_function_name_still_opens(durable_url: str) -> None:
    _write_under(durable_url, f"langchain:fn:{__name__}.letters_fn:{DIMS}")
    with ChronomemStore(durable_url, index={"embed": letters_fn, "dims": DIMS}) as store:
        assert store.search(("users",)) == []


def test_another_model_is_still_refused(durable_url: str) -> None:
    _write_under(durable_url, "langchain/LetterEmbeddings/letters-v1")
    with pytest.raises(SchemaMismatch):
        Memory(durable_url, embedder=chronomem_embedder(LetterEmbeddings("letters-v2")))


def test_llamaindex_former_name_still_opens(durable_url: str) -> None:
    from llama_index.core.embeddings import MockEmbedding

    from llama_index.memory.chronomem import embedder_from

    _write_under(durable_url, "llamaindex:MockEmbedding:unknown")
    emb = embedder_from(MockEmbedding(embed_dim=DIMS))
    assert emb.name == "llamaindex/MockEmbedding/unknown"
    with Memory(durable_url, embedder=emb) as m:
        assert [f.object for f in m.facts()] == ["Paris"]


def test_crewai_names_a_langchain_object_by_the_same_rule(durable_url: str) -> None:
    from crewai_chronomem.embedders import as_embedder

    emb = LetterEmbeddings()
    assert as_embedder(emb).name == chronomem_embedder(emb).name
