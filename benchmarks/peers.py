"""Issue #32's table in one run: chronomem beside each framework's own default, same
process, alternating calls, the same hashing embedder on every side.

    nice .venv/bin/python benchmarks/peers.py            # the full run (1k and 10k)
    nice .venv/bin/python benchmarks/peers.py --quick    # a smoke run: small sizes, 3 rounds
    nice .venv/bin/python benchmarks/peers.py --big      # also pgvector search at 1M facts

Every row pits chronomem against a peer loaded with the same data in the same process;
each measured round calls every side once, in alternating order (A B, then B A), so
both see the same machine load, and the figure is the median over the rounds. SQLite
files unless the row says PostgreSQL (15: ``CHRONOMEM_PG_URL``; 16 + pgvector:
``CHRONOMEM_PGVECTOR_URL``, started by ``scripts/pgvector-server start``). The ratio is
chronomem / peer: for a latency (ms) lower is better, for a rate (items/s) higher is.
A row whose package or server is missing says so ("not run: ..."), never a number.

Rows (``S`` and ``L`` are ``--sizes``, 1k and 10k by default):

* LlamaIndex ``ChronomemMemory`` whole turn (put, get, put) at S and L messages vs
  LlamaIndex ``Memory``; the turn at L over the turn at S; ``aput``/``aget`` at L;
* LangChain ``ChronomemChatMessageHistory`` ``add_messages``/``.messages`` at L vs
  ``SQLChatMessageHistory`` (langchain-community) and ``InMemoryChatMessageHistory``,
  and their L/S growth; ``ChronomemMiddleware``'s turn (recall + store the thread) at S
  and L (LangChain has no memory middleware of its own: growth only);
* LangGraph ``ChronomemStore``: ``list_namespaces`` at S and L items, batched puts at L,
  single put, get, and search inside one namespace of 100 items vs ``SqliteStore`` and
  ``InMemoryStore`` (the same hashing index). Batched and single puts are measured against
  ``SqliteStore`` twice: with its sqlite-vec index (it embeds on put, as we do; the
  targets are on this one; the stdlib SQLite here cannot load extensions, so that store
  runs on pysqlite3-binary's newer SQLite) and without an index (a key-value put, shown
  for scale); the other rows use the key-value store (``list_namespaces`` and ``get`` do
  not touch the index; the namespace search is against its filter-only read); batched
  puts on PostgreSQL 16 + pgvector vs ``PostgresStore`` with the
  same index; single put on PostgreSQL 15 vs ``PostgresStore``;
* core ``Memory.apply`` batched writes at L on SQLite / PostgreSQL 15 vs ``SqliteStore`` /
  ``PostgresStore``; core hybrid search at L on PostgreSQL 15 vs ``InMemoryStore``;
* pgvector search at 1M facts (``--big``: reads a database already loaded by
  ``benchmarks/search.py --database``; otherwise "not run");
* CrewAI ``ChronomemMemory`` recall and remember vs CrewAI's own ``Memory`` on LanceDB
  (shallow recall and explicit scope/categories/importance, so no LLM is called; its
  consolidation is off, it would call the LLM).

Writes ``results/<out>.md`` (the table) and ``results/<out>.json`` (every raw figure,
the machine and its load), ``<out>`` = ``peers`` (``peers-quick`` with ``--quick``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import common, speed, turns

PGVECTOR_URL = os.environ.get(
    "CHRONOMEM_PGVECTOR_URL", "postgresql+psycopg://postgres@127.0.0.1:5433/test"
)
BIG_DATABASE = os.environ.get("CHRONOMEM_BIG_DATABASE", "s4_1m")
BIG_SIZE = 1_000_000
NS_ITEMS = 100
BUDGET_S = 60.0  # seconds per measured call site (--budget)


@dataclass
class Config:
    sizes: tuple[int, int]
    rounds: int
    crewai_records: int
    big: bool
    big_database: str


# -- rows -----------------------------------------------------------------------------------


def row(
    path: str,
    ours: float | None,
    peer_name: str | None,
    peer: float | None,
    unit: str,
    *,
    higher: bool = False,
    target: tuple[str, float] | None = None,
    ratio: float | None = None,
    note: str = "",
) -> dict[str, Any]:
    """One line of the table. ``ratio`` defaults to ours / peer; ``target`` is
    ``("<=", x)`` or ``(">=", x)`` on that ratio."""
    if ratio is None and ours is not None and peer:
        ratio = ours / peer
    met = None
    if target is not None and ratio is not None:
        met = ratio <= target[1] if target[0] == "<=" else ratio >= target[1]
    return {
        "path": path,
        "ours": ours,
        "peer_name": peer_name,
        "peer": peer,
        "unit": unit,
        "higher_is_better": higher,
        "ratio": ratio,
        "target": None if target is None else f"{'≤' if target[0] == '<=' else '≥'} {target[1]}×",
        "met": met,
        "note": note,
    }


def not_run(path: str, why: str) -> dict[str, Any]:
    return row(path, None, None, None, "", note=f"not run: {why}")


def k(n: int) -> str:
    """1000 -> "1k", 10000 -> "10k", 300 -> "300"."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else f"{n:,}"


