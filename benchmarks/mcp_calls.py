"""What an MCP tool call costs over calling ``Memory`` directly (issue #32).

One store of ``--facts`` facts (plus Ada's home, moved once, and a remembered
text); the MCP server (``chronomem.mcp.build_server``) reached by a real fastmcp
``Client`` in-process (the protocol's messages, its JSON-RPC encoding and
validation, the tool's worker thread; no pipe or socket), and the same work done by
``Memory`` directly: ``search`` (now and ``as_of``), ``history``, ``why``,
``remember_fact`` (an unchanged fact). The two are interleaved call by call so
both see the same machine load. Prints one JSON line per backend: per call, the
median wall and CPU (process time: every thread) milliseconds of each, and the
MCP call's overhead (MCP minus direct).

    .venv/bin/python benchmarks/mcp_calls.py --facts 2000 --calls 300
    .venv/bin/python benchmarks/mcp_calls.py --url postgresql+psycopg://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from fastmcp import Client

from chronomem import Memory
from chronomem.mcp import build_server


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1)
        return self.now


def build(url: str | None, n: int) -> tuple[Memory, Memory, Clock]:
    clock = Clock()
    root = Memory(url, clock=clock)
    m = root.scoped(tenant=f"mcp-{uuid.uuid4().hex[:8]}", user="ada")
    m.remember_many(
        {"subject": f"s{i}", "predicate": "likes", "obj": f"thing {i}"} for i in range(n)
    )
    m.remember("ada", "lives_in", "Paris")
    clock.now += timedelta(days=1)
    m.remember("ada", "lives_in", "Berlin")
    m.add("I like green tea.")
    return root, m, clock


def calls(m: Memory, then: datetime) -> dict[str, tuple[str, dict[str, Any], Callable[[], Any]]]:
    (home,) = m.facts(subject="ada", predicate="lives_in")
    q = "where does ada live"
    return {
        "search": ("search", {"query": q, "k": 5}, lambda: m.search(q, k=5, include_episodes=True)),
        "search_as_of": (
            "search",
            {"query": q, "k": 5, "as_of": then.isoformat()},
            lambda: m.search(q, k=5, as_of=then, include_episodes=True),
        ),
        "history": (
            "history",
            {"subject": "ada", "predicate": "lives_in"},
            lambda: m.history("ada", "lives_in"),
        ),
        "why": ("why", {"fact_id": home.id}, lambda: m.why(home.id)),
        "remember_fact": (
            "remember_fact",
            {"subject": "ada", "predicate": "likes", "object": "tea"},
            lambda: m.remember("ada", "likes", "tea"),
        ),
    }


async def measure(m: Memory, then: datetime, n_calls: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    async with Client(build_server(m)) as client:
        for name, (tool, args, direct) in calls(m, then).items():
            for _ in range(20):  # warm: mirrors synced, statements compiled
                await client.call_tool_mcp(tool, args)
                direct()
            wall: dict[str, list[float]] = {"mcp": [], "direct": []}
            cpu: dict[str, list[float]] = {"mcp": [], "direct": []}
            for _ in range(n_calls):
                w, c = time.perf_counter(), time.process_time()
                r = await client.call_tool_mcp(tool, args)
                wall["mcp"].append(time.perf_counter() - w)
                cpu["mcp"].append(time.process_time() - c)
                assert not r.isError, r.content
                w, c = time.perf_counter(), time.process_time()
                direct()
                wall["direct"].append(time.perf_counter() - w)
                cpu["direct"].append(time.process_time() - c)
            med = {
                f"{k}_{kind}_ms": statistics.median(v) * 1e3
                for kind, d in (("wall", wall), ("cpu", cpu))
                for k, v in d.items()
            }
            med["overhead_wall_ms"] = med["mcp_wall_ms"] - med["direct_wall_ms"]
            med["overhead_cpu_ms"] = med["mcp_cpu_ms"] - med["direct_cpu_ms"]
            out[name] = {k: round(v, 3) for k, v in med.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=None, help="database URL (default: in-memory SQLite)")
    ap.add_argument("--facts", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=300)
    a = ap.parse_args()
    root, m, clock = build(a.url, a.facts)
    then = clock.now - timedelta(hours=1)  # Paris was home, Berlin not yet known
    try:
        got = asyncio.run(measure(m, then, a.calls))
    finally:
        if a.url is not None:
            m.purge()
        root.close()
    backend = "sqlite" if a.url is None else a.url.split(":", 1)[0]
    print(json.dumps({"backend": backend, "facts": a.facts, "calls": a.calls, "tools": got}))


if __name__ == "__main__":
    main()
