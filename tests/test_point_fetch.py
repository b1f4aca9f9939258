"""``Backend.point_fetch`` (one prepared statement as a point read of its own: on
a SQLite file straight on a kept driver connection) returns what ``point_read``
plus ``fetch`` return, and raises what they raise: a driver error runs the
statement again through them (a read has no side effect to repeat), and the
kept connection serves the next point read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chronomem import Memory


def _both(m: Memory, sql: str, params: Any) -> tuple[Any, Any]:
    backend = m.backend
    got: list[Any] = []
    for run in (
        lambda: backend.point_fetch(sql, params),
        lambda: _through_point_read(m, sql, params),
    ):
        try:
            got.append(("rows", [tuple(r) for r in run()]))
        except Exception as exc:  # the error each raises, by type and text
            got.append(("error", type(exc), str(exc).splitlines()[0]))
    return got[0], got[1]


def _through_point_read(m: Memory, sql: str, params: Any) -> Any:
    with m.backend.point_read() as conn:
        return m.backend.fetch(conn, sql, params)


@pytest.mark.parametrize("where", ["file", "memory"])
def test_point_fetch_is_point_read_and_fetch(tmp_path: Path, where: str) -> None:
    m = Memory(str(tmp_path / "s.db") if where == "file" else None)
    try:
        m.remember("ada", "likes", "tea")
        for sql, params in [
            ("SELECT subject, predicate, object FROM cm_versions WHERE subject = ?", ("ada",)),
            ("SELECT count(*) FROM cm_versions WHERE subject = ?", ("bob",)),
            ("SELECT * FROM no_such_table", ()),  # a driver error
            ("SELECT subject FROM cm_versions WHERE subject = ?", ()),  # a binding error
        ]:
            new, old = _both(m, sql, params)
            assert new == old, sql
        # the kept connection is left outside a transaction and serves the next read
        assert [f.object for f in m.facts(subjects=["ada"])] == ["tea"]
        assert m.backend.point_fetch("SELECT 1", ()) == [(1,)]
    finally:
        m.close()