def _cell(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "items/s":
        return f"{value:,.0f} items/s"
    if unit == "ms":
        return f"{value:.3g} ms" if value < 1 else f"{value:,.1f} ms"
    return f"{common.fmt(value)}{unit}"


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| path | chronomem | peer | ratio | target | met? |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        peer = "-"
        if r["peer_name"]:
            peer = f"{r['peer_name']} {_cell(r['peer'], r['unit'])}".strip()
        ours = _cell(r["ours"], r["unit"])
        if r["note"]:
            ours = f"{ours} ({r['note']})" if r["ours"] is not None else r["note"]
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}×"
        met = {True: "yes", False: "**no**", None: "-"}[r["met"]]
        lines.append(f"| {r['path']} | {ours} | {peer} | {ratio} | {r['target'] or '-'} | {met} |")
    return "\n".join(lines)


# -- timing ---------------------------------------------------------------------------------


def alternate(
    sides: dict[str, Callable[[int], Any]], rounds: int, warm: int = 1
) -> dict[str, float]:
    """Median ms of each side over ``rounds`` rounds (after ``warm``); each round calls
    every side once with the round's index, the order reversed every other round. Stops
    early once ``BUDGET_S`` seconds are spent (after at least 3 measured rounds), so a
    path taking seconds per call cannot stall the run; every side gets the same rounds."""
    names = list(sides)
    times: dict[str, list[float]] = {n: [] for n in names}
    start = time.perf_counter()
    for i in range(warm + rounds):
        for n in names if i % 2 == 0 else names[::-1]:
            t = time.perf_counter()
            sides[n](i)
            if i >= warm:
                times[n].append((time.perf_counter() - t) * 1000.0)
        if i >= warm + 2 and time.perf_counter() - start > BUDGET_S:
            break
    return {n: statistics.median(v) for n, v in times.items()}


def each(fn: Callable[..., Any], items: Sequence[Any]) -> Callable[[int], Any]:
    """A side of ``alternate``: round ``i`` calls ``fn(items[i])`` (cycling)."""
    return lambda i: fn(items[i % len(items)])


def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[int], Any]:
    """A side of ``alternate``: every round calls ``fn(*args, **kwargs)``."""
    return lambda i: fn(*args, **kwargs)


def load_alternating(drivers: dict[str, speed.Driver], facts: Sequence[Any]) -> dict[str, Any]:
    """Load ``facts`` into every driver in batches of ``speed.BATCH``, the drivers taking
    turns batch by batch (order reversed every other batch). Returns items/s per driver
    and the (namespace, key) or id handles each load returned.

    Every batch starts after a full collection (outside the timing). In one process
    the garbage collector's counters are shared: without it, a full collection a
    batch's own allocations did not bring on landed in whichever side crossed the
    threshold, so one side's heap moved the other's rate (``SqliteStore`` 47k or 72k
    items/s beside the same ``ChronomemStore`` code; equal with the collector off).
    Likewise each batch is followed, untimed, by the driver's ``settle``: a chronomem
    file store checkpoints its WAL on a thread of its own after a commit, and that
    I/O would otherwise land in the next driver's timing."""
    spent = dict.fromkeys(drivers, 0.0)
    handles: dict[str, list[Any]] = {n: [] for n in drivers}
    names = list(drivers)
    for b, at in enumerate(range(0, len(facts), speed.BATCH)):
        chunk = facts[at : at + speed.BATCH]
        for n in names if b % 2 == 0 else names[::-1]:
            gc.collect()
            t = time.perf_counter()
            handles[n] += drivers[n].load(chunk)
            spent[n] += time.perf_counter() - t
            drivers[n].settle()  # background work (a WAL checkpoint) outside every timing
    return {"per_s": {n: len(facts) / s for n, s in spent.items()}, "handles": handles}


# -- LlamaIndex -----------------------------------------------------------------------------


def _li_turn(memory: Any) -> Callable[[int], Any]:
    return lambda i: turns.llamaindex_turn(memory, i)()


def _li_aput(memory: Any, loop: asyncio.AbstractEventLoop, message: Any) -> Callable[[int], Any]:
    return lambda i: loop.run_until_complete(
        memory.aput(message(role="user", content=f"async note {i}"))
    )


def _li_aget(memory: Any, loop: asyncio.AbstractEventLoop) -> Callable[[int], Any]:
    return lambda i: loop.run_until_complete(memory.aget())


