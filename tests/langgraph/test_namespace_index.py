"""``list_namespaces`` reads the namespace index (``namespace_index.py``), not the
items: checked against a reference model (random puts, deletes and listings,
current and as of every past step), for deletion of a namespace's last item,
concurrent puts and deletes from other stores and another process, stores written
before the index existed, and a cost that does not grow with the number of items
(statements and rows counted at 1k and 10k items)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import ListNamespacesOp, MatchCondition, PutOp
from langgraph.store.memory import InMemoryStore
from sqlalchemy import text
from sqlalchemy.schema import CreateIndex

from chronomem import backends, prepared, schema
from chronomem.timeutil import MIN_US
from langgraph.store.chronomem import ChronomemStore, namespace_index
from langgraph.store.chronomem.importer import import_store

from ..conftest import ManualClock
from ..reliability._support import raw
from ..statements import counting
from .conftest import StoreFactory

LABELS = ["a", "b", "c"]
_namespaces = st.lists(st.sampled_from(LABELS), min_size=1, max_size=3).map(tuple)
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("put"), _namespaces, st.sampled_from(["k", "j"])),
        st.tuples(st.just("delete"), _namespaces, st.sampled_from(["k", "j"])),
    ),
    min_size=1,
    max_size=6,
)
_path = st.lists(st.sampled_from([*LABELS, "*"]), min_size=1, max_size=3).map(tuple)
_queries = st.fixed_dictionaries(
    {
        "prefix": st.none() | _path,
        "suffix": st.none() | _path,
        "max_depth": st.none() | st.integers(1, 3),
        "limit": st.integers(0, 6),
        "offset": st.integers(0, 4),
    }
)


def _model_list(live: set[tuple[str, ...]], q: dict[str, Any]) -> list[tuple[str, ...]]:
    """LangGraph's listing, written out again: every condition holds, then the
    namespaces are cut to ``max_depth``, made distinct, sorted and paged."""

    def fits(ns: tuple[str, ...], path: tuple[str, ...], suffix: bool) -> bool:
        if len(ns) < len(path):
            return False
        part = ns[len(ns) - len(path) :] if suffix else ns[: len(path)]
        return all(p in ("*", n) for n, p in zip(part, path, strict=True))

    found = {
        ns
        for ns in live
        if (q["prefix"] is None or fits(ns, q["prefix"], False))
        and (q["suffix"] is None or fits(ns, q["suffix"], True))
    }
    if q["max_depth"] is not None:
        found = {ns[: q["max_depth"]] for ns in found}
    return sorted(found)[q["offset"] : q["offset"] + q["limit"]]


@dataclass
class Model:
    items: set[tuple[tuple[str, ...], str]] = field(default_factory=set)
    # (instant after a step, the namespaces live then)
    past: list[tuple[datetime, set[tuple[str, ...]]]] = field(default_factory=list)

    def live(self) -> set[tuple[str, ...]]:
        return {ns for ns, _ in self.items}


def test_listing_matches_a_reference_model_now_and_in_the_past(
    store: ChronomemStore, clock: ManualClock
) -> None:
    model = Model()

    @settings(
        max_examples=30,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        steps=_steps,
        queries=st.lists(st.tuples(_queries, st.integers(0, 10**6)), min_size=1, max_size=3),
    )
    def run(steps: list[tuple[str, tuple[str, ...], str]], queries: list[Any]) -> None:
        for kind, ns, key in steps:
            clock.advance(seconds=1)
            if kind == "put":
                store.put(ns, key, {"v": key})
                model.items.add((ns, key))
            else:
                store.delete(ns, key)
                model.items.discard((ns, key))
            model.past.append((clock.advance(seconds=1), model.live()))
        for q, pick in queries:
            assert store.list_namespaces(**q) == _model_list(model.live(), q), q
            at, then = model.past[pick % len(model.past)]
            assert store.as_of(at).list_namespaces(**q) == _model_list(then, q), (q, at)

    run()


def test_the_last_item_deleted_hides_its_namespace_now_not_before(
    store: ChronomemStore, clock: ManualClock
) -> None:
    store.put(("u", "1"), "a", {"v": 1})
    store.put(("u", "1"), "b", {"v": 1})
    store.put(("u", "2"), "a", {"v": 1})
    before = clock.advance(seconds=1)
    store.delete(("u", "1"), "a")
    assert store.list_namespaces() == [("u", "1"), ("u", "2")]
    store.delete(("u", "1"), "b")
    assert store.list_namespaces() == [("u", "2")]
    assert store.list_namespaces(max_depth=1) == [("u",)]
    assert store.as_of(before).list_namespaces() == [("u", "1"), ("u", "2")]
    store.put(("u", "1"), "c", {"v": 1})  # back again
    assert store.list_namespaces() == [("u", "1"), ("u", "2")]
    store.erase(("u", "1"), "c")
    assert store.list_namespaces() == [("u", "2")]


def test_an_expired_item_leaves_the_listing(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    store.put(("kept",), "k", {"v": 1})
    assert store.list_namespaces() == [("kept",), ("t",)]
    clock.advance(minutes=2)
    assert store.list_namespaces() == [("kept",)]


def test_a_delete_or_repeat_put_writes_no_entry(store: ChronomemStore) -> None:
    store.put(("a",), "k", {"v": 1})
    entries = store.memory.facts(subject_prefix="lg@n", exact=True)
    assert sorted((f.subject, f.predicate, f.object) for f in entries) == [
        ("lg@nk:\x01a\x01", "@namespace", "lg:a.."),
        ("lg@nu1:\x01a\x01", "@under", "lg:a."),
    ]
    store.put(("a",), "k", {"v": 2})
    store.put(("a",), "j", {"v": 2})
    store.delete(("a",), "k")
    again = store.memory.facts(subject_prefix="lg@n", exact=True)
    assert [f.version_id for f in again] == [f.version_id for f in entries]
    assert store.search(()) and all(i.namespace == ("a",) for i in store.search(()))


def test_concurrent_puts_and_deletes_from_other_stores(durable_url: str) -> None:
    """One store puts and deletes the only item of ``("x",)`` while another puts
    into fresh namespaces; after every round each store lists exactly the
    namespaces whose item a ``get`` finds."""
    a, b, reader = (ChronomemStore(durable_url) for _ in range(3))
    rounds = 8
    barrier = threading.Barrier(2, timeout=120)
    errors: list[BaseException] = []

    def flip() -> None:
        try:
            for r in range(rounds):
                barrier.wait()
                if r % 2 == 0:
                    a.put(("x",), "k", {"v": r})
                else:
                    a.delete(("x",), "k")
                barrier.wait()
        except BaseException as exc:
            errors.append(exc)
            barrier.abort()

    def fresh() -> None:
        try:
            for r in range(rounds):
                barrier.wait()
                b.batch([PutOp(("y", str(r)), "k", {"v": r}), PutOp(("x",), f"other{r}", None)])
                barrier.wait()
        except BaseException as exc:
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=flip), threading.Thread(target=fresh)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    try:
        for s in (a, b, reader):
            expected = [("y", str(r)) for r in range(rounds)]
            assert s.list_namespaces(limit=100) == expected  # the last round deleted ("x",)
        a.put(("x",), "k", {"v": 1})
        assert ("x",) in reader.list_namespaces(limit=100)
    finally:
        for s in (a, b, reader):
            s.close()


_OTHER_PROCESS = """
import sys
from langgraph.store.chronomem import ChronomemStore
s = ChronomemStore(sys.argv[1])
s.put(("from", "child"), "k", {"v": 1})
s.delete(("gone",), "k")
s.close()
"""


def test_another_process_puts_and_deletes(durable_url: str) -> None:
    mine = ChronomemStore(durable_url)
    try:
        mine.put(("gone",), "k", {"v": 1})
        assert mine.list_namespaces() == [("gone",)]
        subprocess.run([sys.executable, "-c", _OTHER_PROCESS, durable_url], check=True)
        assert mine.list_namespaces() == [("from", "child")]
    finally:
        mine.close()


def test_a_store_written_before_the_index_is_indexed_once(
    make_store: StoreFactory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Items put by a version without the index (simulated: puts write no entry)
    are listed after the first listing indexes them — deleted ones too, for views
    of the past."""
    old = make_store()
    with monkeypatch.context() as patched:
        patched.setattr(namespace_index, "entries", lambda _: [])
        old.put(("a", "1"), "k", {"v": 1})
        old.put(("a", "2"), "k", {"v": 1})
        then = clock.advance(seconds=1)
        old.delete(("a", "2"), "k")
        user = ChronomemStore(old.memory, user="u")
        user.put(("mine",), "k", {"v": 1})
    assert not old.memory.facts(subject_prefix="lg@n", exact=True)
    new = ChronomemStore(old.memory)
    assert new.list_namespaces() == [("a", "1")]
    assert new.as_of(then).list_namespaces() == [("a", "1"), ("a", "2")]
    assert namespace_index.build(new.memory) == 0  # once
    # another scope is indexed on its own first listing (its items and its tenant's)
    assert ChronomemStore(old.memory, user="u").list_namespaces() == [("a", "1"), ("mine",)]
    assert ChronomemStore(old.memory, user="v").list_namespaces() == [("a", "1")]


