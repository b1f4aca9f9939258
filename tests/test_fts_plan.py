"""The SQLite lexical legs are FTS-first on every SQLite version (issue #13).

SQLite >= 3.51 (as ``pysqlite3-binary`` ships it) planned the episode lexical
leg by walking ``cm_episodes_time`` and probing FTS5 once per row: seconds per
search on a 10k-turn store. The legs now fix the join order (``fts CROSS JOIN
table``); these tests read ``EXPLAIN QUERY PLAN`` on the stdlib SQLite and on
pysqlite3's newer one, on a store whose statistics favour the time index."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from chronomem import Memory
from chronomem.backends import fts5
from chronomem.model import State
from chronomem.retrieval import legs
from chronomem.schema import episodes, versions


def _store(path: Path) -> Memory:
    m = Memory(str(path))
    m.add_episodes(
        [{"text": f"turn {i}: we talked about hiking and topic {i % 13}"} for i in range(400)]
    )
    for i in range(60):
        m.remember(f"person{i}", "likes", f"hiking trip {i % 7}")
    with m._engine.backend.write() as conn:
        conn.exec_driver_sql("ANALYZE")  # statistics: the time index looks selective
    return m


def _queries(m: Memory) -> list[tuple[str, str, tuple[Any, ...]]]:
    tf = legs.TimeFilter(2**62, None, frozenset({State.LIVE}))
    out = []
    with m._engine.backend.read() as conn:
        for tbl, filters in (
            (episodes, legs.episode_filters(m.scope, tf)),
            (versions, legs.fact_filters(m.scope, tf)),
        ):
            tiebreak = [tbl.c.content_hash, tbl.c.id]
            for cap in (None, 100):  # every match, and the FTS index's best 100 first
                sql, params = fts5.lexical_sql(conn, tbl, ["hiking"], filters, 30, tiebreak, cap)
                out.append((tbl.name, sql, params))
    return out


def _first_step(conn: Any, sql: str, params: tuple[Any, ...]) -> str:
    plan = [str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
    steps = [p for p in plan if p.startswith(("SCAN", "SEARCH"))]
    assert steps, plan
    return steps[0]


def test_lexical_legs_scan_the_fts_index_first_on_stdlib_sqlite(tmp_path: Path) -> None:
    m = _store(tmp_path / "s.db")
    try:
        for name, sql, params in _queries(m):
            assert "CROSS JOIN" in sql
            with sqlite3.connect(tmp_path / "s.db") as conn:
                assert _first_step(conn, sql, params).startswith(f"SCAN {name}_fts VIRTUAL TABLE")
    finally:
        m.close()


def test_lexical_legs_scan_the_fts_index_first_on_newer_sqlite(tmp_path: Path) -> None:
    try:
        from pysqlite3 import dbapi2 as newer  # type: ignore[import-not-found]
    except ImportError as exc:  # the dev extra (make install) installs it
        pytest.skip(f"pysqlite3-binary is not importable ({exc}); install the dev extra")
    m = _store(tmp_path / "s.db")
    try:
        queries = _queries(m)
        expected = {}
        with sqlite3.connect(tmp_path / "s.db") as old:
            for _name, sql, params in queries:
                expected[sql] = old.execute(sql, params).fetchall()
    finally:
        m.close()
    conn = newer.connect(str(tmp_path / "s.db"))
    try:
        assert newer.sqlite_version_info >= (3, 40, 0)
        for name, sql, params in queries:
            assert _first_step(conn, sql, params).startswith(f"SCAN {name}_fts VIRTUAL TABLE")
            rows = conn.execute(sql, params).fetchall()
            assert rows == expected[sql]  # same hits, same order, on both SQLite versions
            assert rows, name
    finally:
        conn.close()