def llamaindex(cfg: Config, folder: str) -> list[dict[str, Any]]:
    from llama_index.core.base.llms.types import ChatMessage

    small, large = cfg.sizes
    calls: dict[str, dict[str, float]] = {}
    pairs: dict[int, dict[str, Any]] = {}
    closers: list[Callable[[], None]] = []
    loop = asyncio.new_event_loop()
    try:
        for n in (small, large):
            ours, peer, close = turns.llamaindex_pair(n, folder)
            closers.append(close)
            pairs[n] = {"ours": ours, "peer": peer}
        # both sessions' turns, ours and the peer's, in the same minutes: the growth
        # rows compare the two sizes, which timed one after the other took in
        # whatever load each window had
        timed = alternate(
            {f"{s}-{n}": _li_turn(m) for n, sides in pairs.items() for s, m in sides.items()},
            cfg.rounds,
        )
        turn = {n: {s: timed[f"{s}-{n}"] for s in ("ours", "peer")} for n in (small, large)}
        sides = pairs[large]
        calls["aput"] = alternate(
            {s: _li_aput(m, loop, ChatMessage) for s, m in sides.items()}, cfg.rounds
        )
        calls["aget"] = alternate({s: _li_aget(m, loop) for s, m in sides.items()}, cfg.rounds)
    finally:
        loop.close()
        for close in closers:
            close()
    peer = "LlamaIndex `Memory`"
    rows = [
        row(
            f"LlamaIndex `ChronomemMemory` whole turn, session of {k(n)} messages",
            turn[n]["ours"],
            peer,
            turn[n]["peer"],
            "ms",
            target=("<=", 1.5) if n == large else None,
        )
        for n in (small, large)
    ]
    rows.append(
        row(
            f"LlamaIndex turn at {k(large)} / turn at {k(small)} messages",
            turn[large]["ours"] / turn[small]["ours"],
            f"{peer}'s own",
            turn[large]["peer"] / turn[small]["peer"],
            "×",
            ratio=turn[large]["ours"] / turn[small]["ours"],
            target=("<=", 1.2),
            note="ratio column: chronomem's growth",
        )
    )
    for name in ("aput", "aget"):
        rows.append(
            row(
                f"LlamaIndex `{name}` at {k(large)} messages",
                calls[name]["ours"],
                peer,
                calls[name]["peer"],
                "ms",
            )
        )
    return rows


# -- LangChain ------------------------------------------------------------------------------


def _lc_add(history: Any) -> Callable[[int], Any]:
    return lambda i: history.add_messages(turns.langchain_pair(i))


def langchain_history(cfg: Config, folder: str) -> list[dict[str, Any]]:
    small, large = cfg.sizes
    fig: dict[int, dict[str, dict[str, float]]] = {}
    names: list[str] = []
    for n in (small, large):
        ours, peers, close = turns.langchain_histories(n, folder)
        try:
            sides = {"chronomem": ours, **peers}
            names = list(peers)
            fig[n] = {
                "add": alternate(
                    {s: _lc_add(h) for s, h in sides.items()},
                    cfg.rounds,
                ),
                "messages": alternate(
                    {s: call(getattr, h, "messages") for s, h in sides.items()}, cfg.rounds
                ),
            }
        finally:
            close()
    rows = []
    for op, label in (("add", "`add_messages` (2 messages)"), ("messages", "`.messages`")):
        for p in names:
            rows.append(
                row(
                    f"LangChain chat history {label} at {k(large)}",
                    fig[large][op]["chronomem"],
                    f"`{p}`",
                    fig[large][op][p],
                    "ms",
                    target=("<=", 1.5) if p == "SQLChatMessageHistory" else None,
                )
            )
        growth = fig[large][op]["chronomem"] / fig[small][op]["chronomem"]
        peer_growth = fig[large][op][names[0]] / fig[small][op][names[0]]
        # ``.messages`` returns the whole session, in every history: its growth is
        # held to the framework's own history's, not to flat
        whole = op == "messages"
        rows.append(
            row(
                f"LangChain chat history {label} at {k(large)} / at {k(small)}",
                growth,
                f"`{names[0]}`'s own",
                peer_growth,
                "×",
                ratio=growth / peer_growth if whole else growth,
                target=("<=", 1.2),
                note=(
                    "it returns every message of the session; ratio column: chronomem's "
                    "growth over the peer's"
                    if whole
                    else "ratio column: chronomem's growth"
                ),
            )
        )
    if "SQLChatMessageHistory" not in names:
        rows.append(
            not_run(
                "LangChain chat history vs `SQLChatMessageHistory`",
                "langchain-community is not installed (pip install -e '.[bench]')",
            )
        )
    return rows


MIDDLEWARE_CITIES = ("Paris", "Lisbon", "Oslo", "Rome", "Vienna", "Dublin", "Prague", "Madrid")


