"""Shared fixtures: a manual clock, and stores on every backend.

PostgreSQL tests use the real server (``CHRONOMEM_PG_URL``, default the local
one). Each test gets its own schema, dropped afterwards. Without a server they
are skipped with a visible reason, unless ``CHRONOMEM_REQUIRE_PG=1`` (set by
``.ci/run``), which makes a missing server a failure."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from sqlalchemy import create_engine, text

from chronomem import Memory
from chronomem_adapters.conformance.clock import KitClock

from .citus_guard import citus_guard  # noqa: F401  (autouse: PostgreSQL SQL filters on one tenant)

PG_URL = os.environ.get("CHRONOMEM_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REQUIRE_PG = os.environ.get("CHRONOMEM_REQUIRE_PG") == "1"
# PostgreSQL 16 with pgvector (scripts/pgvector-server); CI sets CHRONOMEM_REQUIRE_PGVECTOR=1.
PGVECTOR_URL = os.environ.get(
    "CHRONOMEM_PGVECTOR_URL", "postgresql+psycopg://postgres@127.0.0.1:5433/test"
)
REQUIRE_PGVECTOR = os.environ.get("CHRONOMEM_REQUIRE_PGVECTOR") == "1"

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)

# Property tests assert behaviour, never time: no per-example deadline and no
# "input generation is slow" health check, both of which fail on a loaded machine
# (``make unit`` runs two workers on two cores) without anything being wrong. A
# test's own ``@settings`` still sets what it names.
settings.register_profile("chronomem", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("chronomem")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="run the slow, exhaustive tests")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--slow"):
        os.environ["CHRONOMEM_SLOW"] = "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


class ManualClock(KitClock):
    """The kit's injectable clock, starting at T0 and standing still between calls
    unless a test gives it a tick; tests move it with ``advance``."""

    def __init__(self, start: datetime = T0, tick: timedelta = timedelta(0)):
        super().__init__(start, tick)


_pg_state: dict[str, dict[str, object]] = {}


def pg_available(base: str = PG_URL) -> bool:
    state = _pg_state.setdefault(base, {})
    if "ok" not in state:
        try:
            eng = create_engine(base)
            with eng.connect() as conn:
                conn.execute(text("SELECT 1"))
                # Extensions live in public, so dropping a test schema never drops them.
                for ext in ("btree_gist", "vector"):
                    if conn.execute(
                        text("SELECT 1 FROM pg_available_extensions WHERE name = :n"), {"n": ext}
                    ).scalar():
                        conn.execute(text(f"CREATE EXTENSION IF NOT EXISTS {ext} SCHEMA public"))
                conn.commit()
            eng.dispose()
            state["ok"] = True
        except Exception as exc:  # pragma: no cover - depends on the machine
            state["ok"] = False
            state["why"] = str(exc).splitlines()[0]
    return bool(state["ok"])


def require_pg(base: str = PG_URL, required: bool = REQUIRE_PG) -> None:
    if not pg_available(base):
        msg = f"PostgreSQL not reachable at {base}: {_pg_state[base].get('why')}"
        if required:
            pytest.fail(msg)
        pytest.skip(msg)


def make_pg_schema(base: str = PG_URL) -> tuple[str, str]:
    """A fresh schema; returns (url with search_path, schema name)."""
    schema = f"cmtest_{secrets.token_hex(6)}"
    eng = create_engine(base)
    with eng.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        conn.commit()
    eng.dispose()
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema},public", schema


def drop_pg_schema(schema: str, base: str = PG_URL) -> None:
    eng = create_engine(base)
    with eng.connect() as conn:
        conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        conn.commit()
    eng.dispose()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(tick=timedelta(seconds=1))


@pytest.fixture
def pg_url() -> Iterator[str]:
    require_pg()
    url, schema = make_pg_schema()
    try:
        yield url
    finally:
        drop_pg_schema(schema)


@pytest.fixture
def pgvector_url() -> Iterator[str]:
    require_pg(PGVECTOR_URL, REQUIRE_PGVECTOR)
    url, schema = make_pg_schema(PGVECTOR_URL)
    try:
        yield url
    finally:
        drop_pg_schema(schema, PGVECTOR_URL)


@pytest.fixture(params=["sqlite", "postgres"])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store that outlives its processes: a SQLite file, or a PostgreSQL schema."""
    if request.param == "sqlite":
        yield str(tmp_path / "store.db")
        return
    require_pg()
    url, schema = make_pg_schema()
    try:
        yield url
    finally:
        drop_pg_schema(schema)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def url(backend: str, tmp_path: object, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A database URL per backend: in-memory SQLite, or a fresh PostgreSQL schema."""
    if backend == "sqlite":
        yield None
    elif backend == "pgvector":
        yield request.getfixturevalue("pgvector_url")
    else:
        yield request.getfixturevalue("pg_url")


@pytest.fixture
def memory(url: str | None, clock: ManualClock) -> Iterator[Memory]:
    m = Memory(url, clock=clock)
    try:
        yield m
    finally:
        m.close()


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)  # type: ignore[misc]
