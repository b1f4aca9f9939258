"""LangGraph ``list_namespaces`` as the store grows, against LangGraph's own stores
(issue #32, item 3): the same items (``--sizes``, spread over ``--namespaces``
namespaces ``("users", u, kind)``) put into ``ChronomemStore`` (SQLite file;
``--postgres``: also a PostgreSQL schema beside ``PostgresStore``), ``SqliteStore``
(file) and ``InMemoryStore``, without a search index (no embedding). Then
``--rounds`` rounds, each calling every store once per listing in turn (so all see
the same machine load): the whole listing, a prefix, and ``max_depth=2``. Prints one
JSON line per size with medians in ms and the ratios to ``SqliteStore`` (target:
``≤ 3×``, and flat: the 10k figure ≈ the 1k figure).

    nice .venv/bin/python benchmarks/namespaces.py --sizes 1000 10000 --rounds 200

Each line is also appended to ``results/namespaces.jsonl`` with the commit, the
machine and the load (``--out`` another name under ``results/``).

``--calls``: the per-call cost of ``list_namespaces(limit=100)`` and of ``get`` on
``peers.py``'s LangGraph workload (``speed.workload``: a namespace every eight
items, a one-valued key overwritten), ``ChronomemStore`` against ``SqliteStore``
(files, no index) loaded alike; each round calls both, the order reversed every
other round; per side the median wall time and the trimmed mean of the thread's CPU
time (``time.thread_time``, steadier on a loaded box), and for ours the statements,
rows and SQLite VM steps of one call. Appended to ``results/namespaces-calls.jsonl``.
An A/B of two commits runs this twice, once with ``PYTHONPATH`` pointing at a
``git archive`` of the other commit's ``core langgraph_pkg adapters``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import common
from benchmarks.speed import pg_exec, pg_schema_url

LISTINGS: dict[str, dict[str, Any]] = {
    "all": {"limit": 100},
    "prefix": {"prefix": ("users", "3"), "limit": 100},
    "depth2": {"max_depth": 2, "limit": 100},
}


def _fill(store: Any, n: int, namespaces: list[tuple[str, ...]]) -> None:
    from langgraph.store.base import PutOp

    for at in range(0, n, 1000):
        store.batch(
            [
                PutOp(namespaces[i % len(namespaces)], f"k{i}", {"text": f"item {i}"}, index=False)
                for i in range(at, min(at + 1000, n))
            ]
        )


def run(n: int, n_ns: int, rounds: int, folder: str, postgres: bool) -> dict[str, Any]:
    from langgraph.store.memory import InMemoryStore
    from langgraph.store.sqlite import SqliteStore

    from langgraph.store.chronomem import ChronomemStore

    namespaces = [("users", str(u), f"kind{j}") for u in range(n_ns // 2) for j in range(2)]
    stack = contextlib.ExitStack()
    stores: dict[str, Any] = {}
    stores["chronomem"] = stack.enter_context(ChronomemStore(str(Path(folder) / f"cm-{n}.db")))
    sq = stack.enter_context(SqliteStore.from_conn_string(str(Path(folder) / f"lg-{n}.db")))
    sq.setup()
    stores["SqliteStore"] = sq
    stores["InMemoryStore"] = InMemoryStore()
    if postgres:
        from langgraph.store.postgres import PostgresStore

        for side in ("cm", "lg"):
            schema = f"bench_ns_{side}_{secrets.token_hex(4)}"
            pg_exec(f"CREATE SCHEMA {schema}")
            stack.callback(pg_exec, f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            url = pg_schema_url(schema)
            if side == "cm":
                stores["chronomem-pg"] = stack.enter_context(ChronomemStore(url))
            else:
                pg = stack.enter_context(
                    PostgresStore.from_conn_string(url.replace("postgresql+psycopg", "postgresql"))
                )
                pg.setup()
                stores["PostgresStore"] = pg
    with stack:
        for store in stores.values():
            _fill(store, n, namespaces)
        times: dict[str, dict[str, list[float]]] = {
            name: {s: [] for s in stores} for name in LISTINGS
        }
        expected = {
            name: stores["InMemoryStore"].list_namespaces(**q) for name, q in LISTINGS.items()
        }
        for name, q in LISTINGS.items():
            for s, store in stores.items():  # warm up, and check they agree
                assert store.list_namespaces(**q) == expected[name], (s, name)
        for _ in range(rounds):
            for name, q in LISTINGS.items():
                for s, store in stores.items():
                    call: Callable[[], Any] = lambda st=store, q=q: st.list_namespaces(**q)  # noqa: E731
                    t = time.perf_counter()
                    call()
                    times[name][s].append((time.perf_counter() - t) * 1000)
    out: dict[str, Any] = {"items": n, "namespaces": len(namespaces), "rounds": rounds}
    for name in LISTINGS:
        med = {s: statistics.median(v) for s, v in times[name].items()}
        out[name] = {f"{s}_ms": round(m, 4) for s, m in med.items()}
        out[name]["ratio_vs_SqliteStore"] = round(med["chronomem"] / med["SqliteStore"], 2)
        if postgres:
            out[name]["pg_ratio_vs_PostgresStore"] = round(
                med["chronomem-pg"] / med["PostgresStore"], 2
            )
    out["loadavg"] = os.getloadavg()
    return out


def _cost(call: Callable[[], Any]) -> dict[str, int]:
    """Statements, rows and SQLite VM steps of one ``call`` (prepared statements, on a
    held connection or as a point read of their own: ``Prepared.point_rows``, whose
    statement runs on a file store's kept driver connection, watched as it is taken)."""
    from chronomem import prepared
    from chronomem.backends.sqlite import SqliteBackend

    seen = {"statements": 0, "rows": 0, "vm_steps": 0}
    original, point, take = (
        prepared.Prepared.rows,
        prepared.Prepared.point_rows,
        SqliteBackend._take,
    )
    watched: list[Any] = []

    def step() -> int:
        seen["vm_steps"] += 1
        return 0

    def counted(out: Any) -> Any:
        seen["statements"] += 1
        seen["rows"] += len(out)
        return out

    def rows(self: Any, conn: Any, params: Any) -> Any:
        raw = conn.connection.driver_connection
        raw.set_progress_handler(step, 1)
        try:
            return counted(original(self, conn, params))
        finally:
            raw.set_progress_handler(None, 1)

    def taken(self: Any) -> Any:
        pooled = take(self)
        pooled.driver_connection.set_progress_handler(step, 1)
        watched.append(pooled.driver_connection)
        return pooled

    def point_rows(self: Any, backend: Any, params: Any) -> Any:
        try:
            return counted(point(self, backend, params))
        finally:
            for raw in watched:
                raw.set_progress_handler(None, 1)
            watched.clear()

    prepared.Prepared.rows = rows  # type: ignore[method-assign]
    prepared.Prepared.point_rows = point_rows  # type: ignore[method-assign]
    SqliteBackend._take = taken  # type: ignore[method-assign]
    try:
        call()
    finally:
        prepared.Prepared.rows = original  # type: ignore[method-assign]
        prepared.Prepared.point_rows = point  # type: ignore[method-assign]
        SqliteBackend._take = take  # type: ignore[method-assign]
    return seen


def calls(n: int, rounds: int, folder: str) -> dict[str, Any]:
    """``--calls`` at ``n`` items (see the module docstring)."""
    import random

    from langgraph.store.base import PutOp
    from langgraph.store.sqlite import SqliteStore

    from benchmarks import speed

    emb = common.make_embedder("hashing")
    index = {"dims": emb.dim, "embed": common.LangChainEmbed(emb), "fields": ["text"]}
    facts = speed.workload(n, 0, 1, 1).facts
    with contextlib.ExitStack() as stack:
        ours = speed.chronomem_langgraph_store(str(Path(folder) / f"calls-cm-{n}.db"), index)
        stack.callback(ours.close)
        sq = stack.enter_context(SqliteStore.from_conn_string(str(Path(folder) / f"calls-{n}.db")))
        sq.setup()
        for at in range(0, n, speed.BATCH):
            for store in (ours, sq):
                store.batch(
                    [PutOp(f.namespace, f.key, f.value) for f in facts[at : at + speed.BATCH]]
                )
        rng = random.Random(3)
        picks = [
            (facts[i].namespace, facts[i].key) for i in (rng.randrange(n) for _ in range(rounds))
        ]
        sides = {
            "list_namespaces": {
                s: (lambda i, s=s: s.list_namespaces(limit=100)) for s in (ours, sq)
            },
            "get": {s: (lambda i, s=s: s.get(*picks[i])) for s in (ours, sq)},
        }
        assert ours.list_namespaces(limit=100) == sq.list_namespaces(limit=100)
        out: dict[str, Any] = {"items": n, "rounds": rounds, "mode": "calls"}
        for what, fns in sides.items():
            order = list(fns)
            wall: dict[Any, list[float]] = {s: [] for s in order}
            cpu: dict[Any, list[float]] = {s: [] for s in order}
            for i in range(rounds):
                for s in order if i % 2 == 0 else order[::-1]:
                    t, c = time.perf_counter(), time.thread_time()
                    fns[s](i)
                    cpu[s].append((time.thread_time() - c) * 1000)
                    wall[s].append((time.perf_counter() - t) * 1000)
            cut = rounds // 10
            w = {s: statistics.median(v) for s, v in wall.items()}
            c = {s: statistics.mean(sorted(v)[cut : len(v) - cut]) for s, v in cpu.items()}
            out[what] = {
                "chronomem_ms": round(w[ours], 4),
                "SqliteStore_ms": round(w[sq], 4),
                "ratio": round(w[ours] / w[sq], 2),
                "chronomem_cpu_ms": round(c[ours], 4),
                "SqliteStore_cpu_ms": round(c[sq], 4),
                "cpu_ratio": round(c[ours] / c[sq], 2),
                **_cost(lambda fn=fns[ours]: fn(0)),
            }
    out["loadavg"] = os.getloadavg()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--namespaces", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument(
        "--postgres", action="store_true", help="also chronomem on PostgreSQL vs PostgresStore"
    )
    ap.add_argument("--calls", action="store_true", help="get and list_namespaces per call")
    ap.add_argument("--out", default=None, help="appended to, under results/")
    args = ap.parse_args()
    stamp = common.stamp()
    name = args.out or ("namespaces-calls.jsonl" if args.calls else "namespaces.jsonl")
    out = common.RESULTS / name
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cm-ns-") as folder:
        for n in args.sizes:
            if args.calls:
                line = calls(n, args.rounds, folder)
            else:
                line = run(n, args.namespaces, args.rounds, folder, args.postgres)
            print(json.dumps(line), flush=True)
            with out.open("a") as f:
                f.write(json.dumps({**line, "stamp": stamp}, default=str) + "\n")


if __name__ == "__main__":
    main()