def langchain_middleware(cfg: Config, folder: str) -> list[dict[str, Any]]:
    from langchain_core.messages import AIMessage, HumanMessage

    from chronomem import Memory
    from langchain_chronomem import ChronomemMiddleware

    small, large = cfg.sizes
    stores: list[Any] = []
    sides: dict[int, Callable[[int], None]] = {}
    try:
        for n in (small, large):
            store = Memory(
                str(Path(folder) / f"mw-{n}.db"), embedder=common.make_embedder("hashing")
            )
            stores.append(store)
            thread = turns.langchain_seed(n)
            ChronomemMiddleware(store.scoped(user="u"), extract=False).store_turn(thread, "t")
            mw = ChronomemMiddleware(store.scoped(user="u"))

            def one(i: int, mw: Any = mw, thread: list[Any] = thread) -> None:
                # each turn states a city (a fact, ending the last one) and recalls
                city = MIDDLEWARE_CITIES[i % len(MIDDLEWARE_CITIES)]
                thread.append(HumanMessage(f"I live in {city} and like tea.", id=f"u{i}"))
                mw.recall_for(thread)
                thread.append(AIMessage(f"Noted, {city}.", id=f"v{i}"))
                mw.store_turn(thread, "t")

            sides[n] = one
        # both sizes in the same minutes, turn by turn, as every other row's two sides
        timed = alternate({str(n): fn for n, fn in sides.items()}, cfg.rounds)
        turn = {n: timed[str(n)] for n in (small, large)}
    finally:
        for store in stores:
            store.close()
    none = "LangChain has no memory middleware of its own"
    rows = [
        row(
            f"LangChain `ChronomemMiddleware` turn (recall + store the thread), {k(n)} messages",
            turn[n],
            None,
            None,
            "ms",
            note=none if n == small else "",
        )
        for n in (small, large)
    ]
    g = turn[large] / turn[small]
    rows.append(
        row(
            f"LangChain middleware turn at {k(large)} / at {k(small)}",
            g,
            None,
            None,
            "×",
            ratio=g,
            target=("<=", 1.2),
        )
    )
    return rows


# -- LangGraph and core, SQLite and PostgreSQL 15 -------------------------------------------


