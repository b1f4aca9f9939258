"""What the served-read log costs a read (issue #16).

One store of ``--facts`` facts; the same reads (``facts`` by subject, ``search``,
``recall``) timed with ``read_log`` off and on, interleaved in rounds so both see
the same machine load. Prints one JSON line per backend with the median of each
read off/on and the ratio (target: on ≤ 1.2× off). Writes are untouched by the
switch (a read checks one attribute), so only reads are timed.

    .venv/bin/python benchmarks/readlog.py --facts 2000 --rounds 5
    .venv/bin/python benchmarks/readlog.py --url postgresql+psycopg://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chronomem import Memory

WORDS = ["paris", "berlin", "rome", "lisbon", "oslo", "tea", "coffee", "jazz", "chess", "rust"]
PREDICATES = ["lives_in", "likes", "works_at", "plays"]


def build(url: str | None, n: int, tenant: str) -> Memory:
    m = Memory(url).scoped(tenant=tenant)
    m.remember_many(
        {
            "subject": f"person{i % max(1, n // 4)}",
            "predicate": PREDICATES[i % len(PREDICATES)],
            "obj": f"{WORDS[i % len(WORDS)]} {i}",
        }
        for i in range(n)
    )
    return m


def time_calls(fn: Callable[[int], Any], calls: int) -> list[float]:
    out = []
    for i in range(calls):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def run(url: str | None, n: int, rounds: int, calls: int) -> dict[str, Any]:
    m = build(url, n, f"bench{uuid.uuid4().hex[:8]}")
    subjects = max(1, n // 4)
    reads: dict[str, Callable[[int], Any]] = {
        "facts": lambda i: m.facts(subject=f"person{i % subjects}"),
        "search": lambda i: m.search(f"{WORDS[i % len(WORDS)]} person{i % subjects}", k=10),
        "recall": lambda i: m.recall(f"where does person{i % subjects} live", k=8),
    }
    for fn in reads.values():  # warm caches (search mirror, registry)
        time_calls(fn, 3)
    times: dict[str, dict[bool, list[float]]] = {k: {False: [], True: []} for k in reads}
    for r in range(rounds):
        for name, fn in reads.items():
            for i in range(calls):  # the same call off and on, back to back
                for on in (False, True) if (i + r) % 2 else (True, False):
                    m.read_log = on
                    t0 = time.perf_counter()
                    fn(i)
                    times[name][on].append((time.perf_counter() - t0) * 1000)
    m.read_log = False
    row: dict[str, Any] = {
        "backend": m.backend.engine.dialect.name if url else "sqlite-memory",
        "facts": n,
        "logged_reads": len(m.reads()),
    }
    for name, t in times.items():
        off, on = statistics.median(t[False]), statistics.median(t[True])
        row[f"{name}_off_ms"] = round(off, 3)
        row[f"{name}_on_ms"] = round(on, 3)
        row[f"{name}_ratio"] = round(on / off, 3)
    m.close()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--url", action="append", help="a store URL (default: in-memory and a file)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        urls = args.url or [None, f"sqlite:///{Path(tmp) / 'bench.db'}"]
        for url in urls:
            print(json.dumps(run(url, args.facts, args.rounds, args.calls)), flush=True)


if __name__ == "__main__":
    main()