def test_imported_items_are_listed(url: str | None) -> None:
    """Into a scope already indexed (the source's times are the system clock's)."""
    store = ChronomemStore(url)
    store.put(("here",), "k", {"v": 1})
    assert store.list_namespaces() == [("here",)]  # the scope is indexed now
    source = InMemoryStore()
    source.put(("here",), "old", {"v": 0})
    source.put(("imported", "ns"), "k", {"v": 1})
    assert import_store(source, store) == 2
    assert store.list_namespaces() == [("here",), ("imported", "ns")]
    store.close()


@contextmanager
def _prepared_rows() -> Iterator[list[int]]:
    """The rows each prepared statement returned meanwhile (on SQLite they bypass
    SQLAlchemy's cursor events, which ``counting`` listens to)."""
    seen: list[int] = []
    original = prepared.Prepared.rows

    def rows(self: prepared.Prepared, conn: Any, params: Any) -> Any:
        out = original(self, conn, params)
        seen.append(len(out))
        return out

    prepared.Prepared.rows = rows  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        prepared.Prepared.rows = original  # type: ignore[method-assign]


NAMESPACES = [("users", str(u), kind) for u in range(5) for kind in ("prefs", "notes")]


def _listing_cost(store: ChronomemStore, items: int) -> tuple[Any, list[int]]:
    for at in range(0, items, 1000):
        store.batch(
            [
                PutOp(NAMESPACES[i % len(NAMESPACES)], f"k{i}", {"text": f"item {i}"}, index=False)
                for i in range(at, min(at + 1000, items))
            ]
        )
    store.list_namespaces()  # the scope's index is built (once)
    ops = [
        ListNamespacesOp(None, None, 100, 0),
        ListNamespacesOp((MatchCondition("prefix", ("users", "3")),), 2, 10, 0),
    ]
    with counting(store.memory) as cost, _prepared_rows() as rows:
        results = store.batch(ops)
    assert results[0] == sorted(NAMESPACES)
    assert results[1] == [("users", "3")]
    return cost.shape, rows


