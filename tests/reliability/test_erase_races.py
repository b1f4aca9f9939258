"""Erasure against a writer of the same tenant, on PostgreSQL (where statements in
one transaction each see the latest commits): a write that commits while an
``erase`` or ``purge`` is between its reads and its deletes must either land
wholly before the sweep (and be swept with its vectors) or wait for it. It
must never leave a vector, a source link or a version behind half-erased.

Found by ``test_crash``: an orphan vector, the vector of a version a concurrent
supersession wrote after ``erase`` had listed the fact's versions but before it
deleted them. The writer is injected exactly there: the first time the sweep
deletes vectors, another connection writes, and the sweep goes on when that
write has committed or is seen waiting for a lock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine

from chronomem import Memory, erasure

from ._support import check_invariants


def _waiting_on_a_lock(url: str) -> bool:
    eng = create_engine(url)
    try:
        with eng.connect() as conn:
            n = conn.exec_driver_sql(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            ).scalar()
            return bool(n)
    finally:
        eng.dispose()


@pytest.fixture
def write_during_sweep(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[Callable[[], Any]], list[BaseException]]]:
    """``arm(write)``: the next erase or purge runs ``write`` on another thread when
    it first deletes vectors, and goes on once ``write`` has finished or waits
    for a lock. Returns the list the thread's exception (if any) lands in."""
    threads: list[threading.Thread] = []
    real = erasure.delete_vectors

    def arm(write: Callable[[], Any]) -> list[BaseException]:
        errors: list[BaseException] = []
        fired = False

        def run() -> None:
            try:
                write()
            except BaseException as exc:  # reported by the test
                errors.append(exc)

        def delete_vectors(*args: Any, **kw: Any) -> int:
            nonlocal fired
            if not fired:
                fired = True
                t = threading.Thread(target=run)
                threads.append(t)
                t.start()
                deadline = time.monotonic() + 20
                while t.is_alive() and not _waiting_on_a_lock(pg_url):
                    assert time.monotonic() < deadline, "the write neither finished nor waited"
                    time.sleep(0.01)
            return real(*args, **kw)

        monkeypatch.setattr(erasure, "delete_vectors", delete_vectors)
        return errors

    yield arm
    for t in threads:
        t.join(30)
        assert not t.is_alive()


def test_erase_meets_a_supersession_of_the_fact(
    pg_url: str, write_during_sweep: Callable[[Callable[[], Any]], list[BaseException]]
) -> None:
    with Memory(pg_url) as m, Memory(pg_url) as other:
        t, o = m.scoped(tenant="t"), other.scoped(tenant="t")
        first = t.remember("ann", "lives_in", "oslo")
        errors = write_during_sweep(lambda: o.remember("ann", "lives_in", "rome"))
        t.erase(first.fact_ids[0])
    assert not errors, errors
    check_invariants(pg_url)


def test_erase_subject_meets_a_new_fact_about_it(
    pg_url: str, write_during_sweep: Callable[[Callable[[], Any]], list[BaseException]]
) -> None:
    with Memory(pg_url) as m, Memory(pg_url) as other:
        t, o = m.scoped(tenant="t"), other.scoped(tenant="t")
        t.remember("ann", "likes", "tea")
        errors = write_during_sweep(lambda: o.remember("ann", "likes", "coffee"))
        t.erase_subject("ann")
        left = {f.object for f in t.facts(subject="ann", states=["live", "ended"])}
    assert not errors, errors
    # the new fact either went with the sweep or came after it, whole
    assert left <= {"coffee"}
    check_invariants(pg_url)


@pytest.mark.parametrize("scope", [{"user": "u1"}, {}], ids=["user", "tenant"])
def test_purge_meets_a_new_fact_in_the_scope(
    pg_url: str,
    scope: dict[str, str],
    write_during_sweep: Callable[[Callable[[], Any]], list[BaseException]],
) -> None:
    with Memory(pg_url) as m, Memory(pg_url) as other:
        t, o = m.scoped(tenant="t", **scope), other.scoped(tenant="t", **scope)
        t.remember("ann", "likes", "tea")
        errors = write_during_sweep(lambda: o.remember("bob", "likes", "coffee"))
        t.purge()
    assert not errors, errors
    check_invariants(pg_url)
