"""Schema v12 (issue #32): one subject index on ``cm_versions``, not two.

``cm_versions_subject`` holds (tenant, subject_hash, predicate, superseded_at), so a
subject's current versions are a range of it, and v1's partial ``cm_versions_current``
(the same key over the current versions) is gone: each hex-keyed index cost a batch of
writes about a seventh of SQLite's work. An older store is migrated and reads and
writes as before; current reads go through the subject index."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from chronomem import Memory, State
from chronomem.schema import SCHEMA_VERSION

from .reliability._support import raw, version_indexes
from .statements import versions_plan

ALL = [s.value for s in State]


def _snapshot(m: Memory) -> list[tuple[Any, ...]]:
    return sorted(
        (f.id, f.version_id, f.subject, f.predicate, f.object, f.state, f.superseded_at)
        for f in m.facts(states=ALL)
    )


def test_an_older_store_gets_the_one_subject_index(durable_url: str) -> None:
    with Memory(durable_url) as m:
        m.remember("ann", "lives_in", "lisbon")
        m.remember("ann", "lives_in", "porto")  # supersedes: a closed version
        m.remember_many({"subject": f"s{i}", "predicate": "likes", "obj": "tea"} for i in range(30))
        before = _snapshot(m)
    with raw(durable_url) as conn:  # what a v11 store looks like
        conn.execute(text("DROP INDEX cm_versions_subject"))
        conn.execute(
            text(
                "CREATE INDEX cm_versions_subject ON cm_versions (tenant, subject_hash, predicate)"
            )
        )
        conn.execute(
            text(
                "CREATE INDEX cm_versions_current ON cm_versions (tenant, subject_hash, predicate) "
                "WHERE superseded_at IS NULL"
            )
        )
        conn.execute(text("UPDATE cm_meta SET value = '11' WHERE key = 'schema_version'"))
        conn.commit()
    assert "cm_versions_current" in version_indexes(durable_url)
    with Memory(durable_url) as m:  # migrates to v12
        assert _snapshot(m) == before
        assert [f.object for f in m.facts(subject="ann", predicate="lives_in")] == ["porto"]
        m.remember("ann", "lives_in", "faro")  # the writer's current reads and its close
        assert [f.object for f in m.facts(subject="ann", predicate="lives_in")] == ["faro"]
        assert [f.object for f in m.facts(subject="ann", states=ALL)].count("porto") == 1
        assert len(m.facts(predicate="likes")) == 30
    found = version_indexes(durable_url)
    assert "cm_versions_current" not in found, found
    assert "superseded_at" in found["cm_versions_subject"], found
    with raw(durable_url) as conn:
        version = conn.execute(
            text("SELECT value FROM cm_meta WHERE key = 'schema_version'")
        ).scalar()
        assert version == str(SCHEMA_VERSION)
    with Memory(durable_url) as m:  # reopening migrates nothing again
        assert len(m.facts(subject="ann", states=ALL)) == 3
    assert version_indexes(durable_url) == found


def test_a_new_store_has_the_one_subject_index(durable_url: str) -> None:
    Memory(durable_url).close()
    found = version_indexes(durable_url)
    assert "cm_versions_current" not in found, found
    assert "superseded_at" in found["cm_versions_subject"], found


def test_current_reads_of_subjects_go_through_the_subject_index(tmp_path: Any) -> None:
    """SQLite, without statistics: the writer's read of its subjects' current
    versions (scope, ``subject_hash IN``, ``superseded_at IS NULL``) and a slot's
    current value take the subject index, not the tenant's ``superseded_at`` index."""
    with Memory(str(tmp_path / "s.db")) as m:
        m.remember_many({"subject": f"s{i}", "predicate": "likes", "obj": "tea"} for i in range(50))
        live = (
            "SELECT id FROM cm_versions WHERE tenant = ? AND user_id = '' AND agent_id = '' "
            "AND session_id = '' AND subject_hash IN (?, ?, ?) AND superseded_at IS NULL"
        )
        plan = versions_plan(m, live, ("default", "a", "b", "c"))
        assert "USING INDEX cm_versions_subject (tenant=? AND subject_hash=?)" in plan, plan
        one = (
            "SELECT id FROM cm_versions WHERE tenant = ? AND subject_hash = ? "
            "AND predicate = ? AND superseded_at IS NULL"
        )
        plan = versions_plan(m, one, ("default", "a", "likes"))
        assert (
            "cm_versions_subject (tenant=? AND subject_hash=? AND predicate=? AND superseded_at=?)"
            in plan
        ), plan
