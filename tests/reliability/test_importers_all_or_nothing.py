"""Issue #31, items 2, 3 and 6 for the other importers (hand-written facts, mem0,
LangGraph): one transaction each, so a bad row writes nothing and the fixed
source imports; no instant after the clock; the importers' own quirks."""

from __future__ import annotations

import io
import json
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from chronomem import Memory
from chronomem.errors import ChronomemError, InvalidInput, NotFound, TimeTravel
from chronomem.exchange import import_facts, import_mem0_history
from tests.reliability._dumps import snapshot

MEM0_SCHEMA = """CREATE TABLE history (
    id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, new_memory TEXT, event TEXT,
    created_at DATETIME, updated_at DATETIME, is_deleted INTEGER, actor_id TEXT, role TEXT)"""


def _mem0(path: str, rows: list[tuple[Any, ...]]) -> str:
    conn = sqlite3.connect(path)
    conn.execute(MEM0_SCHEMA)
    conn.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    conn.commit()
    conn.close()
    return path


def _add(hid: str, mid: str | None, text: str | None, at: str) -> tuple[Any, ...]:
    return (hid, mid, None, text, "ADD", at, None, 0, None, "user")


# -- hand-written facts ----------------------------------------------------------------------
def _facts(*recs: dict[str, Any]) -> io.StringIO:
    return io.StringIO("\n".join(json.dumps(r) for r in recs))


GOOD = [
    {"subject": "alice", "predicate": "lives_in", "object": "Paris", "recorded_at": "2025-01-01"},
    {"subject": "alice", "predicate": "likes", "object": "tea"},
]


def test_facts_import_writes_nothing_when_a_line_is_bad(memory: Memory) -> None:
    before = snapshot(memory)
    bad = {"subject": "bob", "predicate": "likes", "object": 7, "recorded_at": "2025-02-01"}
    with pytest.raises(ChronomemError, match="line 3"):
        import_facts(memory, _facts(*GOOD, bad))
    assert snapshot(memory) == before
    # a slot going back in time is found only while writing: still nothing written
    late = {
        "subject": "carol",
        "predicate": "lives_in",
        "object": "Rome",
        "recorded_at": "2025-06-01",
    }
    memory.import_fact(
        "carol", "lives_in", "Oslo", recorded_at=datetime(2025, 9, 1, tzinfo=timezone.utc)
    )
    before = snapshot(memory)
    with pytest.raises(TimeTravel, match="line 3"):
        import_facts(memory, _facts(*GOOD, late))
    assert snapshot(memory) == before
    assert import_facts(memory, _facts(*GOOD)) == {"history": 1, "remembered": 1}


def test_facts_import_refuses_the_future(memory: Memory) -> None:
    before = snapshot(memory)
    future = {"subject": "a", "predicate": "likes", "object": "b", "recorded_at": "3000-01-01"}
    with pytest.raises(TimeTravel, match="line 2"):
        import_facts(memory, _facts(GOOD[0], future))
    assert snapshot(memory) == before


# -- mem0 ------------------------------------------------------------------------------------
def test_mem0_import_writes_nothing_when_a_row_is_bad(tmp_path: Path, url: str | None) -> None:
    db = _mem0(str(tmp_path / "h.db"), [
        _add("h1", "m1", "Likes tea", "2025-01-01T00:00:00+00:00"),
        _add("h2", "m2", "   ", "2025-02-01T00:00:00+00:00"),
    ])  # fmt: skip
    with Memory(url, user="alice") as m:
        before = snapshot(m)
        with pytest.raises(InvalidInput, match="no memory text"):
            import_mem0_history(m, db)
        assert snapshot(m) == before


