"""Several writers at once: what the per-tenant transaction clock costs (issue #19).

    .venv/bin/python benchmarks/writers.py                        # PostgreSQL and SQLite
    .venv/bin/python benchmarks/writers.py --backends postgres --writers 1,2,4 --batch 1,50

Every write of a tenant stamps that tenant's clock row and holds its lock until
commit (that is what makes transaction times follow commit order, docs/design.md
§1 and §3), so the writers of one tenant take turns at commit while writers of
different tenants do not. One configuration is (backend, system, writers, batch
size, tenancy):

* ``W`` worker processes start together (each opens its store, says it is ready,
  and waits for the word), each writes its own share of the facts — its own
  subjects, so no two writers ever touch one slot — in batches of ``batch`` facts
  (``batch`` 1 is one ``remember`` / ``put`` per fact);
* ``tenancy`` ``shared``: every writer writes the same tenant (one clock row);
  ``own``: each writer has its own tenant (``Memory(tenant=...)``);
* the figure is all facts written divided by the wall time from the first
  writer's start to the last writer's end, and its ratio to one writer.

Peers in the same run: LangGraph ``PostgresStore`` / ``SqliteStore`` (without an
index, so no embedding: a key-value put) from the same number of processes; they
have no tenancy, so they run once per (writers, batch). Writes
``results/writers-<backend>.json``. The box has 2 cores shared with the database
server, so more than 2 writers measures contention, not parallelism."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import common
from benchmarks.speed import FactSpec, pg_exec, pg_schema_url, workload

SYSTEMS = {
    "postgres": ("chronomem", "langgraph-postgres"),
    "sqlite": ("chronomem", "langgraph-sqlite-kv"),
}


def shares(facts: list[FactSpec], writers: int) -> list[list[FactSpec]]:
    """Each writer's facts: whole subjects, so no two writers share a slot."""
    subjects = sorted({f.subject for f in facts})
    owner = {s: i % writers for i, s in enumerate(subjects)}
    out: list[list[FactSpec]] = [[] for _ in range(writers)]
    for f in facts:
        out[owner[f.subject]].append(f)
    return out


# -- one writer (a worker process) ------------------------------------------------------------


def _open(system: str, url: str, tenant: str) -> tuple[Any, Any]:
    """A write function over a batch of facts, and a close function."""
    if system == "chronomem":
        from chronomem import Memory

        m = Memory(url, tenant=tenant)

        def write(batch: list[FactSpec]) -> None:
            if len(batch) == 1:
                f = batch[0]
                m.remember(f.subject, f.predicate, f.obj, valid_from=f.valid_from)
            else:
                m.apply(
                    [
                        m.assertion(f.subject, f.predicate, f.obj, valid_from=f.valid_from)
                        for f in batch
                    ]
                )

        return write, m.close
    from langgraph.store.base import PutOp

    if system == "langgraph-postgres":
        from langgraph.store.postgres import PostgresStore

        cm = PostgresStore.from_conn_string(url.replace("postgresql+psycopg://", "postgresql://"))
    else:
        from langgraph.store.sqlite import SqliteStore

        cm = SqliteStore.from_conn_string(url)
    store = cm.__enter__()

    def put(batch: list[FactSpec]) -> None:
        if len(batch) == 1:
            f = batch[0]
            store.put(f.namespace, f.key, f.value)
        else:
            store.batch([PutOp(f.namespace, f.key, f.value) for f in batch])

    return put, lambda: cm.__exit__(None, None, None)


def worker(spec: dict[str, Any]) -> None:
    wl = workload(spec["facts"], 0, 0, 0)
    mine = shares(wl.facts, spec["writers"])[spec["index"]]
    write, close = _open(spec["system"], spec["url"], spec["tenant"])
    print("ready", flush=True)
    sys.stdin.readline()  # the word: every writer starts at once
    start = time.time()
    b = spec["batch"]
    for i in range(0, len(mine), b):
        write(mine[i : i + b])
    end = time.time()
    close()
    print(json.dumps({"start": start, "end": end, "n": len(mine)}), flush=True)


# -- one configuration ------------------------------------------------------------------------


