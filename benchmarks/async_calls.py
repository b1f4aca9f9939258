"""Many concurrent async single-operation calls on a LangGraph store (issue #30).

    .venv/bin/python benchmarks/async_calls.py                 # 5,000 calls, SQLite and PostgreSQL
    .venv/bin/python benchmarks/async_calls.py --calls 1000 --backends sqlite

The workload: ``asyncio.gather`` of ``N`` ``aput`` calls (one item each, distinct
keys, no index), then ``asyncio.gather`` of ``N`` ``aget`` calls of those keys.
LangGraph's async stores coalesce such calls into few batches; ``ChronomemStore``
does too (``coalescing.py``). Peer in the same run: ``AsyncSqliteStore`` on a
file (``langgraph-checkpoint-sqlite``). The figure is the wall time of each
gather and its ratio to the peer's (goal: at most 3x). Writes
``results/async-calls.json``."""

from __future__ import annotations

import argparse
import asyncio
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import shown, stamp, table, write_json
from benchmarks.speed import pg_exec, pg_schema_url


async def _workload(store: Any, calls: int) -> dict[str, float]:
    t0 = time.perf_counter()
    await asyncio.gather(*(store.aput(("bench",), f"k{i}", {"i": i}) for i in range(calls)))
    t1 = time.perf_counter()
    got = await asyncio.gather(*(store.aget(("bench",), f"k{i}") for i in range(calls)))
    t2 = time.perf_counter()
    missing = sum(1 for g in got if g is None)
    if missing:
        raise SystemExit(f"{type(store).__name__}: {missing} of {calls} items missing")
    return {"aput_s": t1 - t0, "aget_s": t2 - t1}


async def _ours(url: str, calls: int) -> dict[str, float]:
    from langgraph.store.chronomem import ChronomemStore

    store = ChronomemStore(url)
    try:
        return await _workload(store, calls)
    finally:
        store.close()


async def _peer(path: str, calls: int) -> dict[str, float]:
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    async with AsyncSqliteStore.from_conn_string(path) as store:
        await store.setup()
        return await _workload(store, calls)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--out", default="async-calls.json")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        peer = asyncio.run(_peer(str(Path(tmp) / "peer.db"), args.calls))
        rows.append({"system": "AsyncSqliteStore", "backend": "sqlite", **peer})
        for backend in args.backends.split(","):
            if backend == "sqlite":
                ours = asyncio.run(_ours(str(Path(tmp) / "ours.db"), args.calls))
            else:
                schema = f"bench_{secrets.token_hex(4)}"
                pg_exec(f"CREATE SCHEMA {schema}")
                try:
                    ours = asyncio.run(_ours(pg_schema_url(schema), args.calls))
                finally:
                    pg_exec(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            rows.append({"system": "ChronomemStore", "backend": backend, **ours})
    for row in rows:
        row["aput_vs_peer"] = row["aput_s"] / peer["aput_s"]
        row["aget_vs_peer"] = row["aget_s"] / peer["aget_s"]
    path = write_json(args.out, {**stamp(), "calls": args.calls, "rows": rows})
    print(
        table(
            ["system", "backend", "aput s", "x peer", "aget s", "x peer"],
            [
                [
                    r["system"],
                    r["backend"],
                    r["aput_s"],
                    r["aput_vs_peer"],
                    r["aget_s"],
                    r["aget_vs_peer"],
                ]
                for r in rows
            ],
        )
    )
    print(f"wrote {shown(path)}")


if __name__ == "__main__":
    main()
