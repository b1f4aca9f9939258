"""Concurrency: writers, readers and first opens in threads and processes, on one
SQLite file or one PostgreSQL schema. Processes are real, separate OS processes
(``_worker``, started through ``conftest.spawn``) that open their own
``Memory(url)``; threads share one, or have one each.

Concurrent writers on the same few slots (8 threads and 4 processes; every
worker hammers two subjects × {lives_in (ONE), likes (MANY)} × three objects with
remember (open-ended and bounded, explicit or default start), end and correct,
see ``_worker.race_writes``). Afterwards:

* invariant I1 holds (``cm_versions`` queried directly) and no slot holds two
  current versions with the same content;
* transaction times of all writes are distinct (one tenant clock);
* every write is visible, exactly, at its own transaction time: a remember's
  object is live at its ``valid_from`` as of ``known_at = recorded_at``, an
  end leaves nothing running across ``at``, a correct's fact is retracted;
* every version a remember added is still in the table (current or history)
  and is returned by ``facts(states=all)`` / ``get``;
* ``end`` of every value of a MANY slot and a concurrent add of a new value
  serialize one way or the other, never half of each.

Readers and moves:

* A ONE slot that always has exactly one value is moved by writers in two
  processes and two threads; readers (two processes, three threads) must always
  see exactly one live value — never zero (a close without its insert) or two
  (an insert without its close).
* Exact replay under concurrency: a read at ``as_of=t`` for a ``t`` some write
  returned is repeated at the end and must give the same answer.
* No ``database is locked`` (nor any other error) reaches the caller: SQLite
  writers wait on the busy timeout, they do not fail.
* Several processes opening one fresh store at the same moment all succeed, and
  a predicate registered through one store is seen by another.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from chronomem import ChronomemError, Memory, State
from chronomem.schema import SCHEMA_VERSION, versions

from ._support import check_invariants, raw
from ._worker import GRID, WRITE_S, race_writes, us
from .conftest import spawn, wait_ready, worker_errors

CITIES = ["oslo", "lima", "kyiv", "rome", "pune", "cork"]

THREADS = 8
PROCESSES = 4
US = timedelta(microseconds=1)
ALL = ["live", "ended", "scheduled", "retracted"]


class Threads:
    """Runs callables in threads and collects every exception they raise."""

    def __init__(self) -> None:
        self.errors: list[BaseException] = []
        self.threads: list[threading.Thread] = []

    def start(self, fn, *args) -> None:  # type: ignore[no-untyped-def]
        def body() -> None:
            try:
                fn(*args)
            except BaseException as exc:
                self.errors.append(exc)

        t = threading.Thread(target=body, daemon=True)
        t.start()
        self.threads.append(t)

    def join(self, timeout: float = 120) -> None:
        for t in self.threads:
            t.join(timeout)
            assert not t.is_alive(), "a thread hung"
        if self.errors:
            raise self.errors[0]


# -- concurrent writers on the same few slots ------------------------------------------


def hammer(url: str, out: Path) -> list[dict[str, Any]]:
    """THREADS threads (one shared ``Memory``) and PROCESSES ``writer`` processes,
    started together once every process has connected; every worker's log."""
    procs = [spawn("writer", url, 1000 + i, out / f"writer{i}.json") for i in range(PROCESSES)]
    mem = Memory(url)
    logs: list[list[dict[str, Any]]] = [[] for _ in range(THREADS)]
    start = threading.Barrier(THREADS + 1)

    def thread_main(i: int) -> None:
        start.wait()
        logs[i] = race_writes(mem, i, time.time() + WRITE_S)

    threads = Threads()
    for i in range(THREADS):
        threads.start(thread_main, i)
    for w in procs:
        wait_ready(w, timeout=120)  # every process has booted and connected
    for i in range(PROCESSES):
        (out / f"writer{i}.json.go").touch()
    start.wait()
    threads.join()
    log = [e for entries in logs for e in entries]
    for i, w in enumerate(procs):
        w.proc.join(120)
        assert w.proc.exitcode == 0, f"worker process exited with {w.proc.exitcode}"
        log += json.loads((out / f"writer{i}.json").read_text())
    mem.close()
    return log