def prepare(backend: str, system: str, workdir: str) -> tuple[str, Any]:
    """A fresh store for one configuration: its URL and its cleanup."""
    if backend == "postgres":
        schema = f"bench_{secrets.token_hex(4)}"
        pg_exec(f"CREATE SCHEMA {schema}")
        url = pg_schema_url(schema)
        cleanup = lambda: pg_exec(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # noqa: E731
    else:
        url = os.path.join(workdir, f"{system}-{secrets.token_hex(4)}.db")
        cleanup = lambda: None  # noqa: E731
    if system == "chronomem":
        from chronomem import Memory

        Memory(url).close()  # create and migrate once, before the writers race
    elif system == "langgraph-postgres":
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(
            url.replace("postgresql+psycopg://", "postgresql://")
        ) as s:
            s.setup()
    else:
        from langgraph.store.sqlite import SqliteStore

        with SqliteStore.from_conn_string(url) as s:
            s.setup()
    return url, cleanup


def run_one(
    backend: str, system: str, writers: int, batch: int, tenancy: str, facts: int, workdir: str
) -> dict[str, Any]:
    url, cleanup = prepare(backend, system, workdir)
    try:
        procs = []
        for i in range(writers):
            spec = {
                "system": system,
                "url": url,
                "tenant": "shared" if tenancy == "shared" else f"tenant{i}",
                "facts": facts,
                "writers": writers,
                "index": i,
                "batch": batch,
            }
            procs.append(
                subprocess.Popen(
                    [sys.executable, __file__, "--worker", json.dumps(spec)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for p in procs:
            assert p.stdout is not None
            if p.stdout.readline().strip() != "ready":
                raise SystemExit(f"a {system} writer failed to start")
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        rows, failed = [], []
        for p in procs:
            out, err = p.communicate(timeout=1800)
            if p.returncode:
                failed.append(err.strip().splitlines()[-1] if err.strip() else str(p.returncode))
            else:
                rows.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        cleanup()
    config = {
        "backend": backend,
        "system": system,
        "writers": writers,
        "batch": batch,
        "tenancy": tenancy,
    }
    if failed:
        if system == "chronomem":
            raise SystemExit(f"a chronomem writer failed: {failed[0]}")
        # a peer that cannot take several writers is reported as such, not as a rate
        return {**config, "failed": failed[0]}
    wall = max(r["end"] for r in rows) - min(r["start"] for r in rows)
    n = sum(r["n"] for r in rows)
    return {
        **config,
        "facts": n,
        "wall_s": wall,
        "per_s": n / wall,
        "loadavg_after": os.getloadavg()[0],
    }


def table(rows: list[dict[str, Any]]) -> str:
    ok = [r for r in rows if "per_s" in r]  # a peer that failed has no rate
    one = {(r["system"], r["batch"], r["tenancy"]): r["per_s"] for r in ok if r["writers"] == 1}
    peer = {(r["writers"], r["batch"]): r["per_s"] for r in ok if r["system"] != "chronomem"}
    lines = [
        "| system | tenancy | batch | writers | facts/s | x one writer | x peer (same writers, batch) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "failed" in r:
            lines.append(
                f"| {r['system']} | {r['tenancy']} | {r['batch']} | {r['writers']} | "
                f"failed: {r['failed'][:80]} | - | - |"
            )
            continue
        base = one.get((r["system"], r["batch"], r["tenancy"]))
        p = peer.get((r["writers"], r["batch"]))
        vs_peer = r["per_s"] / p if p and r["system"] == "chronomem" else None
        lines.append(
            f"| {r['system']} | {r['tenancy']} | {r['batch']} | {r['writers']} | "
            f"{r['per_s']:,.0f} | {common.fmt(r['per_s'] / base if base else None)} | "
            f"{common.fmt(vs_peer)} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="postgres,sqlite")
    ap.add_argument("--writers", default="1,2,4")
    ap.add_argument("--batch", default="1,50", help="facts per write call, comma list")
    ap.add_argument("--facts", type=int, default=2000, help="facts per configuration")
    ap.add_argument("--no-write", action="store_true", help="do not write results JSON")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    counts = [int(x) for x in args.writers.split(",")]
    batches = [int(x) for x in args.batch.split(",")]
    with tempfile.TemporaryDirectory() as workdir:
        for backend in args.backends.split(","):
            rows = []
            for batch in batches:
                for system in SYSTEMS[backend]:
                    for tenancy in ("shared", "own") if system == "chronomem" else ("-",):
                        for w in counts:
                            r = run_one(backend, system, w, batch, tenancy, args.facts, workdir)
                            rows.append(r)
                            figure = (
                                f"{r['per_s']:8,.0f} facts/s"
                                if "per_s" in r
                                else f"failed: {r['failed']}"
                            )
                            print(
                                f"{backend:8} {system:20} {tenancy:6} batch {batch:4} "
                                f"writers {w}: {figure}",
                                flush=True,
                            )
            if not args.no_write:
                path = common.write_json(
                    f"writers-{backend}.json", {**common.stamp(), "rows": rows}
                )
                print(f"wrote {path}")
            print(f"\n{backend}\n" + table(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
