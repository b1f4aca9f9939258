"""Before/after search latency on one kept store, the two code versions alternating.

    git archive OLD core | tar -x -C /tmp/old        # the "before" code
    python benchmarks/search_ab.py --url URL --size 100000 --before /tmp/old/core \\
        --rounds 4 --queries 40 --out results/pg-roundtrips-100k-ab.jsonl
    python benchmarks/search_ab.py --hybrid --size 10000 [--before /tmp/old/core]

Each round runs one process per side (``--before`` first, then this checkout), each
warming up on 5 queries and timing ``--queries`` ``Memory.search(k=10)`` calls of the
form ``search.py`` draws ("where does userN live cityM"), so both sides see the same
load in turn. ``--hybrid``: peers.py's "PostgreSQL hybrid search" row alone (the core
store on ``CHRONOMEM_PG_URL`` beside ``InMemoryStore``, loaded with the same facts,
calls alternating), one process per side. Prints one JSON line per process."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def one(url: str, size: int, queries: int, seed: int) -> dict[str, object]:
    import chronomem
    from chronomem import Memory

    m = Memory(url)
    rnd = random.Random(seed)
    subjects = max(1, size // 5)
    qs = [
        f"where does user{rnd.randrange(subjects)} live city{rnd.randrange(500)}"
        for _ in range(queries + 5)
    ]
    for q in qs[:5]:
        m.search(q, k=10)
    ts = []
    for q in qs[5:]:
        t = time.perf_counter()
        m.search(q, k=10)
        ts.append((time.perf_counter() - t) * 1000)
    m.close()
    return {"code": chronomem.__file__, "ms": ts, "load": os.getloadavg()[0]}


def hybrid(size: int, rounds: int) -> dict[str, object]:
    import chronomem
    from benchmarks import common, peers, speed

    peers.BUDGET_S = 120
    with tempfile.TemporaryDirectory() as folder:
        stores = peers.Stores(folder, common.make_embedder("hashing"))
        try:
            stores.open("core-pg", "chronomem", "postgres")
            stores.open("InMemoryStore", "langgraph-memory", "memory")
            d = stores.drivers
            wl = speed.workload(size, rounds + 5, max(rounds + 5, 20), max(rounds + 5, 20))
            peers.load_alternating(d, wl.facts)
            sides = {s: peers.each(d[s].search, wl.queries) for s in ("core-pg", "InMemoryStore")}
            ms = peers.alternate(sides, rounds, warm=3)
        finally:
            stores.close()
    return {
        "code": chronomem.__file__,
        "core_pg_ms": ms["core-pg"],
        "inmemory_ms": ms["InMemoryStore"],
        "ratio": ms["core-pg"] / ms["InMemoryStore"],
        "load": os.getloadavg()[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", help="the kept store (search.py --database)")
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--before", help="a directory holding the old chronomem package")
    ap.add_argument("--hybrid", action="store_true")
    ap.add_argument("--out", help="append the JSON lines to this file too")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child: one side
    args = ap.parse_args()
    if args.one is not None:
        res = (
            hybrid(args.size, args.queries)
            if args.hybrid
            else one(args.url, args.size, args.queries, args.one)
        )
        print(json.dumps(res))
        return
    sides = ([("before", args.before)] if args.before else []) + [("after", None)]
    for r in range(args.rounds):
        for name, path in sides:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                [p for p in (path, str(HERE.parent), env.get("PYTHONPATH")) if p]
            )
            cmd = [sys.executable, __file__, "--one", str(r + 1), "--size", str(args.size)]
            cmd += ["--queries", str(args.queries)]
            cmd += ["--hybrid"] if args.hybrid else ["--url", args.url]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            res["side"] = name
            line = json.dumps(res)
            print(line, flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(line + "\n")
            if "ms" in res:
                assert isinstance(res["ms"], list)
                print(f"  {name}: p50 {statistics.median(res['ms']):.1f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
