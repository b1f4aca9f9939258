"""A write by id (``correct``, ``retract``) whose fact another writer retracts or
corrects after the id was resolved but before the write reads the fact's current
version ends as it would have in sequence, after the winner: a ``correct`` gets
``StaleFact`` (a ``ChronomemError``, documented), a ``retract`` retracts nothing
(retracting a retracted fact is a no-op); neither changes a row, and the winner's
write stands. On PostgreSQL, where the two run at once.

The race used to end in a bare ``KeyError('')``, which the concurrency workers
tolerated; the other writer is injected exactly between the two steps here, so
the race happens every run."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from chronomem import Memory, StaleFact, State, writes

from ._support import check_invariants, raw, snapshot


@pytest.mark.parametrize("loser", ["correct", "retract"])
@pytest.mark.parametrize("winner", ["correct", "retract"])
def test_a_write_by_id_that_loses_its_fact_is_stale(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, loser: str, winner: str
) -> None:
    real = writes.own_fact
    with Memory(pg_url) as m, Memory(pg_url) as other:
        t, o = m.scoped(tenant="t"), other.scoped(tenant="t")
        fid = t.remember("ann", "lives_in", "oslo").fact_ids[0]
        win: dict[str, Callable[[], Any]] = {
            "correct": lambda: o.correct(fid, "rome"),
            "retract": lambda: o.retract(fid),
        }
        errors: list[BaseException] = []
        state: dict[str, Any] = {}

        def own_fact(conn: Any, scope: Any, ref: str) -> str:
            resolved = real(conn, scope, ref)
            if threading.current_thread() is threading.main_thread() and "after" not in state:
                th = threading.Thread(target=lambda: _run(win[winner], errors))
                th.start()
                th.join(30)
                assert not th.is_alive(), "the other writer waited on this one"
                with raw(pg_url) as c:
                    state["after"] = snapshot(c)
            return resolved

        monkeypatch.setattr(writes, "own_fact", own_fact)
        if loser == "correct":
            with pytest.raises(StaleFact):
                t.correct(fid, "lima")
        else:
            assert not t.retract(fid).changed
        assert not errors, errors
        with raw(pg_url) as c:
            now = snapshot(c)
        # only the clock may move (a no-op write by id is stamped, as in sequence)
        now.pop("clock"), state["after"].pop("clock")
        assert now == state["after"], "the losing write changed a row"
        history = {(f.object, f.state) for f in t.history("ann", include_retracted=True)}
        assert ("oslo", State.RETRACTED) in history
        assert ("lima", State.LIVE) not in history
        if winner == "correct":
            assert ("rome", State.LIVE) in history
    check_invariants(pg_url)


def _run(write: Callable[[], Any], errors: list[BaseException]) -> None:
    try:
        write()
    except BaseException as exc:  # reported by the test
        errors.append(exc)