def check(url: str, log: list[dict[str, Any]]) -> None:
    errors = [e for e in log if "error" in e]
    assert not errors, "writers failed:\n" + "\n".join(str(e["error"]) for e in errors[:5])
    done = [e for e in log if "rec" in e]
    workers = {e["worker"] for e in done}
    assert len(workers) == THREADS + PROCESSES, f"only workers {sorted(workers)} wrote anything"
    assert len(done) >= 4 * (THREADS + PROCESSES)

    # one tenant, one transaction clock: no two writes share a transaction time
    recs = [e["rec"] for e in done]
    assert len(set(recs)) == len(recs), "two writes got the same transaction time"

    mem = Memory(url)
    try:
        with mem.backend.read() as conn:
            rows = [dict(r) for r in conn.execute(select(versions)).mappings()]
        by_id = {r["id"]: r for r in rows}
        # I1 and no duplicate current versions
        current: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            if r["superseded_at"] is None:
                current.setdefault(r["slot"], []).append(r)
        for slot, vs in current.items():
            vs.sort(key=lambda r: r["valid_from"])
            contents = [(r["object_key"], r["valid_from"], r["valid_to"]) for r in vs]
            assert len(set(contents)) == len(contents), f"duplicate current versions in {slot}"
            for a, b in itertools.pairwise(vs):
                assert a["valid_to"] is not None and a["valid_to"] <= b["valid_from"], (
                    f"I1 violated in slot {slot}: {a} overlaps {b}"
                )
        # every version ever written is still there, with its own transaction time
        for e in done:
            for vid in e["added"] + e["ended"]:
                assert vid in by_id, f"version {vid} written by {e} is gone"
                assert by_id[vid]["recorded_at"] == e["rec"]
            for vid in e["retracted"]:
                assert by_id[vid]["closed_reason"] == "retracted"
                assert by_id[vid]["superseded_at"] == e["rec"]
        # every version a remember added is current, or reachable as history
        everything = {f.version_id for f in mem.facts(states=ALL)}
        for e in done:
            for vid in e["added"]:
                if by_id[vid]["superseded_at"] is None:
                    assert vid in everything, f"current version {vid} missing from facts(all)"
                else:
                    at = datetime.fromtimestamp(0, timezone.utc) + e["rec"] * US
                    then = mem.facts(
                        subject=e["subject"], predicate=e["predicate"], known_at=at, states=ALL
                    )
                    assert vid in {f.version_id for f in then}, f"{vid} of {e} not in history"

        # every write, read back at its own transaction time
        for e in done:
            at = datetime.fromtimestamp(0, timezone.utc) + e["rec"] * US
            if e["kind"] == "remember":
                vf = e["vf"] if e["vf"] is not None else e["rec"]
                valid_at = datetime.fromtimestamp(0, timezone.utc) + vf * US
                seen = mem.facts(
                    subject=e["subject"], predicate=e["predicate"], valid_at=valid_at, known_at=at
                )
                objs = [f.object_key for f in seen]
                if e["predicate"] == "lives_in":  # ONE: exactly the value just asserted
                    assert objs == [e["obj"].casefold()], f"{e}: at its own tx the slot held {objs}"
                else:
                    assert e["obj"].casefold() in objs, f"{e}: not live at its own tx ({objs})"
                assert bool(e["added"]) != bool(e["unchanged"]), e
            elif e["kind"] == "end":
                cut = e["at"] if e["at"] is not None else None
                if cut is None:
                    continue  # ended "now": the clock reading is not in the receipt
                valid_at = datetime.fromtimestamp(0, timezone.utc) + cut * US
                seen = mem.facts(
                    subject=e["subject"], predicate=e["predicate"], valid_at=valid_at, known_at=at
                )
                if e["obj"] is not None:
                    seen = [f for f in seen if f.object_key == e["obj"].casefold()]
                assert all(us(f.valid_from) == cut for f in seen), (
                    f"{e}: after end, still running across at: {seen}"
                )
            elif e["kind"] == "correct" and e["retracted"]:
                got = mem.get(e["target"], known_at=at)
                assert got and all(f.state is State.RETRACTED for f in got), (e, got)
                before = mem.get(e["target"], known_at=at - US)
                assert before and all(f.state is not State.RETRACTED for f in before)
        # a correct refused as stale: its fact really has no current version
        for e in log:
            if e.get("stale"):
                left = [
                    r for r in rows if r["fact_id"] == e["target"] and r["superseded_at"] is None
                ]
                assert left == [], f"correct refused as stale, but {e['target']} is current: {left}"
    finally:
        mem.close()


def test_concurrent_writers_sqlite_file(tmp_path: Path) -> None:
    url = str(tmp_path / "concurrent.db")
    Memory(url).close()
    log = hammer(url, tmp_path)
    check(url, log)


