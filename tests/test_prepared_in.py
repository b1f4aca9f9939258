"""``PreparedIn`` (a statement compiled per list length, the list padded with its
last value): the rows of any list are those of the plain ``IN`` query, and
binding a list costs no Python-level call per value (a search's sources, 30 ids,
go through it on every search within a namespace)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from chronomem import Memory
from chronomem.prepared import IN_LISTS, PreparedIn
from chronomem.schema import versions


def _store(path: Path) -> Memory:
    m = Memory(str(path / "p.db"))
    m.remember_many([{"subject": f"s{i}", "predicate": "p", "obj": f"o{i}"} for i in range(40)])
    return m


_BY_SUBJECT = PreparedIn(
    lambda binds: select(versions.c.subject).where(versions.c.subject.in_(binds))
)


@settings(max_examples=40, deadline=None)
@given(picks=st.lists(st.integers(0, 59), min_size=1, max_size=600))
def test_rows_are_those_of_the_plain_query(tmp_path_factory: Any, picks: list[int]) -> None:
    path = tmp_path_factory.mktemp("p")
    m = _store(path)
    try:
        subjects = [f"s{i}" for i in picks]  # s40..s59 name no row; repeats allowed
        with m.backend.read() as conn:
            got = sorted(r[0] for r in _BY_SUBJECT.rows(conn, {}, subjects))
            plain = sorted(
                conn.execute(select(versions.c.subject).where(versions.c.subject.in_(subjects)))
                .scalars()
                .all()
            )
        assert got == plain
    finally:
        m.close()


def _events(conn: Any, values: list[str]) -> int:
    """Python-level calls (functions and builtins) one ``rows`` call makes."""
    n = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal n
        if event in ("call", "c_call"):
            n += 1

    _BY_SUBJECT.rows(conn, {}, values)  # compiled already
    sys.setprofile(count)
    try:
        _BY_SUBJECT.rows(conn, {}, values)
    finally:
        sys.setprofile(None)
    return n


def test_binding_a_list_makes_no_call_per_value(tmp_path: Path) -> None:
    """Lists padded to each compiled length bind with the same Python-level calls
    whatever their length (it formatted each parameter's name, and took a ``min``,
    per value: 32 of each for a search's 30 ids)."""
    m = _store(tmp_path)
    try:
        with m.backend.read() as conn:
            costs = {size: _events(conn, [f"s{i % 40}" for i in range(size)]) for size in IN_LISTS}
        assert len(set(costs.values())) == 1, costs
    finally:
        m.close()
