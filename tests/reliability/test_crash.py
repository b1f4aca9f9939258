"""Crash safety: writers in separate processes are ``kill -9``-ed at random points
(while opening a fresh store, mid-transaction, mid-commit, mid-erase), then the
store must reopen with every invariant intact.

Per backend, ``CHRONOMEM_CRASH_KILLS`` kills (default 60, 300 with ``--slow``):
the first ``CREATE_KILLS`` hit a lone worker while it creates the schema of the
fresh store; then ``PARALLEL`` writers run at once, each killed 0.02-0.35 s after
it is ready (a tenth of them within 50 ms of starting, while they open the
store). ``CHRONOMEM_CRASH_SEED`` replays a run (the seed is printed)."""

from __future__ import annotations

import os
import random
import time
from collections import defaultdict
from datetime import datetime, timezone
from multiprocessing.connection import wait as mp_wait
from pathlib import Path

import pytest

from chronomem import Memory

from ._support import check_invariants, is_sqlite, raw
from ._worker import Log, erasures_logged
from .conftest import SLOW, Worker, spawn, worker_errors

KILLS = int(os.environ.get("CHRONOMEM_CRASH_KILLS", "300" if SLOW else "60"))
PARALLEL = 4
CREATE_KILLS = 4


def _kill_while_creating(url: str, out_dir: Path, kills: int, rnd: random.Random) -> None:
    """One worker at a time on the fresh store, killed while it creates the schema.
    (One at a time: concurrent first opens are ``test_concurrency``'s business.)"""
    for i in range(kills):
        w = spawn("crash", url, i, out_dir / f"w-create{i}.log")
        time.sleep(rnd.uniform(0.0, 0.3))
        if w.proc.exitcode is None:
            w.kill9()
        else:
            assert w.proc.exitcode == 0, worker_errors(out_dir)
    with Memory(url):  # whatever the kills left, the store opens (and finishes creating)
        pass


def _kill_writers(url: str, out_dir: Path, kills: int, seed: int) -> dict[str, int]:
    rnd = random.Random(seed)
    active: list[Worker] = []
    selfexit: list[str] = []
    _kill_while_creating(url, out_dir, CREATE_KILLS, rnd)
    spawned, done, early = 0, CREATE_KILLS, CREATE_KILLS
    deadline = time.monotonic() + 240
    while done < kills:
        assert time.monotonic() < deadline, f"only {done} kills in 240 s"
        while len(active) < PARALLEL and done + len(active) < kills:
            w = spawn("crash", url, seed * 1000 + spawned, out_dir / f"w{spawned}.log")
            if rnd.random() < 0.1:  # killed while it starts up and opens the store
                w.kill_at, w.early = time.monotonic() + rnd.uniform(0.0, 0.05), True
            active.append(w)
            spawned += 1
        waiting = [w.ready for w in active if w.kill_at is None]
        for conn in mp_wait(waiting, 0.01) if waiting else ():
            w = next(w for w in active if w.ready is conn)
            try:
                if conn.recv() == "ready":
                    w.kill_at = time.monotonic() + rnd.uniform(0.02, 0.35)
            except EOFError:  # it died; reported below
                w.kill_at = time.monotonic() + 60
        if not waiting:
            time.sleep(0.002)
        for w in list(active):
            if w.proc.exitcode is not None:
                selfexit.append(f"worker exited by itself with code {w.proc.exitcode}")
            elif w.kill_at is not None and time.monotonic() >= w.kill_at:
                w.kill9()
                early += w.early
            else:
                continue
            w.ready.close()
            active.remove(w)
            done += 1
    assert not active
    assert not selfexit, "\n".join(selfexit[:5]) + "\n" + worker_errors(out_dir)
    return {"kills": done, "early": early, "while_writing": done - early}


def _read_logs(url: str, out_dir: Path) -> tuple[int, set[str]]:
    """Transaction times: strictly increasing within each writer, never shared by two
    writes of one tenant, never ahead of the tenant's clock. Returns the number of
    committed writes and the ids of versions a worker was about to erase."""
    seen: dict[str, set[int]] = defaultdict(set)
    erased: set[str] = set()
    total = 0
    for log in sorted(out_dir.glob("w*.log")):
        last: dict[str, int] = {}
        for line in log.read_text().splitlines():
            kind, tenant, value = line.split()
            if kind == "E":
                erased.add(value)
                continue
            t = int(value)
            assert t > last.get(tenant, -(2**63)), f"{log.name}: {tenant} went back to {t}"
            last[tenant] = t
            assert t not in seen[tenant], f"two writes of {tenant} share transaction time {t}"
            seen[tenant].add(t)
            total += 1
    with raw(url) as conn:
        clock = dict(
            tuple(r) for r in conn.exec_driver_sql("SELECT tenant, last_us FROM cm_txclock")
        )
    for tenant, stamps in seen.items():
        assert max(stamps) <= clock[tenant]
    return total, erased


