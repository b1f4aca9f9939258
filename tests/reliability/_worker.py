"""Process workers for the crash and concurrency tests.

Each worker is a real, separate OS process (forked from a forkserver that has
already imported chronomem, so a worker starts in milliseconds) that the test
can ``kill -9``. Every worker:

* sends ``ready`` on its pipe once its ``Memory`` is open;
* appends one line per committed write to ``OUT`` (``W tenant recorded_at_us``),
  and, as an erase deletes a fact's versions (inside its transaction, so before it
  commits), the ids it deletes (``E tenant version_id``: ``erasures_logged``),
  each with a single unbuffered ``write`` so a kill never leaves half a line;
* writes any exception that is not a ``ChronomemError`` to ``OUT.err`` and exits
  with status 3 (a documented error is part of normal operation under races:
  another worker may retract the fact this one was about to correct).

Modes:

``crash``  remember/end/correct/retract/episodes/erase in a loop, forever.
``mover``  moves one ONE slot between values, forever (or ``--writes N``).
``reader`` asserts the ONE slot always has exactly one live value (``--reads N``).
``opener`` waits for ``OUT.go``, then opens a fresh store and writes once.
``writer`` waits for ``OUT.go``, then races ``race_writes`` on a few shared slots
           for ``WRITE_S`` and writes its log (one dict per call) to ``OUT`` as
           JSON: the writer tests of ``test_concurrency`` check every entry.
"""

from __future__ import annotations

import json
import os
import random
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from multiprocessing.connection import Connection as Ready
from typing import Any

from sqlalchemy import Connection

from chronomem import ChronomemError, Memory, StaleFact, erasure

CITIES = ["oslo", "lima", "kyiv", "rome", "pune", "cork", "nice", "baku"]
FOODS = ["tea", "figs", "rice", "kale", "okra"]
SUBJECTS = ["ann", "bob", "cy"]
T_BASE = datetime(2024, 1, 1, tzinfo=timezone.utc)


def us(dt: datetime) -> int:
    """Microseconds since the epoch (how the store keeps instants)."""
    return (dt - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)


class Log:
    def __init__(self, path: str):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.err = path + ".err"

    def write(self, tenant: str, at: datetime | None) -> None:
        if at is not None:
            os.write(self.fd, f"W {tenant} {us(at)}\n".encode())

    def erasing(self, tenant: str, version_ids: Sequence[str]) -> None:
        os.write(self.fd, "".join(f"E {tenant} {v}\n" for v in version_ids).encode())

    def fail(self, what: str) -> None:
        with open(self.err, "a") as f:
            f.write(what)
        os._exit(3)


@contextmanager
def erasures_logged(log: Log) -> Iterator[None]:
    """While open, every ``erase`` in this process logs the ids of the versions it
    deletes as it deletes them: inside its transaction, so a kill after the commit
    still finds them logged. Read beforehand (``why``), the ids would miss a version
    another worker adds to the fact between that read and the erase, and the rows it
    superseded would look torn (``test_crash``)."""
    delete = erasure.delete_vectors

    def logged(conn: Connection, tenant: str, kind: str, ids: Sequence[str]) -> int:
        if kind == "v":
            log.erasing(tenant, ids)
        return delete(conn, tenant, kind, ids)

    erasure.delete_vectors = logged  # type: ignore[assignment]
    try:
        yield
    finally:
        erasure.delete_vectors = delete  # type: ignore[assignment]


def _some_date(rnd: random.Random) -> datetime:
    return T_BASE + timedelta(days=rnd.randrange(0, 3 * 365), seconds=rnd.randrange(86400))