class Stores:
    """Drivers (``benchmarks.speed``) opened in one folder; closed together."""

    def __init__(self, folder: str, embedder: Any):
        self.folder = folder
        self.embedder = embedder
        self.drivers: dict[str, speed.Driver] = {}
        self.missing: dict[str, str] = {}
        self._cleanups: list[Callable[[], None]] = []

    def open(self, name: str, system: str, backend: str, **kw: Any) -> None:
        why = speed.available(system)
        if why is None and backend == "postgres":
            why = pg_ready(kw.get("pg_url"))
        if why is not None:
            self.missing[name] = why
            return
        try:
            d, cleanup = speed.build(system, backend, self.folder, self.embedder, **kw)
        except Exception as exc:
            self.missing[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            return
        self.drivers[name] = d
        self._cleanups += [d.close, cleanup]

    def close(self) -> None:
        for c in reversed(self._cleanups):
            with contextlib.suppress(Exception):
                c()


_PG_READY: dict[str, str | None] = {}


def pg_ready(url: str | None) -> str | None:
    """None when the PostgreSQL server at ``url`` (default ``CHRONOMEM_PG_URL``) answers."""
    url = url or common.PG_URL
    if url not in _PG_READY:
        try:
            speed.pg_exec("SELECT 1", url)
            _PG_READY[url] = None
        except Exception as exc:
            _PG_READY[url] = f"no PostgreSQL at {url}: {str(exc).splitlines()[0][:120]}"
    return _PG_READY[url]


def _ns_items(store: Any) -> list[str]:
    """Puts ``NS_ITEMS`` items into one namespace; returns queries about them."""
    from langgraph.store.base import PutOp

    rng = random.Random(5)
    texts = [f"{rng.choice(speed.ADJ)} {rng.choice(speed.NOUN)} note {j}" for j in range(NS_ITEMS)]
    store.batch([PutOp(("bench", "ns100"), f"k{j}", {"text": t}) for j, t in enumerate(texts)])
    return [" ".join(t.split()[:2]) for t in texts]


def _size_folder(folder: str, n: int) -> str:
    """Each size's SQLite files in a folder of their own (in one folder, the large
    stores reopened the small ones' files and loaded their items on top)."""
    path = os.path.join(folder, f"at{n}")
    os.makedirs(path, exist_ok=True)
    return path


# the LangGraph stores whose listings are timed at both sizes: system, backend
_LISTED = {
    "ours": ("chronomem-langgraph", "sqlite"),
    "SqliteStore": ("langgraph-sqlite-kv", "sqlite"),
    "InMemoryStore": ("langgraph-memory", "memory"),
}


def _listings_at_both_sizes(
    folder: str, small: int, cfg: Config, large_sides: dict[str, speed.Driver], large: int
) -> dict[int, dict[str, float]]:
    """``list_namespaces(limit=100)`` on each LangGraph store at ``small`` and at
    ``large`` items, timed together, alternating: the small stores are built and loaded
    here, once the large ones are loaded, and closed before anything else is timed.
    Timed in two phases seconds apart, the change in the box's load between them read as
    growth (ours 0.90-1.66x, ``SqliteStore``'s own 0.82-1.77x in four runs of one code)."""
    stores = Stores(_size_folder(folder, small), common.make_embedder("hashing"))
    try:
        for name in large_sides:
            stores.open(name, *_LISTED[name])
        extra = cfg.rounds + 2
        wl = speed.workload(small, extra, max(extra, 20), max(extra, 20))
        load_alternating(stores.drivers, wl.facts)
        sides = {f"{name}@{small}": d for name, d in stores.drivers.items()}
        sides |= {f"{name}@{large}": d for name, d in large_sides.items()}
        listed = alternate(
            {side: call(d.store.list_namespaces, limit=100) for side, d in sides.items()},  # type: ignore[attr-defined]
            cfg.rounds,
        )
    finally:
        stores.close()
    ns: dict[int, dict[str, float]] = {}
    for side, ms in listed.items():
        name, at = side.split("@")
        ns.setdefault(int(at), {})[name] = ms
    return ns


def langgraph_and_core(cfg: Config, folder: str) -> list[dict[str, Any]]:
    small, large = cfg.sizes
    rows: list[dict[str, Any]] = []
    ns: dict[int, dict[str, float]] = {}
    lg = tuple(_LISTED)  # ours, SqliteStore, InMemoryStore
    label = {
        "SqliteStore": "`SqliteStore`",
        "InMemoryStore": "`InMemoryStore`",
        "SqliteStoreIndexed": "`SqliteStore` (sqlite-vec index: embeds on put)",
    }
    key_value = " (no index: a key-value put)"
    n = large  # the small size's stores serve only the listings (_listings_at_both_sizes)
    stores = Stores(_size_folder(folder, n), common.make_embedder("hashing"))
    try:
        for name, how in _LISTED.items():
            stores.open(name, *how)
        stores.open("SqliteStoreIndexed", "langgraph-sqlite", "sqlite")
        stores.open("core", "chronomem", "sqlite")
        stores.open("core-pg", "chronomem", "postgres")
        stores.open("PostgresStore", "langgraph-postgres", "postgres")
        stores.open("ours-pg", "chronomem-langgraph", "postgres")
        d = stores.drivers
        if "ours" not in d:
            return [not_run("LangGraph `ChronomemStore`", stores.missing.get("ours", "?"))]
        extra = cfg.rounds + 2
        wl = speed.workload(n, extra, max(extra, 20), max(extra, 20))
        loaded = load_alternating(d, wl.facts)
        here = [s for s in lg if s in d]
        ns = _listings_at_both_sizes(folder, small, cfg, {s: d[s] for s in here}, large)
        per_s = loaded["per_s"]
        # the like-for-like peer embeds on put, as we do: the targets are on it
        puts: tuple[tuple[str, float | None, str], ...] = (
            ("SqliteStoreIndexed", 1.0, label["SqliteStoreIndexed"]),
            ("SqliteStore", None, label["SqliteStore"] + key_value),
            ("InMemoryStore", 0.5, label["InMemoryStore"]),
        )
        if "SqliteStoreIndexed" not in d:
            rows.append(
                not_run(
                    f"LangGraph batched puts at {k(n)} vs `SqliteStore` with its index",
                    stores.missing.get("SqliteStoreIndexed", "?"),
                )
            )
        for p, tgt, name in puts:
            if p in d:
                rows.append(
                    row(
                        f"LangGraph batched puts at {k(n)} (SQLite)",
                        per_s["ours"],
                        name,
                        per_s[p],
                        "items/s",
                        higher=True,
                        target=None if tgt is None else (">=", tgt),
                    )
                )
        writers = here[:1] + [s for s in ("SqliteStoreIndexed",) if s in d] + here[1:]
        single = alternate({s: each(d[s].write_one, wl.singles) for s in writers}, cfg.rounds)
        rng = random.Random(3)
        picks = {
            s: [loaded["handles"][s][rng.randrange(n)] for _ in range(cfg.rounds + 1)] for s in here
        }
        got = alternate({s: each(d[s].get, picks[s]) for s in here}, cfg.rounds)
        queries = {s: _ns_items(d[s].store) for s in here}  # type: ignore[attr-defined]

        def ns_search(store: Any, q: list[str], filter_only: bool) -> Callable[[int], Any]:
            if filter_only:  # SqliteStore has no index here: its filter-only read
                return lambda i: store.search(("bench", "ns100"), limit=10)
            return lambda i: store.search(("bench", "ns100"), query=q[i % len(q)], limit=10)

        found = alternate(
            {
                s: ns_search(d[s].store, queries[s], s == "SqliteStore")  # type: ignore[attr-defined]
                for s in here
            },
            cfg.rounds,
        )
        for p in writers[1:]:
            kv = p == "SqliteStore"
            rows.append(
                row(
                    "LangGraph single put",
                    single["ours"],
                    label[p] + (key_value if kv else ""),
                    single[p],
                    "ms",
                    target=("<=", 1.0) if p == "SqliteStoreIndexed" else None,
                )
            )
        for p in here[1:]:
            rows.append(
                row(
                    "LangGraph `get`",
                    got["ours"],
                    label[p],
                    got[p],
                    "ms",
                    target=("<=", 2.0) if p == "SqliteStore" else None,
                )
            )
        for p in here[1:]:
            sq = p == "SqliteStore"
            rows.append(
                row(
                    f"LangGraph search inside one namespace of {NS_ITEMS} items",
                    found["ours"],
                    label[p] + (" (filter-only read)" if sq else ""),
                    found[p],
                    "ms",
                    target=("<=", 2.0) if sq else None,
                )
            )
        # PostgreSQL 15: LangGraph single put; core writes; core hybrid search
        if "ours-pg" in d and "PostgresStore" in d:
            pg_single = alternate(
                {s: each(d[s].write_one, wl.singles) for s in ("ours-pg", "PostgresStore")},
                cfg.rounds,
            )
            rows.append(
                row(
                    "LangGraph single put, PostgreSQL 15",
                    pg_single["ours-pg"],
                    "`PostgresStore`",
                    pg_single["PostgresStore"],
                    "ms",
                )
            )
        else:
            why = stores.missing.get("ours-pg") or stores.missing.get("PostgresStore", "?")
            rows.append(not_run("LangGraph single put, PostgreSQL 15", why))
        core_peers: tuple[tuple[str, str, float | None, str, str], ...] = (
            ("core", "SqliteStoreIndexed", 1.0, "SQLite", label["SqliteStoreIndexed"]),
            ("core", "SqliteStore", None, "SQLite", label["SqliteStore"] + key_value),
            ("core-pg", "PostgresStore", 0.5, "PostgreSQL 15", "`PostgresStore`"),
        )
        for ours, p, tgt, what, name in core_peers:
            path = f"core batched writes at {k(n)}, {what}"
            if ours in d and p in d:
                rows.append(
                    row(
                        path,
                        per_s[ours],
                        name,
                        per_s[p],
                        "items/s",
                        higher=True,
                        target=None if tgt is None else (">=", tgt),
                    )
                )
            else:
                rows.append(not_run(path, stores.missing.get(ours) or stores.missing.get(p, "?")))
        path = f"PostgreSQL hybrid search at {k(n)} (core `Memory.search`, k=10)"
        if "core-pg" in d and "InMemoryStore" in d:
            srch = alternate(
                {s: each(d[s].search, wl.queries) for s in ("core-pg", "InMemoryStore")},
                cfg.rounds,
                warm=3,
            )
            rows.append(
                row(
                    path,
                    srch["core-pg"],
                    "`InMemoryStore` search",
                    srch["InMemoryStore"],
                    "ms",
                    target=("<=", 0.05),
                )
            )
        else:
            rows.append(not_run(path, stores.missing.get("core-pg", "?")))
    finally:
        stores.close()
    lines = []
    for n in (small, large):
        for p in lg[1:]:
            if p in ns[n]:
                lines.append(
                    row(
                        f"LangGraph `list_namespaces` at {k(n)} items",
                        ns[n]["ours"],
                        label[p],
                        ns[n][p],
                        "ms",
                        target=("<=", 3.0) if p == "SqliteStore" else None,
                    )
                )
    g = ns[large]["ours"] / ns[small]["ours"]
    lines.append(
        row(
            f"LangGraph `list_namespaces` at {k(large)} / at {k(small)} items",
            g,
            "`SqliteStore`'s own" if "SqliteStore" in ns[large] else None,
            ns[large]["SqliteStore"] / ns[small]["SqliteStore"]
            if "SqliteStore" in ns[large]
            else None,
            "×",
            ratio=g,
            target=("<=", 1.2),
            note="flat in store size; ratio column: chronomem's growth",
        )
    )
    return lines + rows


def langgraph_pgvector(cfg: Config, folder: str) -> list[dict[str, Any]]:
    _, large = cfg.sizes
    path = f"LangGraph batched puts at {k(large)}, PostgreSQL 16 + pgvector"
    why = pg_ready(PGVECTOR_URL)
    if why:
        return [not_run(path, f"{why} (scripts/pgvector-server start)")]
    speed.pg_exec("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public", PGVECTOR_URL)
    stores = Stores(folder, common.make_embedder("hashing"))
    try:
        stores.open("ours", "chronomem-langgraph", "postgres", pg_url=PGVECTOR_URL)
        stores.open(
            "PostgresStore", "langgraph-postgres", "postgres", pg_url=PGVECTOR_URL, pg_index=True
        )
        if len(stores.drivers) < 2:
            return [not_run(path, "; ".join(f"{n}: {w}" for n, w in stores.missing.items()))]
        wl = speed.workload(large, 0, 0, 0)
        per_s = load_alternating(stores.drivers, wl.facts)["per_s"]
        return [
            row(
                path,
                per_s["ours"],
                "`PostgresStore` (pgvector index)",
                per_s["PostgresStore"],
                "items/s",
                higher=True,
                target=(">=", 1.0),
            )
        ]
    finally:
        stores.close()


# -- pgvector at 1M (a prebuilt database) -----------------------------------------------------


def big_search(cfg: Config, folder: str) -> list[dict[str, Any]]:
    path = "pgvector search at 1M facts, p50 (core `Memory.search`, k=10)"
    if not cfg.big:
        return [not_run(path, "needs --big and a prebuilt database")]
    why = pg_ready(PGVECTOR_URL)
    if why:
        return [not_run(path, why)]
    import psycopg
    from sqlalchemy.engine import make_url

    base = make_url(PGVECTOR_URL)
    url = base.set(database=cfg.big_database)
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    hint = (
        f"no database {cfg.big_database!r} loaded with {BIG_SIZE:,} facts on {base.host}:{base.port} "
        f"(benchmarks/search.py --backend postgres --sizes {BIG_SIZE} --database {cfg.big_database}"
        " with CHRONOMEM_PG_URL at the pgvector server)"
    )
    try:
        with psycopg.connect(dsn, connect_timeout=5) as c:
            loaded = c.execute("SELECT 1 FROM bench_loaded WHERE size = %s", (BIG_SIZE,)).fetchone()
    except Exception:
        loaded = None
    if not loaded:
        return [not_run(path, hint)]
    from chronomem import Memory

    rng = random.Random(BIG_SIZE)
    subjects = BIG_SIZE // 5
    qs = [
        f"where does user{rng.randrange(subjects)} live city{rng.randrange(500)}"
        for _ in range(cfg.rounds * 5 + 5)
    ]
    m = Memory(url.render_as_string(hide_password=False))
    try:
        for q in qs[:5]:
            m.search(q, k=10)
        done: list[int] = []

        def search(i: int) -> None:
            m.search(qs[5 + i % (len(qs) - 5)], k=10)
            done.append(i)

        hit0, read0 = _blocks(dsn, cfg.big_database)
        ms = alternate({"ours": search}, len(qs) - 6)
        hit1, read1 = _blocks(dsn, cfg.big_database)
    finally:
        m.close()
    n = max(1, len(done))
    note = (
        f"ratio column: p50 / 30 ms; a search read {(read1 - read0) / n:,.0f} pages into "
        f"shared buffers and found {(hit1 - hit0) / n:,.0f} there"
    )
    return [
        row(
            path,
            ms["ours"],
            None,
            None,
            "ms",
            ratio=ms["ours"] / 30.0,
            target=("<=", 1.0),
            note=note,
        )
    ]


def _blocks(dsn: str, database: str) -> tuple[int, int]:
    """The database's shared-buffer hits and reads so far (``pg_stat_database``). A read
    is a page PostgreSQL asked the kernel for: from the OS page cache, or from the disk
    once the page cache has let it go. Backends report their counts when idle for a
    second, hence the pause (taken outside any timed call)."""
    import psycopg

    time.sleep(1.5)
    with psycopg.connect(dsn, connect_timeout=5) as c:
        got = c.execute(
            "SELECT blks_hit, blks_read FROM pg_stat_database WHERE datname = %s", (database,)
        ).fetchone()
    return (int(got[0]), int(got[1])) if got else (0, 0)


# -- CrewAI ---------------------------------------------------------------------------------


def crewai(cfg: Config, folder: str) -> list[dict[str, Any]]:
    # offline, as CrewAI's own tests run: telemetry, tracing and the version check off
    # (each would otherwise wait on the network; a save took 5 s here with them on)
    for name in ("CREWAI_DISABLE_TELEMETRY", "CREWAI_DISABLE_TRACKING", "OTEL_SDK_DISABLED"):
        os.environ.setdefault(name, "true")
    os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
    os.environ.setdefault("CREWAI_DISABLE_VERSION_CHECK", "true")
    os.environ.setdefault("CREWAI_STORAGE_DIR", str(Path(folder) / "crewai-storage"))
    from crewai.memory import Memory as CrewMemory
    from crewai.memory.storage.lancedb_storage import LanceDBStorage

    from chronomem import Memory
    from crewai_chronomem import ChronomemMemory

    embedder = common.make_embedder("hashing")

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in embedder.embed(list(texts))]

    store = Memory(str(Path(folder) / "crewai.db"), embedder=embedder)
    ours = ChronomemMemory(memory=store)
    peer = CrewMemory(
        storage=LanceDBStorage(path=str(Path(folder) / "lancedb")),
        embedder=embed,
        llm="unused",  # never called: explicit fields, shallow recall, no consolidation
        consolidation_threshold=1.0,
    )
    fields: dict[str, Any] = {"scope": "/bench", "categories": ["note"], "importance": 0.5}
    n = cfg.crewai_records
    wl = speed.workload(n, cfg.rounds + 2, max(cfg.rounds + 2, 20), 0)
    try:
        texts = [f.text for f in wl.facts]
        for at in range(0, n, 100):
            ours.remember_many(texts[at : at + 100], source="user")
            peer.remember_many(texts[at : at + 100], **fields)
        peer.drain_writes()
        qs = wl.queries
        recall = alternate(
            {
                "ours": lambda i: ours.recall(qs[i % len(qs)], limit=10),
                "peer": lambda i: peer.recall(qs[i % len(qs)], limit=10, depth="shallow"),
            },
            cfg.rounds,
        )
        singles = [f.text for f in wl.singles]
        remember = alternate(
            {
                "ours": lambda i: ours.remember(singles[i], source="user"),
                "peer": lambda i: peer.remember(singles[i], **fields),
            },
            cfg.rounds,
        )
    finally:
        with contextlib.suppress(Exception):
            peer.close()
        store.close()
    name = "CrewAI `Memory` (LanceDB)"
    return [
        row(f"CrewAI `ChronomemMemory.recall`, {k(n)} records", recall["ours"], name + " shallow",
            recall["peer"], "ms"),
        row(f"CrewAI `ChronomemMemory.remember` (one text), {k(n)} records", remember["ours"], name,
            remember["peer"], "ms"),
    ]  # fmt: skip