def test_kill9_writers_leave_a_consistent_store(durable_url: str, tmp_path: Path) -> None:
    seed = int(os.environ.get("CHRONOMEM_CRASH_SEED", str(random.randrange(10**6))))
    out = tmp_path / "logs"
    out.mkdir()
    started = time.monotonic()
    counts = _kill_writers(durable_url, out, KILLS, seed)
    writes, erased = _read_logs(durable_url, out)
    sizes = check_invariants(durable_url, erased=erased)
    elapsed = time.monotonic() - started
    print(
        f"\ncrash[{'sqlite' if is_sqlite(durable_url) else 'postgres'}] seed={seed} "
        f"{counts} writes={writes} {sizes} {elapsed:.1f}s"
    )
    assert counts["kills"] >= KILLS
    # The writers did real work between kills, or the test proves nothing.
    assert writes >= KILLS // 2, f"only {writes} committed writes across {KILLS} workers"
    assert sizes["versions"] > 0

    # The store reopens and every read path works on what the crashes left.
    with Memory(durable_url) as m:
        for view in (
            m.scoped(tenant="crash-a"),
            m.scoped(tenant="crash-b", user="u1"),
            m.scoped(tenant="crash-b", user="u2", session="s"),
        ):
            st = view.stats()
            assert st.versions >= st.current_versions
            for s in ("ann", "bob", "cy"):
                live = view.facts(subject=s, predicate="lives_in")
                assert len(live) <= 1, f"a ONE slot has {len(live)} live values: {live}"
                for f in view.history(s, include_retracted=True):
                    assert f.id in {v.id for v in view.why(f.id).versions}
            if hasattr(view, "search"):
                res = view.search("oslo tea ann", k=5)
                assert not getattr(res, "degraded", False), getattr(res, "failed_legs", None)
        # ... and it still takes writes.
        r = m.scoped(tenant="crash-a").remember("ann", "lives_in", "after-the-crash")
        assert r.added
    check_invariants(durable_url, erased=erased)


def test_the_erase_log_names_a_version_written_after_the_fact_was_read(
    durable_url: str, tmp_path: Path
) -> None:
    """What the crash workers log as erased is what the erase deleted, including a
    version another writer added to the fact after it was chosen: the bounded
    ``oslo`` extends the fact (a new version of it) and supersedes ``lima``'s
    piece, which survives the erase pointing at that version."""
    jan, mar, jun = (datetime(2024, m, 1, tzinfo=timezone.utc) for m in (1, 3, 6))
    m = Memory(durable_url).scoped(tenant="t", user="u1")
    try:
        m.remember("ann", "lives_in", "oslo", valid_from=jan, valid_to=jun)
        m.remember("ann", "lives_in", "lima", valid_from=jun)
        chosen = m.facts(subject="ann", states=["live", "ended", "scheduled"])
        fid = next(f.id for f in chosen if f.object == "oslo")
        read_before = {v.version_id for v in m.why(fid).versions}
        m.remember(
            "ann",
            "lives_in",
            "oslo",
            valid_from=mar,
            valid_to=datetime(2025, 1, 1, tzinfo=timezone.utc),
        )
        added = {v.version_id for v in m.why(fid).versions} - read_before
        assert added, "the write did not add a version to the chosen fact"
        out = tmp_path / "logs"
        out.mkdir()
        with erasures_logged(Log(str(out / "w0.log"))):
            m.erase(fid)
    finally:
        m.close()
    _, erased = _read_logs(durable_url, out)
    assert read_before | added == erased
    check_invariants(durable_url, erased=erased)


def test_the_invariant_checker_catches_damage(tmp_path: Path) -> None:
    """The checker the crash and concurrency tests rely on finds each kind of
    damage it claims to: a passing crash test means something."""
    damages = {
        "I1 broken": "UPDATE cm_versions SET superseded_at = NULL, superseded_by = NULL, "
        "closed_reason = NULL WHERE closed_reason = 'superseded'",
        "torn supersession": "DELETE FROM cm_versions WHERE id IN "
        "(SELECT superseded_by FROM cm_versions WHERE superseded_by IS NOT NULL)",
        "torn index write": "INSERT INTO cm_versions_fts(rowid, body) VALUES (987654, 'ghost')",
        "orphan vector": "INSERT INTO cm_vectors VALUES ('t', 'v', 'nope', 'e', 1, x'00000000', 1)",
        "cites a missing episode": "INSERT INTO cm_sources SELECT tenant, fact_id, 'gone', "
        "recorded_at, NULL FROM cm_versions LIMIT 1",
        "behind a stamp": "UPDATE cm_txclock SET last_us = 0",
        "recorded_at >= superseded_at": "UPDATE cm_versions SET recorded_at = superseded_at "
        "WHERE superseded_at IS NOT NULL",
    }
    for i, (problem, sql) in enumerate(damages.items()):
        path = str(tmp_path / f"damaged{i}.db")
        with Memory(path) as m:
            t = m.scoped(tenant="t")
            ep = t.add_episode("source")
            t.remember("ann", "lives_in", "oslo", source=ep)
            t.remember("ann", "lives_in", "rome")
        check_invariants(path)
        with raw(path) as conn:
            conn.exec_driver_sql(sql)
        with pytest.raises(AssertionError, match=problem):
            check_invariants(path)