@pytest.mark.postgres
def test_concurrent_writers_postgres(pg_url: str, tmp_path: Path) -> None:
    Memory(pg_url).close()  # create the schema's tables once, before the race
    log = hammer(pg_url, tmp_path)
    check(pg_url, log)


def test_end_of_every_value_sees_a_value_added_concurrently(durable_url: str) -> None:
    """``end(subject, MANY predicate)`` with no object ends every value. A value
    another writer is adding at the same moment is either ended too (the end is
    serialized after it) or not yet there (serialized before it): never both
    stamped later and left running across ``at``.

    The other writer is paused inside its transaction (after its rows are
    inserted, before commit) by a write hook, so the interleaving is exact."""
    m = Memory(durable_url)
    m.remember("bob", "likes", "Paris", valid_from=GRID[0])
    inside, release = threading.Event(), threading.Event()
    results: dict[str, Any] = {}

    def pause_the_london_write(conn: Any, rows: list[dict[str, Any]]) -> None:
        if threading.current_thread().name == "adder" and any(
            r["object"] == "London" for r in rows
        ):
            inside.set()
            release.wait(20)

    def run(name: str, call: Any) -> None:
        try:
            results[name] = call()
        except Exception as exc:  # pragma: no cover - reported below
            results[name] = exc

    m._engine.hooks.append(pause_the_london_write)
    adder = threading.Thread(
        name="adder",
        target=run,
        args=("add", lambda: m.remember("bob", "likes", "London", valid_from=GRID[0])),
    )
    ender = threading.Thread(target=run, args=("end", lambda: m.end("bob", "likes", at=GRID[2])))
    try:
        adder.start()
        assert inside.wait(20), "the adding write never reached its insert"
        ender.start()
        time.sleep(0.5)  # the end is now waiting for the adder's locks
    finally:
        release.set()
        adder.join(30)
        ender.join(30)
        m._engine.hooks.remove(pause_the_london_write)
    try:
        add, end = results["add"], results["end"]
        assert not isinstance(add, Exception) and not isinstance(end, Exception), results
        assert end.recorded_at > add.recorded_at  # the end is serialized after the add ...
        at_end = m.facts(
            subject="bob", predicate="likes", valid_at=GRID[3], known_at=end.recorded_at
        )
        # ... so, believed at its own transaction time, nothing runs past GRID[2]
        assert [(f.object, f.valid_to) for f in at_end] == [], (
            "end() of every value missed the value added concurrently: "
            + str([(f.object, f.valid_from, f.valid_to) for f in at_end])
        )
        assert sorted(f.object for f in m.facts(valid_at=GRID[1])) == ["London", "Paris"]
        assert m.facts(valid_at=GRID[3]) == []
    finally:
        m.close()


# -- readers and moves, busy writers, first opens, the registry ---------------------


def test_readers_never_see_a_half_applied_move(durable_url: str, tmp_path: Path) -> None:
    base = Memory(durable_url)
    other = Memory(durable_url)  # a second engine (its own pool) in this process
    try:
        mv = base.scoped(tenant="move")
        mv.remember("ann", "lives_in", "oslo")
        stamps: list[datetime] = []
        replays: list[tuple[datetime, tuple[str, ...]]] = []
        done = threading.Event()

        procs = [spawn("mover", durable_url, i, tmp_path / f"mover{i}.log", 25) for i in range(2)]
        procs += [
            spawn("reader", durable_url, 0, tmp_path / f"reader{i}.log", 150) for i in range(2)
        ]
        for w in procs:
            wait_ready(w)

        def move(m: Memory, seed: int) -> None:
            rnd = random.Random(seed)
            for _ in range(25):
                if rnd.random() < 0.8:
                    r = m.remember("ann", "lives_in", rnd.choice(CITIES))
                else:
                    live = m.facts(subject="ann", predicate="lives_in")
                    try:
                        r = m.correct(live[0].id, rnd.choice(CITIES))
                    except ChronomemError:  # moved by someone else in between
                        continue
                assert r.recorded_at is not None
                stamps.append(r.recorded_at)

        def read(m: Memory, seed: int) -> None:
            rnd = random.Random(seed)
            while not done.is_set():
                live = m.facts(subject="ann", predicate="lives_in")
                assert len(live) == 1, f"saw {len(live)} live values: {[str(f) for f in live]}"
                if stamps:
                    t = rnd.choice(stamps)
                    then = m.facts(subject="ann", predicate="lives_in", as_of=t)
                    assert len(then) == 1, f"as_of {t}: {len(then)} live values"
                    replays.append((t, tuple(f.version_id for f in then)))

        writers = Threads()
        readers = Threads()
        writers.start(move, base.scoped(tenant="move"), 1)
        writers.start(move, other.scoped(tenant="move"), 2)
        for i in range(3):
            readers.start(read, (base if i % 2 else other).scoped(tenant="move"), 10 + i)
        writers.join()
        for w in procs:
            w.proc.join(120)
            assert w.proc.exitcode == 0, worker_errors(tmp_path)
        done.set()
        readers.join()
        assert not worker_errors(tmp_path)

        # Exact replay: what a read at as_of=t returned, it returns forever.
        assert len(replays) > 20, "the readers barely ran; the test proved nothing"
        for t, seen in replays:
            again = tuple(
                f.version_id for f in mv.facts(subject="ann", predicate="lives_in", as_of=t)
            )
            assert again == seen, f"replay at {t} drifted: {seen} -> {again}"
        assert len(mv.facts(subject="ann", predicate="lives_in")) == 1
        written = sum(1 for p in tmp_path.glob("mover*.log") for _ in p.read_text().splitlines())
        assert written > 0 and len(stamps) > 25
    finally:
        base.close()
        other.close()
    check_invariants(durable_url)


