"""The pool's liveness check on PostgreSQL (``backends/pgping.py``): a connection
back from a call a moment ago is reused without the empty query the pre-ping
sent at every checkout (one round trip per search and per write); one that sat
idle longer than ``IDLE_S`` is pinged first, and replaced when dead."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from chronomem import Memory
from chronomem.backends import pgping


@pytest.fixture(params=["postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _pings(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    dialect = memory.backend.engine.dialect
    real = dialect.do_ping
    count = [0]

    def counted(dbapi_conn: Any) -> bool:
        count[0] += 1
        return bool(real(dbapi_conn))

    monkeypatch.setattr(dialect, "do_ping", counted)
    return count


def test_a_connection_reused_at_once_is_not_pinged(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("ann", "lives_in", "Lisbon")
    memory.search("ann lisbon")
    pings = _pings(memory, monkeypatch)
    for _ in range(3):
        memory.remember("ann", "likes", "tea")
        assert memory.search("ann lisbon")
    assert pings[0] == 0
    assert memory.backend.engine.pool._pre_ping is False  # type: ignore[attr-defined]


def test_an_idle_connection_is_pinged_and_replaced_when_dead(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("ann", "lives_in", "Lisbon")
    memory.search("ann lisbon")
    pings = _pings(memory, monkeypatch)
    monkeypatch.setattr(pgping, "IDLE_S", -1.0)  # every checkout counts as idle
    assert memory.search("ann lisbon")
    assert pings[0] == 1
    # the server ends every pooled connection (as a restart would): the ping
    # finds the next one dead and the pool opens a new one, the call succeeds
    pool = memory.backend.engine.pool
    assert pool.checkedin() == 1  # type: ignore[attr-defined]  # the one the calls reuse
    with memory.backend.engine.connect() as conn:
        mine = conn.execute(text("SELECT pg_backend_pid()")).scalar()
    killer = Memory(memory.backend.engine.url.render_as_string(hide_password=False))
    try:
        with killer.backend.engine.connect() as conn:
            ended = conn.execute(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid = :p"
                ),
                {"p": mine},
            ).scalar()
        assert ended == 1
    finally:
        killer.close()
    before = pings[0]
    hits = memory.search("ann lisbon")
    assert pings[0] == before + 1  # the dead one's ping; the new one is not pinged
    assert hits and hits[0].fact is not None and hits[0].fact.subject == "ann"
    assert memory.remember("ann", "likes", "coffee").fact_ids
