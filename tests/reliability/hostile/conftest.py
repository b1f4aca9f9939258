"""Fixtures for the hostile-input tests, each on a SQLite file and on PostgreSQL:
``h``, a ``Harness`` over one store whose examples each get a fresh tenant
(PostgreSQL examples share one schema per test), and ``store``, a plain
``Memory`` for the deterministic tests."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from chronomem import (
    Memory,
)
from tests.conftest import ManualClock, drop_pg_schema, make_pg_schema, require_pg

from .._support import check_invariants
from ._inputs import Harness


@pytest.fixture(params=["sqlite", "postgres"])
def h(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "sqlite":
        url = str(tmp_path / "fuzz.db")
        eng = create_engine(f"sqlite:///{url}", connect_args={"isolation_level": None})
        schema = None
    else:
        require_pg()
        url, schema = make_pg_schema()
        eng = create_engine(url, isolation_level="AUTOCOMMIT")
    m = Memory(url, clock=ManualClock(tick=timedelta(seconds=1)))
    conn = eng.connect()
    harness = Harness(request.param, m, conn)
    try:
        yield harness
        conn.close()
        m.close()
        check_invariants(url)
    finally:
        conn.close()
        m.close()
        eng.dispose()
        if schema:
            drop_pg_schema(schema)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    if request.param == "sqlite":
        with Memory(str(tmp_path / "bugs.db"), clock=ManualClock(tick=timedelta(seconds=1))) as m:
            yield m
        return
    require_pg()
    url, schema = make_pg_schema()
    try:
        with Memory(url, clock=ManualClock(tick=timedelta(seconds=1))) as m:
            yield m
    finally:
        drop_pg_schema(schema)