def test_sqlite_writers_wait_instead_of_failing(tmp_path: Path) -> None:
    """Eight writer threads, each with its own engine, plus erasures (which checkpoint
    the WAL) and big batches, against one file: every call succeeds."""
    path = str(tmp_path / "busy.db")
    Memory(path).close()
    stores = [Memory(path) for _ in range(8)]
    erase_times: list[float] = []
    erased: list[str] = []
    try:

        def hammer(m: Memory, seed: int) -> None:
            rnd = random.Random(seed)
            me = m.scoped(tenant="busy", user=f"u{seed}")
            for i in range(25):
                x = rnd.random()
                if x < 0.5:
                    me.remember(f"s{i % 3}", "lives_in", rnd.choice(CITIES))
                elif x < 0.7:
                    me.remember_many(
                        [
                            {"subject": f"b{j}", "predicate": "likes", "obj": f"o{i}"}
                            for j in range(100)
                        ]
                    )
                elif x < 0.85:
                    facts = me.facts()
                    if facts:
                        fid = rnd.choice(facts).id
                        erased.extend(v.version_id for v in me.why(fid).versions)
                        t0 = time.monotonic()
                        me.erase(fid)
                        erase_times.append(time.monotonic() - t0)
                else:
                    me.history("s0")
                    me.stats()

        threads = Threads()
        for i, m in enumerate(stores):
            threads.start(hammer, m, i)
        threads.join()
    finally:
        for m in stores:
            m.close()
    check_invariants(path, erased=erased)
    # An erase checkpoints the WAL; under load that must not stall for the busy timeout.
    assert not erase_times or max(erase_times) < 10, sorted(erase_times)[-3:]


def test_concurrent_first_open(
    durable_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Four processes open one fresh store at the same instant (a web server's
    workers starting): every one of them must open it and write."""
    workers = [spawn("opener", durable_url, i, tmp_path / f"open{i}.log") for i in range(4)]
    for w in workers:
        wait_ready(w)
    for w in workers:
        (tmp_path / f"open{workers.index(w)}.log.go").touch()
    for w in workers:
        w.proc.join(60)
    errors = worker_errors(tmp_path)
    assert all(w.proc.exitcode == 0 for w in workers), errors[-3000:]
    with raw(durable_url) as conn:
        version = (
            conn.exec_driver_sql("SELECT value FROM cm_meta WHERE key = 'schema_version'")
            .scalars()
            .all()
        )
    assert version == [str(SCHEMA_VERSION)]
    with Memory(durable_url) as m:
        assert len(m.scoped(tenant="open").facts()) == 4
    check_invariants(durable_url)


def test_registry_changes_reach_other_processes(durable_url: str) -> None:
    """Two stores on one database (two processes, two web workers): a predicate
    registered as ONE through one must be ONE for the other too — otherwise the
    other keeps writing it as MANY and the slot ends up with two live values."""
    with Memory(durable_url) as a, Memory(durable_url) as b:
        a.scoped(tenant="reg").remember("x", "moves_to", "somewhere")  # a's registry is now cached
        b.scoped(tenant="reg").register_predicate("moves_to", cardinality="one")
        a.scoped(tenant="reg").remember("carol", "moves_to", "paris")
        a.scoped(tenant="reg").remember("carol", "moves_to", "rome")
        for m in (a, b):
            live = m.scoped(tenant="reg").facts(subject="carol", predicate="moves_to")
            assert [f.object for f in live] == ["rome"]
