"""Issue #14 E: concurrent ``register_predicate`` calls all succeed.

On PostgreSQL, 14 of 20 concurrent registrations of one predicate raised
``IntegrityError (UniqueViolation)``: each deleted the (absent) rows and then
inserted them. Registration now takes the tenant's clock lock first and
upserts, so concurrent registrations serialise: every call returns, the
registry ends with exactly one row per name, and the last registration's
spec is the one every store resolves."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from chronomem import Cardinality, Memory

THREADS = 20


def _race(url: str, work: Callable[[Memory, int], object]) -> list[BaseException]:
    stores = [Memory(url) for _ in range(THREADS)]
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            work(stores[i], i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for m in stores:
        m.close()
    return errors


@pytest.fixture(params=["sqlite", "postgres"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return str(request.getfixturevalue("pg_url"))


def _rows(url: str) -> list[tuple[str, str, str]]:
    m = Memory(url)  # make sure the schema exists before reading it raw
    m.close()
    eng = create_engine(url if "://" in url else f"sqlite:///{url}")
    with eng.connect() as conn:
        rows = conn.execute(
            text("SELECT name, canonical, cardinality FROM cm_predicates ORDER BY name")
        ).all()
    eng.dispose()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def test_concurrent_registrations_of_one_predicate_all_succeed(shared_url: str) -> None:
    errors = _race(
        shared_url,
        lambda m, i: m.register_predicate("mentor_of", cardinality="one", aliases=["coach_of"]),
    )
    assert errors == []
    assert _rows(shared_url) == [
        ("coach_of", "mentor_of", "one"),
        ("mentor_of", "mentor_of", "one"),
    ]
    with Memory(shared_url) as m:
        assert m.predicate("coach_of").cardinality is Cardinality.ONE


def test_concurrent_registrations_of_different_predicates_all_persist(shared_url: str) -> None:
    errors = _race(shared_url, lambda m, i: m.register_predicate(f"pred_{i}", aliases=[f"al_{i}"]))
    assert errors == []
    rows = _rows(shared_url)
    assert len(rows) == 2 * THREADS
    with Memory(shared_url) as m:
        assert all(m.predicate(f"al_{i}").name == f"pred_{i}" for i in range(THREADS))


def test_concurrent_re_registrations_end_with_one_consistent_spec(shared_url: str) -> None:
    errors = _race(
        shared_url,
        lambda m, i: m.register_predicate("rank", cardinality="one" if i % 2 else "many"),
    )
    assert errors == []
    rows = _rows(shared_url)
    assert [r[0] for r in rows] == ["rank"] and rows[0][2] in {"one", "many"}
    with Memory(shared_url) as m:
        assert m.predicate("rank").cardinality.value == rows[0][2]