def crash_step(rnd: random.Random, m: Memory, log: Log) -> None:
    tenant = m.scope.tenant
    s = rnd.choice(SUBJECTS)
    x = rnd.random()
    if x < 0.30:
        r = m.remember(s, "lives_in", rnd.choice(CITIES))
    elif x < 0.40:
        vf = _some_date(rnd)
        vt = vf + timedelta(days=rnd.randrange(1, 400)) if rnd.random() < 0.5 else None
        r = m.remember(s, "lives_in", rnd.choice(CITIES), valid_from=vf, valid_to=vt)
    elif x < 0.52:
        vt = _some_date(rnd) + timedelta(days=2000) if rnd.random() < 0.3 else None
        r = m.remember(s, "likes", rnd.choice(FOODS), valid_to=vt)
    elif x < 0.58:
        # A batch over distinct slots: one transaction, one transaction time.
        subjects = rnd.sample(SUBJECTS, 2)
        r = m.remember_many(
            [
                {"subject": subjects[0], "predicate": "lives_in", "obj": rnd.choice(CITIES)},
                {"subject": subjects[1], "predicate": "likes", "obj": rnd.choice(FOODS)},
            ]
        )
    elif x < 0.66:
        obj = rnd.choice([None, *FOODS])  # None: the ONE slot; else one MANY value
        r = m.end(s, "lives_in") if obj is None else m.end(s, "likes", obj)
    elif x < 0.84:
        live = m.facts(subject=s)
        if not live:
            return
        fid = rnd.choice(live).id
        new = rnd.choice(CITIES + FOODS)
        r = m.correct(fid, new) if rnd.random() < 0.6 else m.retract(fid)
    elif x < 0.95:
        ep = m.add_episode(f"{s} said something about {rnd.choice(CITIES)}", role="user")
        log.write(tenant, ep.recorded_at)
        r = m.remember(s, "likes", rnd.choice(FOODS), source=ep)
    elif x < 0.98:
        m.history(s)
        return
    else:
        live = m.facts(subject=s, states=["live", "ended", "scheduled"])
        if live:
            m.erase(rnd.choice(live).id)
        return
    log.write(tenant, r.recorded_at)


def run_crash(url: str, seed: int, out: str, count: int, ready: Ready) -> None:
    rnd = random.Random(seed)
    log = Log(out)
    base = Memory(url)
    views = [
        base.scoped(tenant="crash-a"),
        base.scoped(tenant="crash-b", user="u1"),
        base.scoped(tenant="crash-b", user="u2", session="s"),
    ]
    ready.send("ready")
    with erasures_logged(log):
        while True:
            try:
                crash_step(rnd, rnd.choice(views), log)
            except ChronomemError:
                pass
            except BaseException:
                log.fail(traceback.format_exc())


def run_mover(url: str, seed: int, out: str, writes: int, ready: Ready) -> None:
    rnd = random.Random(seed)
    log = Log(out)
    m = Memory(url).scoped(tenant="move")
    ready.send("ready")
    n = 0
    while writes < 0 or n < writes:
        try:
            if rnd.random() < 0.8:
                r = m.remember("ann", "lives_in", rnd.choice(CITIES))
            else:
                live = m.facts(subject="ann", predicate="lives_in")
                r = m.correct(live[0].id, rnd.choice(CITIES)) if live else None
            if r is not None:
                log.write("move", r.recorded_at)
        except ChronomemError:
            pass  # a correct racing another writer's move: StaleFact is documented
        except BaseException:
            log.fail(traceback.format_exc())
        n += 1


def run_reader(url: str, seed: int, out: str, reads: int, ready: Ready) -> None:
    log = Log(out)
    m = Memory(url).scoped(tenant="move")
    ready.send("ready")
    for _ in range(reads):
        try:
            live = m.facts(subject="ann", predicate="lives_in")
            if len(live) != 1:
                log.fail(f"saw {len(live)} live values: {[str(f) for f in live]}\n")
        except BaseException:
            log.fail(traceback.format_exc())
        time.sleep(0.001)


def run_opener(url: str, seed: int, out: str, count: int, ready: Ready) -> None:
    """Wait for ``OUT.go`` to appear, then open the (fresh) store and write once:
    several of these at once race to create the schema."""
    log = Log(out)
    ready.send("ready")
    while not os.path.exists(out + ".go"):
        time.sleep(0.001)
    try:
        with Memory(url) as m:
            r = m.scoped(tenant="open").remember(f"p{seed}", "lives_in", "oslo")
            log.write("open", r.recorded_at)
    except BaseException:
        log.fail(traceback.format_exc())