# -- the run --------------------------------------------------------------------------------

SECTIONS: dict[str, Callable[[Config, str], list[dict[str, Any]]]] = {
    "llamaindex": llamaindex,
    "langchain-history": langchain_history,
    "langchain-middleware": langchain_middleware,
    "langgraph": langgraph_and_core,
    "pgvector": langgraph_pgvector,
    "big": big_search,
    "crewai": crewai,
}


def run(cfg: Config, only: Sequence[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"sections": {}, "rows": []}
    with tempfile.TemporaryDirectory(prefix="cm-peers-") as folder:
        for name, fn in SECTIONS.items():
            if only and name not in only:
                continue
            t = time.perf_counter()
            try:
                rows = fn(cfg, folder)
                error = None
            except ImportError as exc:
                rows, error = [not_run(name, f"{exc} (pip install -e '.[bench]')")], str(exc)
            except Exception as exc:
                traceback.print_exc()
                rows, error = (
                    [row(name, None, None, None, "", note=f"error: {exc!r:.200}")],
                    repr(exc),
                )
            seconds = time.perf_counter() - t
            out["sections"][name] = {
                "seconds": round(seconds, 1),
                "error": error,
                "loadavg_after": os.getloadavg(),
            }
            out["rows"] += rows
            print(f"{name}: {len(rows)} rows in {seconds:.0f} s", flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    global BUDGET_S
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 rounds: a smoke run")
    ap.add_argument("--sizes", default=None, help="the two sizes S,L (default 1000,10000)")
    ap.add_argument("--rounds", type=int, default=None, help="measured rounds (default 20)")
    ap.add_argument("--crewai-records", type=int, default=None, help="default 1000")
    ap.add_argument(
        "--budget",
        type=float,
        default=BUDGET_S,
        help="seconds per measured call site (>= 3 rounds)",
    )
    ap.add_argument("--big", action="store_true", help="also pgvector search at 1M facts")
    ap.add_argument("--big-database", default=BIG_DATABASE, help="the prebuilt 1M database")
    ap.add_argument("--only", default=None, help=f"comma list of {', '.join(SECTIONS)}")
    ap.add_argument(
        "--out",
        default=None,
        help="results stem in results/ (default peers / peers-quick), or a path stem",
    )
    args = ap.parse_args(argv)
    only = args.only.split(",") if args.only else None
    unknown = sorted(set(only or ()) - set(SECTIONS))
    if unknown:  # a misspelt section would measure nothing and write an empty table
        ap.error(f"--only: no section {', '.join(unknown)} (sections: {', '.join(SECTIONS)})")
    sizes = args.sizes or ("200,1000" if args.quick else "1000,10000")
    s, L = (int(x) for x in sizes.split(","))
    cfg = Config(
        sizes=(s, L),
        rounds=args.rounds or (3 if args.quick else 20),
        crewai_records=args.crewai_records or (100 if args.quick else 1000),
        big=args.big,
        big_database=args.big_database,
    )
    BUDGET_S = args.budget
    load_before = os.getloadavg()
    t = time.perf_counter()
    result = run(cfg, only)
    table = markdown(result["rows"])
    stem = args.out or ("peers-quick" if args.quick else "peers")
    head = (
        f"chronomem vs each framework's own default, one run ({time.perf_counter() - t:.0f} s), "
        f"sizes {k(s)}/{k(L)}, {cfg.rounds} rounds, medians; "
        f"load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after"
    )
    print()
    print(head)
    print()
    print(table)
    payload = {
        **common.stamp(),
        "benchmark": "peers",
        "configuration": {
            "sizes": [s, L],
            "rounds": cfg.rounds,
            "crewai_records": cfg.crewai_records,
            "ns_items": NS_ITEMS,
            "budget_s": BUDGET_S,
            "big": cfg.big,
            "big_database": cfg.big_database,
            "quick": args.quick,
            "embedder": "chronomem HashingEmbedder(dim=256) on every side",
            "pg_url": common.PG_URL,
            "pgvector_url": PGVECTOR_URL,
        },
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
        "seconds": round(time.perf_counter() - t, 1),
        **result,
    }
    if os.sep in stem:  # a path: written there, not into results/
        path = Path(f"{stem}.json")
        path.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    else:
        path = common.write_json(f"{stem}.json", payload)
    md = path.with_suffix(".md")
    md.write_text(f"{head}\n\n{table}\n")
    print(f"\nwrote {common.shown(path)} and {common.shown(md)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
