"""Core ``Memory.similarities`` and LangGraph's ``SearchItem.score`` (issue #30 item 1,
issue #33): every item a namespace search reaches is scored with its cosine to the
query, negative and zero included, as LangGraph's ``InMemoryStore`` scores it."""

from __future__ import annotations

import math
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from chronomem import InvalidType, Memory
from chronomem_adapters.embedders import CallableEmbedder
from langgraph.store.chronomem import ChronomemStore

DIRECTIONS = {"north": (1.0, 0.0), "south": (-1.0, 0.0), "east": (0.0, 1.0), "ne": (1.0, 1.0)}


def _vector(text: str) -> list[float]:
    words = text.casefold().split()
    x = sum(DIRECTIONS[w][0] for w in words if w in DIRECTIONS)
    y = sum(DIRECTIONS[w][1] for w in words if w in DIRECTIONS)
    return [x, y, 0.0 if (x or y) else 1.0]


class Compass(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [_vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return _vector(text)


def test_memory_similarities(url: str | None) -> None:
    emb = CallableEmbedder(Compass().embed_documents, name="compass", dim=3)
    with Memory(url, embedder=emb) as m:
        for word in ("north", "south", "east", "ne"):
            m.remember(word, "is", "wind")
        ids = {f.subject: f.version_id for f in m.facts()}
        got = m.similarities("north", [*ids.values(), "no-such-version"])
        assert set(got) == set(ids.values())
        assert got[ids["north"]] == pytest.approx(1.0)
        assert got[ids["south"]] == pytest.approx(-1.0)
        assert got[ids["east"]] == pytest.approx(0.0)
        assert got[ids["ne"]] == pytest.approx(1 / math.sqrt(2))
        assert m.similarities("north", []) == {}
        with pytest.raises(InvalidType):
            m.similarities("north", "abc")


def test_every_item_a_search_reaches_has_its_cosine(url: str | None) -> None:
    with ChronomemStore(url, index={"embed": Compass(), "dims": 3, "fields": ["text"]}) as store:
        for key, text in [("n", "north"), ("s", "south"), ("e", "east"), ("ne", "ne")]:
            store.put(("winds",), key, {"text": text})
        store.put(("winds",), "plain", {"text": "north"}, index=False)
        found = store.search(("winds",), query="north", limit=10)
        scores = {item.key: item.score for item in found}
        assert scores.pop("plain") is None  # not indexed: no vector, no score
        assert scores == pytest.approx({"n": 1.0, "s": -1.0, "e": 0.0, "ne": 1 / math.sqrt(2)})
        ranked = sorted((i for i in found if i.score is not None), key=lambda i: -i.score)  # type: ignore[operator]
        assert [i.key for i in ranked] == ["n", "ne", "e", "s"]
        # a page past the matched items is scored too
        page = store.search(("winds",), query="north", limit=2, offset=2)
        assert all(
            item.score == pytest.approx(scores[item.key]) for item in page if item.key != "plain"
        )


def test_similarities_from_a_searchs_held_rows_are_the_read_ones(url: str | None) -> None:
    """``Memory.similarities(held=)`` with what a search within a prefix held
    (``search_scored``'s ``ScoredHits.held``): the same floats (``==``) as reading
    the vectors, the query embedded by that search alone; versions outside the
    prefix are read; a held of another query is not used."""
    emb = CallableEmbedder(Compass().embed_documents, name="compass", dim=3)
    calls = 0
    real = emb.embed

    def counted(texts: list[str]) -> Any:
        nonlocal calls
        calls += 1
        return real(texts)

    with Memory(url, embedder=emb) as m:
        for i, words in enumerate(["north", "south east", "east", "ne north", "plain"]):
            m.remember(f"w{'abcde'[i]}", "is", words)
        m.remember("other", "is", "north east")
        ids = [f.version_id for f in m.facts()]
        hits = m.search_scored("north", subject_prefix="w", k=2, exact=True)
        assert hits is not None and len(hits) == 2 and hits.held is not None
        emb.embed = counted  # type: ignore[method-assign,assignment]
        try:
            assert m.similarities("north", ids, held=hits.held) == m.similarities("north", ids)
            assert calls == 1  # the read path's embedding only
            assert m.similarities("south", ids, held=hits.held) == m.similarities("south", ids)
        finally:
            emb.embed = real  # type: ignore[method-assign]