def test_mem0_import_refuses_the_future_and_null_ids(tmp_path: Path, url: str | None) -> None:
    future = _mem0(str(tmp_path / "f.db"), [
        _add("h1", "m1", "Likes tea", "2025-01-01T00:00:00+00:00"),
        _add("h2", "m2", "Likes cake", "3000-01-01T00:00:00+00:00"),
    ])  # fmt: skip
    nulls = _mem0(str(tmp_path / "n.db"), [_add("h1", None, "Likes tea", "2025-01-01T00:00")])
    with Memory(url, user="alice") as m:
        before = snapshot(m)
        with pytest.raises(TimeTravel):
            import_mem0_history(m, future)
        with pytest.raises(InvalidInput, match="no memory id"):
            import_mem0_history(m, nulls)
        assert snapshot(m) == before
        m.remember("alice", "likes", "coffee")
        assert [f.object for f in m.facts(as_of=m.now())] == ["coffee"]


def test_mem0_source_is_opened_read_only_by_its_path(tmp_path: Path) -> None:
    odd = tmp_path / "a#b?c%d"
    odd.mkdir()
    db = _mem0(str(odd / "h.db"), [_add("h1", "m1", "Likes tea", "2025-01-01T00:00:00+00:00")])
    listing = sorted(p.name for p in tmp_path.rglob("*"))
    with Memory() as m:
        assert import_mem0_history(m, db)["add"] == 1
        with pytest.raises(NotFound):
            import_mem0_history(m, str(tmp_path / "missing#x.db"))
    assert sorted(p.name for p in tmp_path.rglob("*")) == listing  # nothing created
    os.chmod(db, 0o444)
    with Memory() as m:
        assert import_mem0_history(m, db)["add"] == 1


# -- LangGraph -------------------------------------------------------------------------------
class _Source:
    """A minimal BaseStore-like source (``list_namespaces`` and ``search``)."""

    def __init__(self, items: list[Any], *, ignore_offset: bool = False) -> None:
        self.items = items
        self.ignore_offset = ignore_offset

    def list_namespaces(self, *, limit: int, offset: int) -> list[tuple[str, ...]]:
        spaces = sorted({tuple(i.namespace) for i in self.items})
        return spaces[:limit] if self.ignore_offset else spaces[offset : offset + limit]

    def search(self, ns: tuple[str, ...], *, limit: int, offset: int) -> list[Any]:
        found = [i for i in self.items if tuple(i.namespace)[: len(ns)] == ns]
        return found[:limit] if self.ignore_offset else found[offset : offset + limit]


def _item(ns: tuple[str, ...], key: str, when: datetime | None = None) -> Any:
    from langgraph.store.base import Item

    when = when or datetime(2025, 1, 1, tzinfo=timezone.utc)
    return Item(value={"v": key}, key=key, namespace=ns, created_at=when, updated_at=when)


@pytest.mark.parametrize(
    "bad",
    [("a.b",), ("",), ()],
    ids=["dot", "empty-label", "empty-namespace"],
)
def test_langgraph_import_refuses_labels_a_put_refuses(
    url: str | None, bad: tuple[str, ...]
) -> None:
    from langgraph.store.chronomem.importer import import_store

    items = [_item(("a", "b"), "k1"), _item(bad, "k2")]
    with Memory(url) as m:
        before = snapshot(m)
        with pytest.raises(InvalidInput):
            import_store(_Source(items), m)
        assert snapshot(m) == before


def test_langgraph_import_refuses_the_future_and_a_source_ignoring_offset(url: str | None) -> None:
    from langgraph.store.chronomem.importer import import_store

    future = [_item(("a",), "k1"), _item(("a",), "k2", datetime(3000, 1, 1, tzinfo=timezone.utc))]
    many = [_item(("a",), f"k{i:03d}") for i in range(250)]
    with Memory(url) as m:
        before = snapshot(m)
        with pytest.raises(TimeTravel):
            import_store(_Source(future), m)
        with pytest.raises(InvalidInput, match="ignores offset"):
            import_store(_Source(many, ignore_offset=True), m)
        assert snapshot(m) == before
        assert import_store(_Source(many), m) == 250
