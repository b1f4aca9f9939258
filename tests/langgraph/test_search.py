"""search(): namespace prefixes, filters, paging, and hybrid query search with
LangGraph's ``index`` configuration (paths, ``index=False``, scores)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph.store.chronomem import ChronomemStore, LangChainEmbedder

from ..conftest import ManualClock
from .conftest import StoreFactory, snapshot
from .fakes import CharEmbeddings

DOCS = [
    ("doc1", {"text": "red apple", "color": "red", "score": 4.5, "when": "2024-03-01"}),
    ("doc2", {"text": "red car", "color": "red", "score": 3.0, "when": "2024-01-15T09:00:00Z"}),
    ("doc3", {"text": "green apple", "color": "green", "score": 4.0, "when": "2023-12-31"}),
    (
        "doc4",
        {"text": "blue car", "color": "blue", "score": 3.5, "when": "2024-02-01T00:00:00+01:00"},
    ),
]

FILTERS: list[dict[str, Any]] = [
    {"color": "red"},
    {"score": {"$gt": 3.2}},
    {"score": {"$gte": 4.0}, "color": "green"},
    {"score": {"$lt": 4}},
    {"score": {"$lte": 3.5}},
    {"color": {"$ne": "red"}},
    {"color": {"$eq": "blue"}},
    {"missing": None},
    {"color": "purple"},
]


def _keys(items: list[Any]) -> list[str]:
    return sorted(i.key for i in items)


def _fill(s: BaseStore) -> None:
    for key, value in DOCS:
        s.put(("test",), key, value)


def test_filters_match_in_memory_store(store: ChronomemStore) -> None:
    theirs = InMemoryStore()
    _fill(store)
    _fill(theirs)
    for f in FILTERS:
        assert _keys(store.search(("test",), filter=f)) == _keys(theirs.search(("test",), filter=f))


def test_iso_dates_compare_as_instants_and_numbers_as_numbers(store: ChronomemStore) -> None:
    _fill(store)
    store.put(("test",), "doc5", {"text": "x", "score": 10, "when": "2024-02-01"})
    assert _keys(store.search(("test",), filter={"when": {"$gt": "2024-01-31T23:30:00Z"}})) == [
        "doc1",
        "doc5",
    ]  # doc4 is 2024-01-31T23:00Z once its +01:00 offset is applied
    assert _keys(store.search(("test",), filter={"when": {"$lt": "2024-01-01"}})) == ["doc3"]
    assert _keys(store.search(("test",), filter={"score": {"$gt": 9}})) == ["doc5"]
    assert _keys(store.search(("test",), filter={"when": {"$gt": 3}})) == []  # kinds differ


def test_nested_filters(store: ChronomemStore) -> None:
    def scenario(s: BaseStore) -> list[str]:
        s.put(("n",), "a", {"meta": {"lang": "en", "tags": ["x", "y"]}})
        s.put(("n",), "b", {"meta": {"lang": "fr", "tags": ["x"]}})
        out = []
        for f in ({"meta": {"lang": "en"}}, {"meta": {"tags": ["x"]}}, {"meta": "en"}):
            out.append(",".join(_keys(s.search(("n",), filter=f))))
        return out

    assert scenario(store) == scenario(InMemoryStore()) == ["a", "b", ""]


def test_prefix_is_by_label_and_special_characters_never_widen(store: ChronomemStore) -> None:
    for ns in [("a",), ("ab",), ("a", "b"), ("a%",), ("a_",), ("a\\",)]:
        store.put(ns, "k", {"v": "/".join(ns)})
    assert sorted(i.value["v"] for i in store.search(("a",))) == ["a", "a/b"]
    assert [i.value["v"] for i in store.search(("a%",))] == ["a%"]
    assert [i.value["v"] for i in store.search(("a_",))] == ["a_"]
    assert [i.value["v"] for i in store.search(("a\\",))] == ["a\\"]
    assert len(store.search(())) == 6
    assert store.search(("*",)) == []  # search prefixes have no wildcard


def test_paging_newest_first(store: ChronomemStore, clock: ManualClock) -> None:
    for i in range(7):
        store.put(("p",), f"k{i}", {"i": i})
        clock.advance(seconds=10)
    full = store.search(("p",), limit=100)
    assert [i.key for i in full] == [f"k{i}" for i in reversed(range(7))]
    pages = [store.search(("p",), limit=3, offset=o) for o in (0, 3, 6, 9)]
    assert [i.key for p in pages for i in p] == [i.key for i in full]
    assert [len(p) for p in pages] == [3, 3, 1, 0]
    theirs = InMemoryStore()
    for i in range(7):
        theirs.put(("p",), f"k{i}", {"i": i})
    assert sorted(snapshot(full)) == sorted(snapshot(theirs.search(("p",), limit=100)))


def test_query_search_default_index(store: ChronomemStore) -> None:
    _fill(store)
    results = store.search(("test",), query="green apple")
    assert results[0].key == "doc3"
    assert results[0].score is not None and results[0].score > 0
    assert len(results) == 4  # unmatched items follow, unscored (as InMemoryStore lists all)
    assert [r.score for r in results if r.score is not None] == sorted(
        (r.score for r in results if r.score is not None), reverse=True
    )


def test_query_edge_cases(store: ChronomemStore) -> None:
    store.put(("test",), "doc1", {"text": "test document"})
    for q in ("", None, "test " * 100, "test!@#$%^&*()", "%", "_"):
        assert len(store.search(("test",), query=q)) == 1, q


@pytest.fixture
def indexed(make_store: StoreFactory, embeddings: CharEmbeddings) -> ChronomemStore:
    return make_store(index={"dims": embeddings.dims, "embed": embeddings, "fields": ["text"]})


def test_vector_search_with_filters(indexed: ChronomemStore) -> None:
    _fill(indexed)
    results = indexed.search(("test",), query="apple", filter={"color": "red"})
    assert [r.key for r in results][:1] == ["doc1"] and len(results) == 2
    results = indexed.search(("test",), query="car", filter={"color": "red"})
    assert results[0].key == "doc2" and len(results) == 2
    results = indexed.search(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert len(results) == 3 and results[0].key == "doc4"
    results = indexed.search(
        ("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"}
    )
    assert [r.key for r in results] == ["doc3"]


def test_vector_update_changes_scores(indexed: ChronomemStore) -> None:
    indexed.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    indexed.put(("test",), "doc2", {"text": "something about dogs"})
    indexed.put(("test",), "doc3", {"text": "text about birds"})
    first = indexed.search(("test",), query="Zany Xerxes")
    assert first[0].key == "doc1"
    initial = first[0].score
    assert initial is not None
    indexed.put(("test",), "doc1", {"text": "new text about dogs"})
    after = next(
        (r.score for r in indexed.search(("test",), query="Zany Xerxes") if r.key == "doc1"), 0.0
    )
    assert (after or 0.0) < initial
    indexed.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    top3 = indexed.search(("test",), query="new text about dogs", limit=3)
    assert "doc4" not in [r.key for r in top3]
    everything = indexed.search(("test",), query="new text about dogs", limit=10)
    assert everything[-1].key == "doc4" and everything[-1].score is None


def test_vector_pagination(indexed: ChronomemStore) -> None:
    for i in range(5):
        indexed.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    page1 = indexed.search(("test",), query="test", limit=2)
    page2 = indexed.search(("test",), query="test", limit=2, offset=2)
    assert len(page1) == len(page2) == 2
    assert {r.key for r in page1}.isdisjoint(r.key for r in page2)
    assert len(indexed.search(("test",), query="test", limit=10)) == 5


def test_index_paths_select_what_is_searchable(indexed: ChronomemStore) -> None:
    indexed.put(
        ("d",),
        "a",
        {"title": "quantum physics", "chapters": [{"body": "tea ceremony"}, {"body": "zebras"}]},
        index=["chapters[*].body"],
    )
    indexed.put(("d",), "b", {"title": "tea ceremony", "chapters": []})  # store fields: ["text"]
    hits = indexed.search(("d",), query="zebras")
    assert hits[0].key == "a" and hits[0].score is not None
    assert all(h.score is None for h in hits if h.key == "b")  # "b" has no "text": not indexed
    indexed.put(("d",), "c", {"text": "quantum physics"})
    by_key = {h.key: h.score for h in indexed.search(("d",), query="quantum physics")}
    assert by_key["c"] is not None and (by_key["a"] or 0.0) < by_key["c"]  # a's title: not indexed
    # two texts: an entry beside the document for each
    live = indexed.memory.facts(subject="lg:d..a", exact=True)
    assert sorted(f.predicate for f in live) == [
        "@index:chapters[*].body#0",
        "@index:chapters[*].body#1",
        "item",
    ]
    # shrinking the array to one text ends the stale entries: the document carries it
    indexed.put(
        ("d",), "a", {"title": "x", "chapters": [{"body": "tea"}]}, index=["chapters[*].body"]
    )
    live = indexed.memory.facts(subject="lg:d..a", exact=True)
    assert [f.predicate for f in live] == ["item"]
    assert indexed.search(("d",), query="tea")[0].key == "a"


def test_embedder_is_called_with_index_texts(
    indexed: ChronomemStore, embeddings: CharEmbeddings
) -> None:
    before = embeddings.calls
    indexed.put(("e",), "k", {"text": "hello"})
    assert embeddings.calls > before


def test_async_embedding_function(make_store: StoreFactory) -> None:
    fake = CharEmbeddings(16)

    async def aembed(texts: list[str]) -> list[list[float]]:
        return fake.embed_documents(texts)

    s = make_store(index={"dims": 16, "embed": aembed, "fields": ["text"]})
    s.put(("a",), "k", {"text": "apple pie"})
    s.put(("a",), "j", {"text": "zebra"})
    assert s.search(("a",), query="apple")[0].key == "k"


class QueryMappingEmbeddings(CharEmbeddings):
    """Embeds queries differently from documents (as asymmetric models do): a
    query is embedded as the text it stands for."""

    def __init__(self, dims: int = 64, synonyms: dict[str, str] | None = None):
        super().__init__(dims)
        self.synonyms = synonyms or {}
        self.documents: list[str] = []
        self.queries: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += texts
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self._one(self.synonyms.get(text, text))


def test_queries_are_embedded_with_embed_query(make_store: StoreFactory) -> None:
    # "pale" shares its letters with "apple pie"; as a query it stands for "zebra"
    emb = QueryMappingEmbeddings(synonyms={"pale": "zebra"})
    s = make_store(index={"dims": emb.dims, "embed": emb, "fields": ["text"]})
    s.put(("q",), "fruit", {"text": "apple pie"})
    s.put(("q",), "animal", {"text": "zebra"})
    hits = s.search(("q",), query="pale")
    assert hits[0].key == "animal" and hits[0].score is not None
    assert emb.queries == ["pale"] and "pale" not in emb.documents
    assert sorted(emb.documents) == ["apple pie", "zebra"]


def test_embedder_wrapper_methods() -> None:
    emb = QueryMappingEmbeddings(8, {"q": "abc"})
    wrapper = LangChainEmbedder(emb, 8)
    assert wrapper.embed(["abc", "x"]).shape == (2, 8)
    assert emb.documents == ["abc", "x"]
    assert wrapper.embed_query("q").tolist() == pytest.approx(emb._one("abc"))
    assert emb.queries == ["q"]
    with pytest.raises(ValueError, match="dims"):
        LangChainEmbedder(emb, 9).embed_query("q")

    async def aembed(texts: list[str]) -> list[list[float]]:
        return [[float(len(t))] * 3 for t in texts]

    async_only = LangChainEmbedder(aembed, 3)
    assert async_only.embed_query("four").tolist() == [4.0, 4.0, 4.0]
    assert async_only.embed(["ab"]).tolist() == [[2.0, 2.0, 2.0]]


def test_wrong_dims_is_a_clear_error(make_store: StoreFactory) -> None:
    s = make_store(index={"dims": 7, "embed": CharEmbeddings(16), "fields": ["text"]})
    with pytest.raises(ValueError, match="dims"):
        s.put(("a",), "k", {"text": "x"})


def test_store_exposes_its_embeddings(make_store: Any, embeddings: Any) -> None:
    """``store.embeddings`` is the index's LangChain ``Embeddings``, as on
    ``InMemoryStore``/``SqliteStore`` (None without an index)."""
    assert make_store(index={"dims": embeddings.dims, "embed": embeddings}).embeddings is embeddings
    plain = ChronomemStore()
    assert plain.embeddings is None
    plain.close()
