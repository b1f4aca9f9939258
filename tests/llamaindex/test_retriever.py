"""ChronomemRetriever and the BaseEmbedding bridge, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import ClassVar

import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import MetadataMode
from llama_index.core.tools import RetrieverTool

from chronomem import ChronomemError, InvalidInput, InvalidType, Memory, NaiveDatetime
from llama_index.memory.chronomem import ChronomemMemory, ChronomemRetriever, embedder_from
from tests.conftest import ManualClock


@pytest.fixture
def moved(store: Memory, clock: ManualClock) -> dict[str, datetime]:
    """Ada lived in Paris, then moved to Berlin; she also likes tea."""
    start = clock.now
    store.remember("ada", "lives_in", "Paris")
    store.remember("ada", "likes", "tea")
    clock.advance(days=10)
    in_paris = clock.now
    clock.advance(days=10)
    store.remember("ada", "lives_in", "Berlin")
    clock.advance(days=1)
    return {"start": start, "in_paris": in_paris, "now": clock.now}


def cities(nodes: list) -> list[str]:
    return [
        n.node.metadata["object"] for n in nodes if n.node.metadata.get("predicate") == "lives_in"
    ]


def test_one_node_per_fact_version(store: Memory, moved: dict[str, datetime]) -> None:
    r = ChronomemRetriever(store, k=10, states=["live", "ended"])
    nodes = r.retrieve("where does ada live")
    by_city = {
        n.node.metadata["object"]: n for n in nodes if n.node.metadata["predicate"] == "lives_in"
    }
    assert set(by_city) == {"Paris", "Berlin"}
    paris = by_city["Paris"]
    assert paris.node.node_id == paris.node.metadata["version_id"]
    assert re.fullmatch(
        r"ada lives in Paris \(2026-01-01[^→]* → 2026-01-21[^,]*, ended\)", paris.node.get_content()
    ), paris.node.get_content()
    assert re.search(r"\(since 2026-01-21[^)]*\)$", by_city["Berlin"].node.get_content())
    json.dumps([n.node.metadata for n in nodes])  # JSON-safe
    assert paris.node.metadata["valid_to"].startswith("2026-01-21T00:00")
    shown = paris.node.get_content(metadata_mode=MetadataMode.LLM)
    for hidden in ("version_id", "fact_id", "source_episode_ids", paris.node.node_id):
        assert hidden not in shown
    assert "valid_from" in shown and "Paris" in shown
    assert isinstance(paris.score, float)


def test_time_at_construction_and_per_query(store: Memory, moved: dict[str, datetime]) -> None:
    now = ChronomemRetriever(store)
    assert cities(now.retrieve("ada lives")) == ["Berlin"]
    past = ChronomemRetriever(store, as_of=moved["in_paris"])
    assert cities(past.retrieve("ada lives")) == ["Paris"]
    assert cities(now.retrieve("ada lives", as_of=moved["in_paris"])) == ["Paris"]
    iso = moved["in_paris"].isoformat()
    assert cities(now.retrieve("ada lives", valid_at=iso)) == ["Paris"]
    assert cities(now.retrieve("ada lives", known_at=iso)) == ["Paris"]
    # a per-query instant replaces the construction-time one as a whole
    assert cities(past.retrieve("ada lives", valid_at=moved["now"])) == ["Berlin"]
    assert cities(past.retrieve("ada lives")) == ["Paris"], "per-query time does not stick"
    assert cities(now.retrieve("ada lives", as_of=moved["start"] - timedelta(days=1))) == []
    assert sorted(cities(now.retrieve("ada lives", states=["live", "ended"]))) == [
        "Berlin",
        "Paris",
    ]


async def test_async_retrieve(store: Memory, moved: dict[str, datetime]) -> None:
    r = ChronomemRetriever(store)
    assert cities(await r.aretrieve("ada lives")) == ["Berlin"]
    assert cities(await r.aretrieve("ada lives", as_of=moved["in_paris"])) == ["Paris"]


def test_retracted_only_in_the_audit_view(store: Memory, moved: dict[str, datetime]) -> None:
    (fact,) = store.facts(subject="ada", predicate="likes")
    store.retract(fact.id)
    r = ChronomemRetriever(store, k=20)
    assert [n for n in r.retrieve("ada likes tea") if n.node.metadata["predicate"] == "likes"] == []
    audit = r.retrieve("ada likes tea", states=["live", "ended", "retracted"])
    (tea,) = [n for n in audit if n.node.metadata["predicate"] == "likes"]
    assert tea.node.metadata["state"] == "retracted"
    assert "retracted" in tea.node.get_content()


def test_episodes_when_asked(store: Memory) -> None:
    store.add("I live in Paris.")
    nodes = ChronomemRetriever(store, include_episodes=True).retrieve("Paris")
    kinds = {n.node.metadata["kind"] for n in nodes}
    assert kinds == {"fact", "episode"}


def test_bad_arguments(store: Memory) -> None:
    with pytest.raises(InvalidType):
        ChronomemRetriever("sqlite://")  # type: ignore[arg-type]
    for k in (0, -1, True, 10**9, "5"):
        with pytest.raises(InvalidInput):
            ChronomemRetriever(store, k=k)  # type: ignore[arg-type]
    with pytest.raises(NaiveDatetime):
        ChronomemRetriever(store, as_of=datetime(2026, 1, 1))
    r = ChronomemRetriever(store)
    with pytest.raises(NaiveDatetime):
        r.retrieve("x", valid_at=datetime(2026, 1, 1))
    with pytest.raises(ChronomemError):
        r.retrieve("x", valid_at="not a date")
    with pytest.raises(ChronomemError):
        r.retrieve("x", states=["sideways"])


# -- the BaseEmbedding bridge ------------------------------------------------------------
class LetterEmbedding(BaseEmbedding):
    """Counts letters; records which side (query or document) embedded what."""

    calls: ClassVar[list[str]] = []

    def _vec(self, text: str) -> list[float]:
        t = text.lower()
        return [float(t.count(c)) + 0.01 for c in "abcdefghijklmnopqrstuvwxyz"]

    def _get_query_embedding(self, query: str) -> list[float]:
        self.calls.append(f"query:{query}")
        return self._vec(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        self.calls.append("text")
        return self._vec(text)


def test_base_embedding_as_the_store_embedder(url: str | None) -> None:
    model = LetterEmbedding(model_name="letters")
    embedder = embedder_from(model)
    assert embedder.dim == 26 and embedder.name == "llamaindex/LetterEmbedding/letters"
    m = Memory(url, embedder=embedder)
    try:
        m.remember("ada", "likes", "zebras")
        m.remember("ada", "likes", "tea")
        model.calls.clear()
        nodes = ChronomemRetriever(m).retrieve("zzz zebra")
        assert any(c.startswith("query:") for c in model.calls), "queries use get_query_embedding"
        assert nodes[0].node.metadata["object"] == "zebras"
    finally:
        m.close()


def test_mock_embedding_and_a_model_change_is_refused(tmp_path: object) -> None:
    path = f"{tmp_path}/e.db"
    m = Memory(path, embedder=embedder_from(MockEmbedding(embed_dim=8)))
    m.remember("ada", "likes", "tea")
    m.close()
    with pytest.raises(ChronomemError):
        Memory(path, embedder=embedder_from(LetterEmbedding(model_name="letters")))
    with pytest.raises(InvalidType):
        embedder_from("text-embedding-3-small")  # type: ignore[arg-type]


def test_retriever_tool_shows_the_model_validity_not_ids(
    store: Memory, moved: dict[str, datetime]
) -> None:
    r = ChronomemRetriever(store, states=["live", "ended"])
    out = RetrieverTool.from_defaults(retriever=r, name="memory").call(input="where does ada live")
    assert "ada lives in Berlin (since 2026-01-21" in out.content
    assert "ada lives in Paris (2026-01-01" in out.content and "ended)" in out.content
    for node in r.retrieve("where does ada live"):
        assert node.node.node_id not in out.content
        assert node.node.metadata["fact_id"] not in out.content


def test_memory_from_a_url_with_a_llamaindex_embedder(tmp_path: object) -> None:
    model = LetterEmbedding(model_name="letters")
    mem = ChronomemMemory.from_defaults(
        url=f"{tmp_path}/u.db", user="ada", session_id="s", embed_model=model
    )
    try:
        assert (mem.user, mem.session_id) == ("ada", "s")
        assert mem.memory.embedder.name == "llamaindex/LetterEmbedding/letters"
        mem.put_messages([])
        mem.put(ChatMessage(role="user", content="I live in Paris."))
        assert "lives in Paris" in (mem.get()[0].content or "")
        with pytest.raises(InvalidInput):
            ChronomemMemory.from_defaults(memory=mem.memory, url=f"{tmp_path}/u.db")
    finally:
        mem.memory.close()
