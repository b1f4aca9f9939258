"""Schema v16 (issue #32): ``cm_versions_superseded`` holds the closed versions only.

Its one read is the search mirror's catch-up (the versions recorded or closed since
its last sync: ``recorded_at > since OR superseded_at > since``), which never needs a
current version (``superseded_at`` NULL) from it. A partial index (``superseded_at IS
NOT NULL``) spares every new version an entry and turns a close's move of an entry
into one insert. An older store is migrated on open and reads and writes as before."""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import text

from chronomem import Memory, State
from chronomem.schema import SCHEMA_VERSION

from .reliability._support import raw, version_indexes
from .statements import counting, versions_plan

ALL = [s.value for s in State]


def _snapshot(m: Memory) -> list[tuple[Any, ...]]:
    return sorted(
        (f.id, f.version_id, f.subject, f.predicate, f.object, f.state, f.superseded_at)
        for f in m.facts(states=ALL)
    )


def _partial(definition: str) -> bool:
    """Whether an index definition (SQLite's ``sql``, PostgreSQL's ``indexdef``) holds
    only the rows whose ``superseded_at`` is set."""
    return "superseded_at IS NOT NULL" in definition.replace("(", "").replace(")", "")


def test_a_new_store_indexes_only_closed_versions(durable_url: str) -> None:
    Memory(durable_url).close()
    found = version_indexes(durable_url)
    assert _partial(found["cm_versions_superseded"]), found


def test_an_older_store_gets_the_partial_index(durable_url: str) -> None:
    with Memory(durable_url) as m:
        m.remember("ann", "lives_in", "lisbon")
        m.remember("ann", "lives_in", "porto")  # supersedes: a closed version
        m.remember_many({"subject": f"s{i}", "predicate": "likes", "obj": "tea"} for i in range(30))
        assert [h.fact.object for h in m.search("porto", k=1) if h.fact] == ["porto"]
        before = _snapshot(m)
    with raw(durable_url) as conn:  # what a v14 store looks like
        conn.execute(text("DROP INDEX cm_versions_superseded"))
        conn.execute(
            text("CREATE INDEX cm_versions_superseded ON cm_versions (tenant, superseded_at)")
        )
        conn.execute(text("UPDATE cm_meta SET value = '14' WHERE key = 'schema_version'"))
        conn.commit()
    assert not _partial(version_indexes(durable_url)["cm_versions_superseded"])
    with Memory(durable_url) as m:  # migrates to v16
        assert _snapshot(m) == before
        m.search("porto", k=1)  # the mirror loaded before the next write
        m.remember("ann", "lives_in", "faro")  # closes porto: the mirror catches up
        assert [f.object for f in m.facts(subject="ann", predicate="lives_in")] == ["faro"]
        assert [h.fact.object for h in m.search("faro", k=1) if h.fact] == ["faro"]
        assert not [h for h in m.search("porto", k=3) if h.fact and h.fact.object == "porto"]
        assert len(m.facts(predicate="likes")) == 30
    found = version_indexes(durable_url)
    assert _partial(found["cm_versions_superseded"]), found
    with raw(durable_url) as conn:
        version = conn.execute(
            text("SELECT value FROM cm_meta WHERE key = 'schema_version'")
        ).scalar()
        assert version == str(SCHEMA_VERSION)
    with Memory(durable_url) as m:  # reopening migrates nothing again
        assert len(m.facts(subject="ann", states=ALL)) == 3
    assert version_indexes(durable_url) == found


def _entries(path: str, index: str) -> int:
    """How many entries an index b-tree holds (every cell of every page: an index's
    interior pages hold keys too)."""
    with sqlite3.connect(path) as conn:
        return int(
            conn.execute("SELECT sum(ncell) FROM dbstat WHERE name = ?", (index,)).fetchone()[0]
        )


def test_new_versions_take_no_entry_and_the_catch_up_reads_it(tmp_path: Any) -> None:
    """SQLite: a batch of new facts adds no entry to the index, each close adds one;
    the mirror's catch-up still finds what was closed, through an index."""
    path = str(tmp_path / "s.db")
    with Memory(path) as m:
        m.search("tea", k=1)  # the mirror is loaded: later searches catch up
        m.remember_many(
            {"subject": f"s{i}", "predicate": "lives_in", "obj": "rome"} for i in range(200)
        )
        m.remember_many(
            {"subject": f"s{i}", "predicate": "lives_in", "obj": "oslo"} for i in range(7)
        )
        with counting(m) as cost:
            hits = m.search("oslo", k=10)
        moved = {f"s{i}" for i in range(7)}
        found = [(h.fact.subject, h.fact.object) for h in hits if h.fact]
        assert {s for s, o in found if o == "oslo"} == moved, found
        assert not [s for s, o in found if o == "rome" and s in moved], found  # closed
    with sqlite3.connect(path) as conn:
        closed, stored = conn.execute(
            "SELECT count(superseded_at), count(*) FROM cm_versions"
        ).fetchone()
    # each move closes a rome version and inserts its cut part and the oslo one
    assert (closed, stored) == (7, 214)
    assert _entries(path, "cm_versions_superseded") == closed  # was: every version
    catch_up = [
        (s, p) for s, p in zip(cost.statements, cost.params, strict=True) if "superseded_at >" in s
    ]
    assert catch_up, cost.statements
    with Memory(path) as m:
        plan = versions_plan(m, *catch_up[0])
    # SQLite walks the tenant's ``cm_versions_recorded`` range for it (its ORDER BY),
    # as it did with the whole index: an index, not a scan of the table
    assert "USING INDEX cm_versions_" in plan and "SCAN cm_versions" not in plan, plan
