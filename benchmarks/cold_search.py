"""Where a PostgreSQL search's time goes when it runs cold, as in peers.py's "PostgreSQL
hybrid search" row: each round runs the peer's search (``InMemoryStore``, ~80 ms of
Python on a quiet machine), then one of our searches right after it ("cold"), then one
more at once ("warm"), each on a query not searched before.

    CHRONOMEM_PG_URL=... nice .venv/bin/python benchmarks/cold_search.py [--size 10000]

Per search, besides the wall time: the client thread's CPU time and its voluntary
(waiting on the server) and involuntary (preempted) context switches, and, when the
server runs on this machine and its ``/proc`` is readable, the CPU time and voluntary
context switches (waits for the client's next message) of the pool's backends.
Medians of the times and means of the counts, cold and warm, one JSON line. Counts move less with the machine's
load than times do: compare them first."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import common, peers, speed


def _backend_pids(memory: Any) -> list[int]:
    """The pool's connections' server process ids (a search checks out one of them)."""
    pool = memory.backend.engine.pool
    recs = list(getattr(pool, "_pool").queue)  # noqa: B009 (QueuePool's idle connections)
    return [int(r.dbapi_connection.info.backend_pid) for r in recs if r.dbapi_connection]


def _server(pids: list[int]) -> tuple[float, int] | None:
    """The backends' CPU ms so far (``schedstat``: ns) and voluntary context switches."""
    cpu, waits = 0.0, 0
    try:
        for pid in pids:
            with open(f"/proc/{pid}/schedstat") as f:
                cpu += int(f.read().split()[0]) / 1e6
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        waits += int(line.split()[1])
    except OSError:
        return None
    return cpu, waits


def measured(call: Callable[[], Any], pids: list[int]) -> dict[str, float]:
    s0 = _server(pids)
    r0 = resource.getrusage(resource.RUSAGE_THREAD)
    c0, w0 = time.thread_time(), time.perf_counter()
    call()
    wall, cpu = time.perf_counter() - w0, time.thread_time() - c0
    r1 = resource.getrusage(resource.RUSAGE_THREAD)
    s1 = _server(pids)
    out = {
        "wall_ms": wall * 1e3,
        "client_cpu_ms": cpu * 1e3,
        "client_waits": float(r1.ru_nvcsw - r0.ru_nvcsw),
        "client_preempted": float(r1.ru_nivcsw - r0.ru_nivcsw),
    }
    if s0 is not None and s1 is not None:
        out["server_cpu_ms"] = s1[0] - s0[0]
        out["server_waits"] = float(s1[1] - s0[1])
    return out


def run(size: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        stores = peers.Stores(folder, common.make_embedder("hashing"))
        try:
            stores.open("core-pg", "chronomem", "postgres")
            stores.open("InMemoryStore", "langgraph-memory", "memory")
            d = stores.drivers
            if "core-pg" not in d or "InMemoryStore" not in d:
                return {"not_run": stores.missing}
            wl = speed.workload(size, 0, 2 * rounds + 25, 0)
            peers.load_alternating(d, wl.facts)
            ours, peer = d["core-pg"], d["InMemoryStore"]
            qs = wl.queries
            for q in qs[:5]:
                ours.search(q)
            pids = _backend_pids(ours.m)  # type: ignore[attr-defined]
            got: dict[str, list[dict[str, float]]] = {"cold": [], "warm": []}
            at = 5
            for i in range(rounds):
                peer.search(qs[i % 20])
                for side in ("cold", "warm"):
                    q = qs[at]
                    at += 1
                    got[side].append(measured(lambda q=q: ours.search(q), pids))
        finally:
            stores.close()

    def summary(k: str, values: list[float]) -> float:
        """Times: the median; counts: the mean (a median of small integers says little)."""
        counted = k.endswith(("waits", "preempted"))
        return round(statistics.mean(values) if counted else statistics.median(values), 3)

    return {
        side: {k: summary(k, [r[k] for r in rows]) for k in rows[0]} for side, rows in got.items()
    } | {"size": size, "rounds": rounds, "load": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    print(json.dumps(run(args.size, args.rounds)))


if __name__ == "__main__":
    main()