# -- writer: every worker on the same two subjects x {lives_in (ONE), likes (MANY)} x
# three objects, with remember (open-ended and bounded, explicit or default start),
# end and correct.

WRITE_S = 2.5  # of hammering, per worker
MAX_OPS = 120  # per worker
GRID = [datetime(2025, 1, 1, tzinfo=timezone.utc) + timedelta(days=30 * k) for k in range(8)]
RACE_SUBJECTS = ["alice", "bob"]
RACE_PREDICATES = ["lives_in", "likes"]
RACE_OBJECTS = ["Paris", "London", "Tokyo"]


def race_writes(mem: Memory, seed: int, deadline: float) -> list[dict[str, Any]]:
    """Random writes until the deadline; a log of what each did."""
    rng = random.Random(seed)
    log: list[dict[str, Any]] = []
    while time.time() < deadline and len(log) < MAX_OPS:
        s = rng.choice(RACE_SUBJECTS)
        p, o = rng.choice(RACE_PREDICATES), rng.choice(RACE_OBJECTS)
        kind = rng.choices(["remember", "end", "correct"], weights=[6, 2, 2])[0]
        entry: dict[str, Any] = {
            "kind": kind,
            "subject": s,
            "predicate": p,
            "obj": o,
            "worker": seed,
        }
        try:
            if kind == "remember":
                vf = rng.choice([None, *GRID[:5]])
                vt = None
                if vf is not None and rng.random() < 0.4:
                    vt = vf + timedelta(days=30 * rng.randint(1, 3))
                r = mem.remember(s, p, o, valid_from=vf, valid_to=vt)
                entry.update(vf=None if vf is None else us(vf), vt=None if vt is None else us(vt))
            elif kind == "end":
                at = rng.choice([None, *GRID])
                which = o if rng.random() < 0.5 else None
                r = mem.end(s, p, which, at=at)
                entry.update(at=None if at is None else us(at), obj=which)
            else:
                current = mem.facts(subject=s, predicate=p, states=["live", "scheduled", "ended"])
                if not current:
                    continue
                target = rng.choice(current)
                entry["target"] = target.id
                try:
                    r = mem.correct(target.id, o)
                except StaleFact:
                    # another writer retracted or corrected it since we read it
                    entry["stale"] = True
                    log.append(entry)
                    continue
            entry.update(
                rec=us(r.recorded_at),
                added=list(r.added),
                unchanged=list(r.unchanged),
                ended=list(r.ended),
                retracted=list(r.retracted),
                fact_ids=list(r.fact_ids),
            )
        except Exception as exc:  # reported by the test, with the traceback
            entry["error"] = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
        log.append(entry)
    return log


def run_writer(url: str, seed: int, out: str, count: int, ready: Ready) -> None:
    """Its own ``Memory`` on the shared database, connected before ``ready``; on
    ``OUT.go``, ``race_writes`` for ``WRITE_S``. A failure is reported in the log."""
    signalled = False
    try:
        mem = Memory(url)
        mem.facts()  # connect before the start signal
        ready.send("ready")
        signalled = True
        while not os.path.exists(out + ".go"):
            time.sleep(0.001)
        log = race_writes(mem, seed, time.time() + WRITE_S)
        mem.close()
    except Exception:  # pragma: no cover - reported through the log
        log = [{"kind": "process", "error": traceback.format_exc(), "worker": seed}]
        if not signalled:
            ready.send("ready")
    with open(out, "w") as f:
        json.dump(log, f)


MODES = {
    "crash": run_crash,
    "mover": run_mover,
    "reader": run_reader,
    "opener": run_opener,
    "writer": run_writer,
}


def run(mode: str, url: str, seed: int, out: str, count: int, ready: Ready) -> None:
    """The process target (picklable by reference for the forkserver)."""
    MODES[mode](url, seed, out, count, ready)
