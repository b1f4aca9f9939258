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


def _i1(url: str) -> tuple[int, str] | None:
    """The I1 constraint's oid and definition (None: there is none)."""
    with raw(url) as conn:
        row = conn.exec_driver_sql(
            "SELECT oid, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conname = 'cm_versions_i1' AND conrelid = 'cm_versions'::regclass"
        ).first()
    return None if row is None else (int(row[0]), str(row[1]))


def _overlapping_copy(url: str) -> None:
    """Insert a second current version of every stored slot, overlapping it."""
    with raw(url) as conn:
        conn.exec_driver_sql(
            "INSERT INTO cm_versions (tenant, id, fact_id, user_id, agent_id, session_id, slot, "
            "subject, subject_key, subject_hash, predicate, object, object_key, valid_from, "
            "valid_to, recorded_at, metadata, content_hash) "
            "SELECT tenant, 'x' || id, 'y' || fact_id, user_id, agent_id, session_id, slot, "
            "subject, subject_key, subject_hash, predicate, 'other', 'other', valid_from, NULL, "
            "recorded_at, '{}', 'h' FROM cm_versions WHERE superseded_at IS NULL"
        )


def test_v7_reshapes_the_postgres_i1_constraint(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """v6 -> v7 (issue #19): I1's exclusion constraint leads with a hash of the slot.
    A v6 store keeps its facts, its constraint is replaced (not dropped), and the
    new one refuses what the old one refused and allows what it allowed."""
    with monkeypatch.context() as mp:
        mp.setattr(schema, "SCHEMA_VERSION", 6)
        with Memory(pg_url) as m:
            m.remember("ann", "lives_in", "lisbon")
            m.remember("ann", "lives_in", "porto")  # supersedes: a closed version
            m.remember("bob", "likes", "tea")
            facts = {f.id: f.object for f in m.facts(states=ALL)}
    before = _i1(pg_url)
    if before is None:
        pytest.skip("this server has no btree_gist: I1 is kept by the locks alone")
    old = before[1]
    assert old.startswith("EXCLUDE USING gist (tenant WITH =, slot WITH =,"), old
    with Memory(pg_url) as m:  # migrates to v7
        assert {f.id: f.object for f in m.facts(states=ALL)} == facts
        m.remember("ann", "lives_in", "faro")  # writes still pass the new constraint
        assert [f.object for f in m.facts(subject="ann")] == ["faro"]
    after = _i1(pg_url)
    assert after is not None
    new = after[1]
    assert new.startswith("EXCLUDE USING gist (hashtextextended((slot)"), new
    assert "tenant WITH =" in new and "slot WITH =" in new and "WITH &&" in new, new
    with pytest.raises(Exception, match="cm_versions_i1"):
        _overlapping_copy(pg_url)
    with Memory(pg_url):  # reopening does not rebuild it again
        pass
    assert _i1(pg_url) == after
    check_invariants(pg_url)