def test_listing_reads_as_much_at_10k_items_as_at_1k(make_store: StoreFactory) -> None:
    small = _listing_cost(make_store(), 1000)
    large = _listing_cost(make_store(tenant="large"), 10_000)
    assert small == large
    statements, rows = large
    assert statements[0] <= 6 and sum(rows) <= 2 * (len(NAMESPACES) + 2)


def _listing_pages(path: str, items: int) -> int:
    """The database pages a 100-namespace listing's statement reads from the file with
    an empty page cache (a fresh SQLite connection, no memory map): bytes read by
    this process (``/proc/self/io``'s ``rchar``) over the page size. ``items`` spread
    as ``peers.py`` spreads them, a namespace every eight."""
    store = ChronomemStore(path)
    namespaces = [("users", str(i), "notes") for i in range(items // 8)]
    for at in range(0, items, 1000):
        store.batch(
            [
                PutOp(namespaces[i % len(namespaces)], f"k{i}", {"text": f"item {i}"}, index=False)
                for i in range(at, min(at + 1000, items))
            ]
        )
    store.list_namespaces(limit=100)  # the scope's index is built (once)
    seen: list[tuple[str, Any]] = []
    original = prepared.Prepared.rows

    def rows(self: prepared.Prepared, conn: Any, params: Any) -> Any:
        compiled, args = self._bound(conn, backends.of(conn), params)
        seen.append((compiled.sql, args))
        return original(self, conn, params)

    prepared.Prepared.rows = rows  # type: ignore[method-assign]
    try:
        listed = store.list_namespaces(limit=100)
    finally:
        prepared.Prepared.rows = original  # type: ignore[method-assign]
    store.close()
    assert listed == sorted(namespaces)[:100] and len(seen) == 1
    ((sql, args),) = seen

    def read_bytes() -> int:
        with open("/proc/self/io") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("rchar"))

    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA mmap_size = 0")
        (page,) = conn.execute("PRAGMA page_size").fetchone()
        conn.execute("SELECT 1 FROM cm_meta").fetchall()  # the schema is read
        before = read_bytes()
        assert [namespace_index.namespace_of(k) for (k,) in conn.execute(sql, args)] == listed
        return (read_bytes() - before) // page
    finally:
        conn.close()


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts bytes read on Linux")
def test_a_listing_reads_as_many_pages_at_10k_items_as_at_1k(tmp_path: Path) -> None:
    """SQLite (schema v17): a page of 100 namespaces reads index pages only, the
    entries' and their first live items' entries, adjacent in key order, not each
    entry's and item's table row, scattered in write order (115 pages at 1k items,
    211 at 10k before)."""
    small = _listing_pages(str(tmp_path / "small.db"), 1000)
    large = _listing_pages(str(tmp_path / "large.db"), 10_000)
    assert small <= 40 and large <= 40
    assert large - small <= 10


def test_a_v14_store_migrates_and_lists_the_same(durable_url: str) -> None:
    """Schema v17 on a store of v14's shape: the same listings, now (SQLite) walking
    the entries' index and probing the head index without a table row."""
    store = ChronomemStore(durable_url)
    store.put(("a", "1"), "k", {"v": 1})
    store.put(("a", "2"), "k", {"v": 1})
    store.put(("b",), "k", {"v": 1})
    store.delete(("a", "2"), "k")
    queries = [{}, {"prefix": ("a",)}, {"max_depth": 1}, {"suffix": ("1",)}]
    before = [store.list_namespaces(**q) for q in queries]
    store.close()
    with raw(durable_url) as conn:  # what a v14 store looks like
        if conn.dialect.name == "sqlite":
            conn.execute(text("DROP INDEX cm_versions_entries"))
            conn.execute(text("DROP INDEX cm_versions_subject_head"))
            conn.execute(CreateIndex(schema.subject_head_index))
        conn.execute(text("UPDATE cm_meta SET value = '14' WHERE key = 'schema_version'"))
    store = ChronomemStore(durable_url)
    try:
        assert [store.list_namespaces(**q) for q in queries] == before
        assert before[0] == [("a", "1"), ("b",)]
    finally:
        store.close()
    with raw(durable_url) as conn:
        version = conn.execute(text("SELECT value FROM cm_meta WHERE key = 'schema_version'"))
        assert version.scalar() == str(schema.SCHEMA_VERSION)
        if conn.dialect.name != "sqlite":
            return
        plan = " ".join(
            str(r)
            for r in conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT subject_key, object_key FROM cm_versions "
                "WHERE tenant = 'default' AND substr(subject_key, 1, 200) >= 'lg@nk:' "
                "AND substr(subject_key, 1, 200) < 'lg@nk;' AND (valid_from + 0) = "
                f"{MIN_US} AND superseded_at IS NULL"
            )
        )
        assert "COVERING INDEX cm_versions_entries" in plan
        held = [
            r[2]  # the probe's columns follow the head (SQLite reads them from the index)
            for r in conn.exec_driver_sql("PRAGMA index_xinfo(cm_versions_subject_head)")
            if r[5]  # key columns
        ]
        assert held == ["tenant", None, *schema.HEAD_COVERS]
