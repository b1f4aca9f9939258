"""Schema v3 (issue #13): the text indexes stem English. A v2 store (unstemmed
``unicode61`` FTS5 / PostgreSQL ``simple``) is upgraded on open: its indexes are
rebuilt from the text, stemmed words then match, and erasure still leaves no
word of an erased fact in the index."""

from __future__ import annotations

import pytest

import chronomem.schema as schema
from chronomem import Memory, State

from .reliability._support import check_invariants, is_sqlite, raw, sqlite_fts_terms

ALL = [s.value for s in State]


def _lexical(m: Memory, query: str, leg: str) -> list[str]:
    """The texts one lexical leg alone finds (no vector leg to blur stemming)."""
    from chronomem.retrieval.search import search

    hits = search(m._engine, m.scope, query, k=3, include_episodes=True, legs_enabled=[leg])
    return [h.text for h in hits]


def _write_v2(url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    with monkeypatch.context() as mp:
        mp.setattr(schema, "SCHEMA_VERSION", 2)
        with Memory(url) as m:
            m.add_episode("Ann: I lived in Lisbon and went hiking")
            m.remember("ann", "likes", "walking tours")
            gone = m.remember("ann", "likes", "zqgoneword")
            m.erase(gone.fact_ids[0])
            # unstemmed: 'hike' does not find 'hiking' before the upgrade
            assert not _lexical(m, "hike", "episode_lexical")
            facts = {f.id: f.object for f in m.facts(states=ALL)}
        with raw(url) as conn:
            v = conn.exec_driver_sql("SELECT value FROM cm_meta WHERE key = 'schema_version'")
            assert v.scalar() == "2"
    return facts


def test_v2_store_is_upgraded_to_stemmed_indexes(
    durable_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = _write_v2(durable_url, monkeypatch)
    with Memory(durable_url) as m:
        assert {f.id: f.object for f in m.facts(states=ALL)} == facts
        assert _lexical(m, "hike", "episode_lexical") == ["Ann: I lived in Lisbon and went hiking"]
        assert _lexical(m, "walked", "fact_lexical") == ["ann likes walking tours"]
        assert m.check().ok
        r = m.remember("carl", "likes", "zqnewword")
        m.erase(r.fact_ids[0])
        assert not _lexical(m, "zqnewword", "fact_lexical")
    with raw(durable_url) as conn:
        v = conn.exec_driver_sql("SELECT value FROM cm_meta WHERE key = 'schema_version'")
        assert v.scalar() == str(schema.SCHEMA_VERSION)
    assert schema.SCHEMA_VERSION >= 3
    check_invariants(durable_url)
    if is_sqlite(durable_url):
        terms = sqlite_fts_terms(durable_url.removeprefix("sqlite:///"))
        assert "hike" in terms and "lisbon" in terms  # porter stems
        assert not {t for t in terms if t.startswith("zq")}  # erased words gone


def test_new_store_indexes_stemmed_text(url: str | None) -> None:
    with Memory(url) as m:
        m.add_episode("We adopted two puppies last spring")
        hits = m.search("adopting a puppy", k=2, include_episodes=True)
        assert hits and hits[0].episode is not None
        assert hits[0].explain["legs"]["episode_lexical"]["rank"] == 1
