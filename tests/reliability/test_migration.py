"""Schema migrations: a store written by an older schema opens, is upgraded in
place, keeps every fact, and behaves like a new one afterwards.

v1 -> v2 (issue #14 A, F): SQLite's contentless FTS5 indexes become
external-content indexes that can be checked and rebuilt, including a v1 index
already corrupted past FTS5's level limit; the text indexes of both backends
cover a bounded prefix."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import chronomem.schema as schema
from chronomem import Memory, State

from ._support import check_invariants, is_sqlite, raw, sqlite_fts_terms

ALL = [s.value for s in State]


def write_v1(url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A store as chronomem with schema v1 wrote it: facts, an episode, an erase."""
    with monkeypatch.context() as mp:
        mp.setattr(schema, "SCHEMA_VERSION", 1)
        with Memory(url) as m:
            ep = m.add_episode("ann moved to lisbon in spring")
            m.remember("ann", "lives_in", "lisbon", source=ep)
            gone = m.remember("ann", "likes", "zqgoneword")
            m.remember("bob", "likes", "tea")
            m.erase(gone.fact_ids[0])
            facts = {f.id: f.object for f in m.facts(states=ALL)}
        with raw(url) as conn:
            v = conn.exec_driver_sql(
                "SELECT value FROM cm_meta WHERE key = 'schema_version'"
            ).scalar()
            assert v == "1"
    return facts


def assert_upgraded(url: str, facts: dict[str, str]) -> None:
    with Memory(url) as m:
        assert {f.id: f.object for f in m.facts(states=ALL)} == facts
        for word in ("lisbon", "tea"):
            res = m.search(word, k=5)
            assert not res.degraded, res.failed_legs
            assert any(word in h.text for h in res), word
        assert m.check().ok
        r = m.remember("carl", "likes", "zqnewword")
        assert [h.fact.object for h in m.search("zqnewword", k=1) if h.fact] == ["zqnewword"]
        m.erase(r.fact_ids[0])
        assert not [h for h in m.search("zqnewword", k=3) if h.fact and h.fact.subject == "carl"]
    with raw(url) as conn:
        v = conn.exec_driver_sql("SELECT value FROM cm_meta WHERE key = 'schema_version'").scalar()
        assert v == str(schema.SCHEMA_VERSION)
    check_invariants(url)
    if is_sqlite(url):
        path = url.removeprefix("sqlite:///")
        terms = sqlite_fts_terms(path)
        assert "lisbon" in terms and "zqgoneword" not in terms and "zqnewword" not in terms


def test_v1_store_opens_and_is_upgraded(durable_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = write_v1(durable_url, monkeypatch)
    assert_upgraded(durable_url, facts)


def _corrupt_v1_fts(path: str) -> None:
    """Drive the v1 contentless index past FTS5's level limit the way ~1,460
    erases did on SQLite 3.40: a delete then an 'optimize', over and over."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    fts = "cm_episodes_fts"
    try:
        rnd, alive = random.Random(1), []
        for i in range(6000):  # SQLite 3.40 breaks after about 1,460 optimizes
            if rnd.random() < 0.6:
                conn.execute(
                    f"INSERT INTO {fts}(rowid, body) VALUES (?, ?)", (10**7 + i, f"s{i % 15} w{i}")
                )
                alive.append(i)
            elif alive:
                j = alive.pop(rnd.randrange(len(alive)))
                conn.execute(
                    f"INSERT INTO {fts}({fts}, rowid, body) VALUES ('delete', ?, ?)",
                    (10**7 + j, f"s{j % 15} w{j}"),
                )
                conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")
    except sqlite3.DatabaseError:
        return
    finally:
        conn.close()
    raise AssertionError("the index survived: this SQLite does not have the bug")


@pytest.fixture
def v1_path(tmp_path: Path) -> Iterator[str]:
    yield str(tmp_path / "v1.db")


def test_v1_store_with_a_corrupted_index_is_upgraded(
    v1_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = write_v1(v1_path, monkeypatch)
    if sqlite3.sqlite_version_info >= (3, 41, 0):
        pytest.skip("this SQLite does not corrupt an optimized index (fixed in 3.41)")
    _corrupt_v1_fts(v1_path)
    probe = sqlite3.connect(v1_path)
    with pytest.raises(sqlite3.DatabaseError):  # the v1 index is unusable ...
        probe.execute("SELECT count(*) FROM cm_episodes_fts WHERE cm_episodes_fts MATCH 'x'")
    probe.close()
    assert_upgraded(f"sqlite:///{v1_path}", facts)  # ... and the upgrade repairs it
