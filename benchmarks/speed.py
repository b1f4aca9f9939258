"""Speed and scale, side by side: chronomem against its peers, same machine, same run,
same embedder (chronomem's deterministic hashing embedder, wrapped for each peer).

    .venv/bin/python benchmarks/speed.py                         # 1k,10k,100k on SQLite + PostgreSQL
    .venv/bin/python benchmarks/speed.py --quick                 # 1k only, a smoke run
    .venv/bin/python benchmarks/speed.py --sizes 10000 --backends sqlite --plot speed.png

What one configuration (system x backend x size) measures, each in its own
subprocess so peak RSS belongs to that configuration alone:

* batched ingest: N facts in batches of 1,000 (chronomem ``apply`` of ``assertion``
  ops in one transaction; LangGraph ``batch([PutOp...])``; memvara ``remember`` inside
  one ``store.batch()``), reported as facts/s;
* single writes: 300 more facts one call each (``remember`` / ``put``), writes/s;
* search: 200 queries after 10 warm-ups, k=10, p50/p95 ms (chronomem: hybrid fact
  search; LangGraph: ``store.search(ns, query=...)`` with the vector index; memvara:
  ``search``);
* LangGraph stores only: a query search inside one subject's namespace
  (``store.search(("facts", subject), query=..., limit=10)``), p50/p95 ms;
* get by id, current read of one slot, as-of read of one slot (as of an instant
  captured half-way through the ingest): p50/p95 ms over 300 calls each;
* peak RSS (``ru_maxrss``) of the worker process, and its RSS before the store existed.

Systems: ``chronomem`` (native API), ``chronomem-langgraph`` (LangGraph ``BaseStore``
over chronomem, when ``langgraph.store.chronomem.ChronomemStore`` is importable),
``langgraph-memory`` (``InMemoryStore`` with an index), ``langgraph-sqlite``
(``SqliteStore`` with its sqlite-vec index; on a Python whose sqlite3 cannot load
extensions, over pysqlite3-binary's module), ``langgraph-sqlite-kv`` (the same store
without an index),
``langgraph-postgres`` (``PostgresStore``; without pgvector on the server it has no
vector index, so no search), ``memvara`` (SQLite; run with pysqlite3 aliased as sqlite3
in its worker process only). A peer that is not installed is skipped and said so."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import common

OURS = ("chronomem", "chronomem-langgraph")
PEERS = (
    "langgraph-memory",
    "langgraph-sqlite",
    "langgraph-sqlite-kv",
    "langgraph-postgres",
    "memvara",
)
BACKEND_OF = {
    "langgraph-memory": "memory",
    "langgraph-sqlite": "sqlite",
    "langgraph-sqlite-kv": "sqlite",
    "langgraph-postgres": "postgres",
    "memvara": "sqlite",
}
BATCH = 1000

# -- the workload --------------------------------------------------------------------------

FIRST = [
    "Ada",
    "Alan",
    "Alice",
    "Amara",
    "Anya",
    "Arjun",
    "Ben",
    "Bianca",
    "Carlos",
    "Chen",
    "Chloe",
    "Dana",
    "Dmitri",
    "Elena",
    "Emil",
    "Fatima",
    "Felix",
    "Grace",
    "Hana",
    "Hugo",
    "Ines",
    "Ivan",
    "Jamal",
    "Jonas",
    "Julia",
    "Kai",
    "Kenji",
    "Lara",
    "Leo",
    "Lina",
    "Luca",
    "Maya",
    "Mateo",
    "Mei",
    "Nadia",
    "Nina",
    "Noah",
    "Olga",
    "Omar",
    "Paula",
    "Priya",
    "Rafael",
    "Rosa",
    "Sami",
    "Sara",
    "Tariq",
    "Tom",
    "Uma",
    "Vera",
    "Wei",
    "Yara",
    "Yusuf",
    "Zoe",
]
LAST = [
    "Abbott",
    "Baker",
    "Castro",
    "Diaz",
    "Evans",
    "Fischer",
    "Garcia",
    "Hansen",
    "Ito",
    "Jensen",
    "Kowalski",
    "Larsen",
    "Moreau",
    "Nakamura",
    "Novak",
    "Okafor",
    "Petrov",
    "Quinn",
    "Rossi",
    "Silva",
    "Tanaka",
    "Unger",
    "Varga",
    "Weber",
    "Xu",
    "Yilmaz",
    "Zhang",
    "Almeida",
    "Bauer",
    "Costa",
    "Dubois",
    "Eriksen",
    "Ferrari",
    "Gallo",
    "Horvat",
    "Iqbal",
    "Jovanovic",
    "Klein",
    "Lopez",
    "Meyer",
    "Nilsson",
    "Olsen",
    "Popescu",
    "Rahman",
    "Schmidt",
    "Torres",
    "Usman",
    "Vogel",
    "Wagner",
    "Young",
]
ADJ = [
    "amber",
    "ancient",
    "autumn",
    "blue",
    "bright",
    "calm",
    "cedar",
    "coastal",
    "copper",
    "crimson",
    "crystal",
    "dusty",
    "eastern",
    "emerald",
    "evening",
    "golden",
    "granite",
    "green",
    "hidden",
    "iron",
    "ivory",
    "jade",
    "lunar",
    "maple",
    "marble",
    "misty",
    "northern",
    "oak",
    "quiet",
    "rapid",
    "red",
    "river",
    "royal",
    "rustic",
    "sandy",
    "silver",
    "silent",
    "solar",
    "southern",
    "spring",
    "stone",
    "summer",
    "sunny",
    "swift",
    "tidal",
    "urban",
    "velvet",
    "violet",
    "western",
    "white",
    "wild",
    "willow",
    "winter",
    "wooden",
]
NOUN = [
    "harbor",
    "valley",
    "garden",
    "bridge",
    "market",
    "tower",
    "studio",
    "forest",
    "bakery",
    "library",
    "canyon",
    "meadow",
    "orchard",
    "island",
    "station",
    "castle",
    "gallery",
    "theater",
    "workshop",
    "plaza",
    "lagoon",
    "summit",
    "village",
    "cottage",
    "lantern",
    "compass",
    "violin",
    "guitar",
    "piano",
    "chess",
    "tennis",
    "hiking",
    "sailing",
    "pottery",
    "painting",
    "cycling",
    "climbing",
    "poetry",
    "jazz",
    "cinema",
    "robotics",
    "astronomy",
    "gardening",
    "cooking",
    "baking",
    "knitting",
    "rowing",
    "surfing",
    "skiing",
    "running",
    "chemistry",
    "history",
    "botany",
]
# (predicate, one-valued in both chronomem's and memvara's registries, query template)
PREDICATES = (
    ("lives_in", True, "where does {s} live"),
    ("works_at", True, "where does {s} work"),
    ("job_title", True, "what is the job of {s}"),
    ("likes", False, "what does {s} like"),
    ("speaks", False, "which languages does {s} speak"),
    ("owns_pet", False, "what pet does {s} own"),
    ("plays", False, "what does {s} play"),
    ("visited", False, "which places did {s} visit"),
    ("studies", False, "what does {s} study"),
    ("collects", False, "what does {s} collect"),
    ("reads_about", False, "what does {s} read about"),
    ("member_of", False, "which club is {s} a member of"),
)
ONE_VALUED = {p for p, one, _ in PREDICATES if one}
T_VALID0 = datetime(2020, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class FactSpec:
    i: int
    subject: str
    predicate: str
    obj: str
    valid_from: datetime

    @property
    def text(self) -> str:
        return f"{self.subject} {self.predicate.replace('_', ' ')} {self.obj}"

    @property
    def namespace(self) -> tuple[str, ...]:
        return ("facts", self.subject.lower().replace(" ", "_"))

    @property
    def key(self) -> str:
        # One-valued slots overwrite their key (LangGraph's nearest thing to a new value);
        # many-valued ones get a key per value.
        return self.predicate if self.predicate in ONE_VALUED else f"{self.predicate}:{self.i}"

    @property
    def value(self) -> dict[str, Any]:
        # what a LangGraph memory item usually is: one text field, indexed
        return {"text": self.text}


@dataclass
class Workload:
    facts: list[FactSpec]
    singles: list[FactSpec]
    queries: list[str]
    slots: list[tuple[str, str]]


def subjects_for(n: int) -> list[str]:
    names = [f"{f} {last}" for last in LAST for f in FIRST]
    k = max(8, n // 8)
    out = names[:k]
    j = 2
    while len(out) < k:
        out += [f"{nm} {j}" for nm in names[: k - len(out)]]
        j += 1
    return out


def workload(n: int, n_single: int, n_queries: int, n_reads: int, seed: int = 7) -> Workload:
    rng = random.Random(seed)
    subjects = subjects_for(n)
    total = n + n_single
    facts: list[FactSpec] = []
    seen: set[tuple[str, str, str]] = set()
    i = 0
    while len(facts) < total:
        s = subjects[rng.randrange(len(subjects))]
        p = PREDICATES[rng.randrange(len(PREDICATES))][0]
        o = f"{rng.choice(ADJ)} {rng.choice(NOUN)}"
        if (s, p, o) in seen:
            continue
        seen.add((s, p, o))
        # valid time increases with insertion order: a one-valued slot's later value
        # supersedes the earlier one going forward, never retroactively
        facts.append(FactSpec(i, s, p, o, T_VALID0 + timedelta(minutes=i)))
        i += 1
    loaded, singles = facts[:n], facts[n:]
    templates = {p: t for p, _, t in PREDICATES}
    queries = []
    for _ in range(n_queries):
        f = loaded[rng.randrange(len(loaded))]
        r = rng.random()
        if r < 0.5:
            queries.append(templates[f.predicate].format(s=f.subject))
        elif r < 0.8:
            queries.append(f"who has something to do with {f.obj}")
        else:
            queries.append(f"{f.subject.split()[0]} {f.obj.split()[1]}")
    slots = [
        (f.subject, f.predicate)
        for f in (loaded[rng.randrange(len(loaded))] for _ in range(n_reads))
    ]
    return Workload(loaded, singles, queries, slots)


# -- system drivers --------------------------------------------------------------------------


class Driver:
    """One system under test. ``handles`` are what ``get`` takes (ids or keys)."""

    notes: list[str]

    def load(self, facts: Sequence[FactSpec]) -> list[Any]:
        raise NotImplementedError

    def write_one(self, f: FactSpec) -> Any:
        raise NotImplementedError

    def mark(self) -> Any:
        return datetime.now(timezone.utc)

    def search(self, q: str) -> list[Any]:
        raise NotImplementedError

    def get(self, handle: Any) -> Any:
        raise NotImplementedError

    current: Callable[[str, str], Any] | None = None
    # a query search bounded by one subject's namespace: (subject, query)
    ns_search: Callable[[str, str], Any] | None = None
    as_of: Callable[[str, str, Any], Any] | None = None
    can_search = True

    def settle(self) -> None:
        """Wait, outside any timing, for work the system runs in the background."""

    def close(self) -> None:
        pass


def settle_memory(memory: Any) -> None:
    """Wait for a chronomem store's WAL checkpoint thread (SQLite file stores) to be
    idle: the checkpoint runs off the write path, so alternating runs wait for it
    between turns, and its I/O lands in no one's timing (``peers.load_alternating``)."""
    checkpointer = getattr(memory.backend, "checkpointer", None)
    if checkpointer is not None:
        checkpointer.settle()


class ChronomemDriver(Driver):
    def __init__(self, url: str | None, embedder: Any):
        from chronomem import Memory

        self.m = Memory(url, embedder=embedder)
        self.notes = []
        self.current = lambda s, p: self.m.facts(subject=s, predicate=p)
        self.as_of = lambda s, p, t: self.m.facts(subject=s, predicate=p, as_of=t)

    def load(self, facts: Sequence[FactSpec]) -> list[Any]:
        ops = [
            self.m.assertion(f.subject, f.predicate, f.obj, valid_from=f.valid_from) for f in facts
        ]
        return list(self.m.apply(ops).fact_ids)

    def write_one(self, f: FactSpec) -> Any:
        return self.m.remember(f.subject, f.predicate, f.obj, valid_from=f.valid_from)

    def search(self, q: str) -> list[Any]:
        return list(self.m.search(q, k=10))

    def get(self, handle: Any) -> Any:
        return self.m.get(handle)

    def settle(self) -> None:
        settle_memory(self.m)

    def close(self) -> None:
        self.m.close()


class LangGraphDriver(Driver):
    """Any LangGraph ``BaseStore``: writes are puts, reads are gets and searches."""

    def __init__(self, store: Any, *, can_search: bool = True, notes: Sequence[str] = ()):
        self.store = store
        self.can_search = can_search
        self.notes = list(notes)
        # current read of a subject: list its namespace (no valid time, no as-of)
        self.current = lambda s, p: self.store.search(
            ("facts", s.lower().replace(" ", "_")), limit=50
        )
        if can_search:
            self.ns_search = lambda s, q: self.store.search(
                ("facts", s.lower().replace(" ", "_")), query=q, limit=10
            )

    def load(self, facts: Sequence[FactSpec]) -> list[Any]:
        from langgraph.store.base import PutOp

        self.store.batch([PutOp(f.namespace, f.key, f.value) for f in facts])
        return [(f.namespace, f.key) for f in facts]

    def write_one(self, f: FactSpec) -> Any:
        return self.store.put(f.namespace, f.key, f.value)

    def search(self, q: str) -> list[Any]:
        return list(self.store.search(("facts",), query=q, limit=10))

    def get(self, handle: Any) -> Any:
        return self.store.get(*handle)

    def settle(self) -> None:
        memory = getattr(self.store, "memory", None)  # a ChronomemStore's
        if memory is not None:
            settle_memory(memory)


class MemvaraDriver(Driver):
    def __init__(self, path: str, embedder: Any):
        memvara, note = common.import_memvara()
        from memvara.store.base import transaction

        self._transaction = transaction
        self.m = memvara.Memvara(
            path, user="bench", llm=memvara.NullLLM(), embedder=common.MemvaraEmbed(embedder)
        )
        self.notes = [note] if note else []
        self.notes.append("memvara's current/as-of reads are history(subject, predicate)")
        self.current = lambda s, p: self.m.history(s, p)
        self.as_of = lambda s, p, t: self.m.history(s, p, as_of=t)

    def _ids(self, receipt: Any) -> list[Any]:
        return [getattr(c, "id", c) for c in receipt.added]

    def load(self, facts: Sequence[FactSpec]) -> list[Any]:
        out: list[Any] = []
        with self._transaction(self.m.store):
            for f in facts:
                out += self._ids(
                    self.m.remember(f.subject, f.predicate, f.obj, valid_from=f.valid_from)
                )
        return out

    def write_one(self, f: FactSpec) -> Any:
        return self.m.remember(f.subject, f.predicate, f.obj, valid_from=f.valid_from)

    def search(self, q: str) -> list[Any]:
        return list(self.m.search(q, k=10))

    def get(self, handle: Any) -> Any:
        return self.m.get(handle)

    def close(self) -> None:
        self.m.close()


def pg_schema_url(schema: str, driver: str = "postgresql+psycopg", url: str | None = None) -> str:
    """``url`` (default ``CHRONOMEM_PG_URL``) with ``schema`` first on its search path."""
    base = (url or common.PG_URL).split("://", 1)[1]
    return f"{driver}://{base}?options=-csearch_path%3D{schema},public"


def pg_exec(sql: str, url: str | None = None) -> None:
    import psycopg

    base = (url or common.PG_URL).split("://", 1)[1]
    with psycopg.connect(f"postgresql://{base}", autocommit=True) as conn:
        conn.execute(sql)


def vec_connection(path: str) -> tuple[Any, list[str]]:
    """A connection ``SqliteStore`` can load sqlite-vec into, opened as its
    ``from_conn_string`` opens one (autocommit, any thread), and notes on it. The stdlib
    sqlite3 when it can load extensions; otherwise pysqlite3-binary's module (a newer
    SQLite, said in the notes): this machine's Python is built without extension loading,
    and without it ``SqliteStore`` has no index, so it would not embed on put."""
    import sqlite3

    probe = sqlite3.connect(":memory:")
    can_load = hasattr(probe, "enable_load_extension")
    probe.close()
    if can_load:
        return sqlite3.connect(path, check_same_thread=False, isolation_level=None), []
    import pysqlite3.dbapi2 as vec_sqlite  # type: ignore[import-not-found]

    note = (
        f"langgraph-sqlite runs on pysqlite3-binary's SQLite {vec_sqlite.sqlite_version} "
        f"(the stdlib's {sqlite3.sqlite_version} cannot load sqlite-vec here)"
    )
    conn = vec_sqlite.connect(path, check_same_thread=False, isolation_level=None)
    return conn, [note]


def chronomem_langgraph_store(url: str | None, index: dict[str, Any]) -> Any:
    """Opened the way a LangGraph user opens it: a URL and LangGraph's index config
    (the same ``embed`` callable every LangGraph peer gets)."""
    from langgraph.store.chronomem import ChronomemStore

    return ChronomemStore(url, index=index)  # type: ignore[arg-type]


def build(
    system: str,
    backend: str,
    workdir: str,
    embedder: Any,
    *,
    pg_url: str | None = None,
    pg_index: bool = False,
) -> tuple[Driver, Callable[[], None]]:
    """The driver, and a cleanup to run after it is closed. ``pg_url``: the PostgreSQL
    server (default ``CHRONOMEM_PG_URL``); ``pg_index``: give ``PostgresStore`` the same
    vector index as the others (the server needs pgvector)."""
    cleanup: Callable[[], None] = lambda: None  # noqa: E731
    url: str | None = None
    if backend == "postgres" and system in (
        "chronomem",
        "chronomem-langgraph",
        "langgraph-postgres",
    ):
        schema = f"bench_{secrets.token_hex(4)}"
        pg_exec(f"CREATE SCHEMA {schema}", pg_url)
        cleanup = lambda: pg_exec(f"DROP SCHEMA IF EXISTS {schema} CASCADE", pg_url)  # noqa: E731
        url = pg_schema_url(schema, url=pg_url)
    elif backend == "sqlite":
        url = os.path.join(workdir, f"{system}.db")
    embed = common.LangChainEmbed(embedder)
    index = {"dims": embedder.dim, "embed": embed, "fields": ["text"]}
    if system == "chronomem":
        return ChronomemDriver(url, embedder), cleanup
    if system == "chronomem-langgraph":
        store = chronomem_langgraph_store(url, index)
        return LangGraphDriver(store), lambda: (store.close(), cleanup())  # type: ignore[func-returns-value]
    if system == "langgraph-memory":
        from langgraph.store.memory import InMemoryStore

        return LangGraphDriver(InMemoryStore(index=index)), cleanup  # type: ignore[arg-type]
    if system in ("langgraph-sqlite", "langgraph-sqlite-kv"):
        from langgraph.store.sqlite import SqliteStore

        assert url is not None
        stack = contextlib.ExitStack()
        if system == "langgraph-sqlite":  # with its sqlite-vec index: embeds on put
            conn, notes = vec_connection(url)
            stack.callback(conn.close)
            store = SqliteStore(conn, index=index)  # type: ignore[arg-type]
        else:  # key-value only: no embedding, no search
            store = stack.enter_context(SqliteStore.from_conn_string(url))
            notes = ["langgraph-sqlite-kv is SqliteStore without an index: no embedding, no search"]
        store.setup()
        d = LangGraphDriver(store, can_search=system == "langgraph-sqlite", notes=notes)
        prev = cleanup
        return d, lambda: (stack.close(), prev())  # type: ignore[func-returns-value]
    if system == "langgraph-postgres":
        from langgraph.store.postgres import PostgresStore

        assert url is not None
        conn = url.replace("postgresql+psycopg://", "postgresql://")
        stack = contextlib.ExitStack()
        if pg_index:  # pgvector on the server: the same index as every other side
            store = stack.enter_context(PostgresStore.from_conn_string(conn, index=index))  # type: ignore[arg-type]
            notes = []
        else:
            store = stack.enter_context(PostgresStore.from_conn_string(conn))
            notes = ["PostgresStore without an index: the server has no pgvector, so no search"]
        store.setup()
        d = LangGraphDriver(store, can_search=pg_index, notes=notes)
        prev = cleanup
        return d, lambda: (stack.close(), prev())  # type: ignore[func-returns-value]
    if system == "memvara":
        return MemvaraDriver(os.path.join(workdir, "memvara.db"), embedder), cleanup
    raise SystemExit(f"unknown system {system!r}")


# -- one configuration (runs in a worker subprocess) ------------------------------------------


def timed(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000.0


def timed_all(items: Sequence[Any], fn: Callable[[Any], Any], budget_s: float) -> list[float]:
    """Latencies (ms) of ``fn(item)`` over ``items``, stopping once ``budget_s`` is spent
    (after at least 5 calls), so a peer that takes seconds per call cannot stall the run;
    how many calls were measured is reported as ``n``."""
    out: list[float] = []
    start = time.perf_counter()
    for it in items:
        out.append(timed(lambda it=it: fn(it)))
        if len(out) >= 5 and time.perf_counter() - start > budget_s:
            break
    return out


def lat(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": common.percentile(values, 50),
        "p95_ms": common.percentile(values, 95),
        "mean_ms": sum(values) / len(values) if values else float("nan"),
        "n": len(values),
    }


def _tenth(points: list[list[float]]) -> float:
    """Facts/s over a run of equal batches: their harmonic mean (facts / time)."""
    return len(points) / sum(1.0 / rate for _, rate in points)


def _other_phases(
    driver: Driver,
    wl: Workload,
    cfg: dict[str, Any],
    out: dict[str, Any],
    handles: list[Any],
    mark: Any,
) -> None:
    """Single writes, search, get, current and as-of reads (after the batched load)."""
    budget = cfg.get("budget_s", 60.0)
    single = timed_all(wl.singles, driver.write_one, budget)
    out["single_write"] = {**lat(single), "per_s": 1000.0 * len(single) / sum(single)}
    if driver.can_search:
        for q in wl.queries[:10]:
            driver.search(q)
        out["search"] = lat(timed_all(wl.queries[10:], driver.search, budget))
        out["search"]["hits_per_query"] = sum(len(driver.search(q)) for q in wl.queries[10:15]) / 5
    if driver.ns_search is not None:
        nss = driver.ns_search
        templates = {p: t for p, _, t in PREDICATES}
        pairs = [(s, templates[p].format(s=s)) for s, p in wl.slots]
        for s, q in pairs[:10]:
            nss(s, q)
        out["ns_search"] = lat(timed_all(pairs, lambda sq: nss(*sq), budget))
        out["ns_search"]["hits_per_query"] = sum(len(nss(s, q)) for s, q in pairs[:5]) / 5
    rng = random.Random(11)
    picks = [handles[rng.randrange(len(handles))] for _ in range(cfg["reads"])] if handles else []
    if picks:
        out["get"] = lat(timed_all(picks, driver.get, budget))
    if driver.current is not None:
        cur = driver.current
        out["current_read"] = lat(timed_all(wl.slots, lambda sp: cur(*sp), budget))
    if driver.as_of is not None:
        aso = driver.as_of
        out["as_of_read"] = lat(timed_all(wl.slots, lambda sp: aso(*sp, mark), budget))


def run_config(cfg: dict[str, Any]) -> dict[str, Any]:
    system, backend, size = cfg["system"], cfg["backend"], cfg["size"]
    early: list[str] = []
    if system == "memvara":
        _, note = common.import_memvara()  # alias sqlite3 before anything imports it
        early += [note] if note else []
    if system == "langgraph-sqlite":
        import sqlite3

        if not hasattr(sqlite3.Connection, "enable_load_extension"):
            early.append(
                common.alias_pysqlite3(
                    "SqliteStore's vector index loads the sqlite-vec extension, which this "
                    "Python's sqlite3 cannot (no enable_load_extension)"
                )
            )
    from chronomem.embedding import HashingEmbedder

    embedder = HashingEmbedder()
    wl = workload(size, cfg["singles"], cfg["queries"] + 10, cfg["reads"])
    rss_base = common.current_rss_mb()
    out: dict[str, Any] = {"system": system, "backend": backend, "size": size, "notes": early}
    with tempfile.TemporaryDirectory(prefix="cm-speed-") as workdir:
        driver, cleanup = build(system, backend, workdir, embedder)
        try:
            out["notes"] += driver.notes
            handles: list[Any] = []
            half = len(wl.facts) // 2
            t0 = time.perf_counter()
            mark = None
            curve: list[list[float]] = []  # [facts loaded so far, facts/s of that batch]
            for i in range(0, len(wl.facts), BATCH):
                if mark is None and i >= half:
                    mark = driver.mark()
                tb = time.perf_counter()
                handles += driver.load(wl.facts[i : i + BATCH])
                chunk = min(BATCH, len(wl.facts) - i)
                curve.append([i + chunk, chunk / (time.perf_counter() - tb)])
            load_s = time.perf_counter() - t0
            if mark is None:
                mark = driver.mark()
            out["batch_write"] = {
                "facts": len(wl.facts),
                "seconds": load_s,
                "per_s": len(wl.facts) / load_s,
                # the first and the last tenth of the load: flat means the rate does
                # not depend on how many facts the store already holds
                "first_tenth_per_s": _tenth(curve[: max(1, len(curve) // 10)]),
                "last_tenth_per_s": _tenth(curve[-max(1, len(curve) // 10) :]),
            }
            if cfg.get("curve"):
                out["batch_write"]["curve"] = curve
            if cfg.get("writes_only"):
                out["notes"].append("writes only: search and read phases not run (--writes-only)")
            if not cfg.get("writes_only"):
                _other_phases(driver, wl, cfg, out, handles, mark)
        finally:
            with contextlib.suppress(Exception):
                driver.close()
            cleanup()
    out["rss_base_mb"] = rss_base
    out["rss_peak_mb"] = common.peak_rss_mb()
    out["loadavg_after"] = os.getloadavg()
    return out


# -- orchestration ------------------------------------------------------------------------------


def available(system: str) -> str | None:
    """None when the system can run here, else why not."""
    need = {
        "chronomem-langgraph": "langgraph.store.chronomem",
        "langgraph-memory": "langgraph.store.memory",
        "langgraph-sqlite": "langgraph.store.sqlite",
        "langgraph-sqlite-kv": "langgraph.store.sqlite",
        "langgraph-postgres": "langgraph.store.postgres",
        "memvara": "memvara",
    }.get(system)
    if need is None:
        return None
    if not common.have(need):
        pkg = {
            "langgraph.store.sqlite": "langgraph-checkpoint-sqlite",
            "langgraph.store.postgres": "langgraph-checkpoint-postgres",
        }.get(need, need.split(".")[0])
        return f"not installed (pip install {pkg})"
    if system == "chronomem-langgraph":
        try:
            from langgraph.store import chronomem as lgc

            if not hasattr(lgc, "ChronomemStore"):
                return "langgraph.store.chronomem has no ChronomemStore yet"
        except Exception as exc:
            return f"langgraph.store.chronomem does not import: {exc}"
    return None


def pg_ready() -> str | None:
    try:
        pg_exec("CREATE EXTENSION IF NOT EXISTS btree_gist SCHEMA public")
    except Exception as exc:
        return f"PostgreSQL not reachable at {common.PG_URL}: {str(exc).splitlines()[0]}"
    return None


def plan(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[str]]:
    skipped: list[str] = []
    sizes = [int(s) for s in args.sizes.split(",") if s]
    backends = [b for b in args.backends.split(",") if b]
    peers = [p for p in args.peers.split(",") if p] if args.peers else list(PEERS)
    why_pg = pg_ready() if "postgres" in backends else None
    if why_pg:
        skipped.append(f"postgres backend: {why_pg}")
        backends = [b for b in backends if b != "postgres"]
    systems: list[tuple[str, str]] = []
    ours = [s for s in args.ours.split(",") if s] if args.ours else list(OURS)
    for s in ours:
        if s not in OURS:
            raise SystemExit(f"unknown system {s!r}; choose from {', '.join(OURS)}")
    for b in backends:
        for s in ours:
            systems.append((s, b))
    for p in peers:
        b = BACKEND_OF.get(p)
        if b is None:
            raise SystemExit(f"unknown peer {p!r}; choose from {', '.join(PEERS)}")
        if b in backends or b == "memory":
            systems.append((p, b))
    cfgs = []
    for s, b in systems:
        why = available(s)
        if why:
            skipped.append(f"{s}: {why}")
            continue
        for n in sizes:
            cfgs.append(
                {
                    "system": s,
                    "backend": b,
                    "size": n,
                    "singles": args.singles,
                    "queries": args.queries,
                    "reads": args.reads,
                    "budget_s": args.budget,
                    "writes_only": args.writes_only,
                    "curve": args.curve,
                }
            )
    return cfgs, sorted(set(skipped))


def run_worker_subprocess(cfg: dict[str, Any], timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.speed", "--worker", json.dumps(cfg)]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(common.ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    t = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=common.ROOT
        )
    except subprocess.TimeoutExpired:
        return {**cfg, "error": f"timed out after {timeout:.0f} s"}
    wall = time.perf_counter() - t
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            res: dict[str, Any] = json.loads(line)
            res["wall_s"] = wall
            return res
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {**cfg, "error": " | ".join(tail) or f"exit {proc.returncode}"}


def g(r: dict[str, Any] | None, *path: str) -> float | None:
    cur: Any = r
    for p in path:
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return float(cur) if isinstance(cur, int | float) else None


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def label(r: dict[str, Any]) -> str:
    return f"{r['system']}/{r['backend']}"


def results_table(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        if "error" in r:
            rows.append([label(r), r["size"], *(["-"] * 11), "ERROR: " + r["error"][:60]])
            continue
        rows.append(
            [
                label(r),
                r["size"],
                g(r, "batch_write", "per_s"),
                g(r, "single_write", "per_s"),
                g(r, "search", "p50_ms"),
                g(r, "search", "p95_ms"),
                g(r, "ns_search", "p50_ms"),
                g(r, "get", "p50_ms"),
                g(r, "current_read", "p50_ms"),
                g(r, "as_of_read", "p50_ms"),
                g(r, "as_of_read", "p95_ms"),
                r.get("rss_peak_mb"),
                (r.get("rss_peak_mb") or 0) - (r.get("rss_base_mb") or 0),
                "",
            ]
        )
    return common.table(
        [
            "system/backend",
            "facts",
            "batch/s",
            "single/s",
            "search p50",
            "p95",
            "ns-search p50",
            "get p50",
            "current p50",
            "as-of p50",
            "p95",
            "RSS MB",
            "+store MB",
            "",
        ],
        rows,
    )


def ratio_rows(results: list[dict[str, Any]], backend: str) -> list[dict[str, Any]]:
    """chronomem/<backend> against every peer at the same size. Latency ratios: lower is
    better for us; throughput ratios: higher is better for us."""
    ok = [r for r in results if "error" not in r]
    out = []
    for ours in [r for r in ok if r["system"] in OURS and r["backend"] == backend]:
        for peer in [r for r in ok if r["system"] in PEERS and r["size"] == ours["size"]]:
            if peer["backend"] not in (backend, "memory") and peer["system"] != "memvara":
                continue
            out.append(
                {
                    "ours": label(ours),
                    "peer": label(peer),
                    "size": ours["size"],
                    "batch_write_x": ratio(
                        g(ours, "batch_write", "per_s"), g(peer, "batch_write", "per_s")
                    ),
                    "single_write_x": ratio(
                        g(ours, "single_write", "per_s"), g(peer, "single_write", "per_s")
                    ),
                    "search_p50_x": ratio(g(ours, "search", "p50_ms"), g(peer, "search", "p50_ms")),
                    "search_p95_x": ratio(g(ours, "search", "p95_ms"), g(peer, "search", "p95_ms")),
                    "ns_search_p50_x": ratio(
                        g(ours, "ns_search", "p50_ms"), g(peer, "ns_search", "p50_ms")
                    ),
                    "get_p50_x": ratio(g(ours, "get", "p50_ms"), g(peer, "get", "p50_ms")),
                    "current_p50_x": ratio(
                        g(ours, "current_read", "p50_ms"), g(peer, "current_read", "p50_ms")
                    ),
                    "rss_peak_x": ratio(ours.get("rss_peak_mb"), peer.get("rss_peak_mb")),
                }
            )
    return out


def ratio_table(rows: list[dict[str, Any]]) -> str:
    return common.table(
        [
            "ours",
            "peer",
            "facts",
            "batch write x",
            "single write x",
            "search p50 x",
            "search p95 x",
            "ns-search p50 x",
            "get p50 x",
            "current p50 x",
            "RSS x",
        ],
        [
            [
                r["ours"],
                r["peer"],
                r["size"],
                r["batch_write_x"],
                r["single_write_x"],
                r["search_p50_x"],
                r["search_p95_x"],
                r["ns_search_p50_x"],
                r["get_p50_x"],
                r["current_p50_x"],
                r["rss_peak_x"],
            ]
            for r in rows
        ],
    )


def targets(results: list[dict[str, Any]], backend: str) -> list[dict[str, Any]]:
    """The targets this benchmark exists to check, as measured (never assumed)."""
    ok = {(r["system"], r["backend"], r["size"]): r for r in results if "error" not in r}
    out = []
    ours = ok.get(("chronomem", backend, 10_000))
    for peer, pb in (("langgraph-memory", "memory"), ("memvara", "sqlite")):
        p = ok.get((peer, pb, 10_000))
        x = ratio(g(ours, "search", "p50_ms"), g(p, "search", "p50_ms"))
        out.append(
            {
                "target": f"search p50 @10k <= 0.05x {peer}",
                "measured_x": x,
                "met": None if x is None else x <= 0.05,
            }
        )
    lg = "chronomem-langgraph"
    mem10k = ok.get(("langgraph-memory", "memory", 10_000))
    x = ratio(g(ok.get((lg, backend, 10_000)), "search", "p50_ms"), g(mem10k, "search", "p50_ms"))
    if x is not None:
        out.append(
            {
                "target": "LangGraph search across namespaces p50 @10k <= 0.05x langgraph-memory",
                "measured_x": x,
                "met": x <= 0.05,
            }
        )
    for size in sorted({r["size"] for r in results}):
        o = ok.get((lg, backend, size))
        ms = g(o, "ns_search", "p50_ms")
        if ms is not None and size >= 100_000:
            out.append(
                {
                    "target": f"LangGraph search inside a namespace p50 @{size:,} <= 2 ms (ms)",
                    "measured_x": ms,
                    "met": ms <= 2.0,
                }
            )
        if backend == "sqlite":
            x = ratio(
                g(o, "get", "p50_ms"),
                g(ok.get(("langgraph-sqlite", backend, size)), "get", "p50_ms"),
            )
            if x is not None:
                out.append(
                    {
                        "target": f"LangGraph get p50 @{size:,} <= 3x langgraph-sqlite",
                        "measured_x": x,
                        "met": x <= 3.0,
                    }
                )
    peer_names = (
        ("langgraph-sqlite", "langgraph-sqlite-kv")
        if backend == "sqlite"
        else ("langgraph-postgres",)
    )
    for size in sorted({r["size"] for r in results}):
        for peer_name in peer_names:
            p = ok.get((peer_name, backend, size))
            for ours_name, who in (
                ("chronomem", ""),
                ("chronomem-langgraph", "LangGraph puts through chronomem: "),
            ):
                o = ok.get((ours_name, backend, size))
                for kind in ("batch_write", "single_write"):
                    x = ratio(g(o, kind, "per_s"), g(p, kind, "per_s"))
                    if x is None and ours_name != "chronomem":
                        continue
                    out.append(
                        {
                            "target": f"{who}{kind.replace('_', ' ')} @{size:,} >= 1.0x {peer_name} puts/s",
                            "measured_x": x,
                            "met": None if x is None else x >= 1.0,
                        }
                    )
    return out


def plot(results: list[dict[str, Any]], path: str) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed; no plot"
    ok = [r for r in results if "error" not in r]
    names = sorted({label(r) for r in ok})
    colors = {n: plt.get_cmap("tab10")(i % 10) for i, n in enumerate(names)}
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.6))
    panels = (
        ("search", "p50_ms", "search p50 (ms, k=10)"),
        ("batch_write", "per_s", "batched ingest (facts/s)"),
        ("single_write", "per_s", "single writes (writes/s)"),
    )
    for ax, (op, field, title) in zip(axes, panels, strict=True):
        for name in names:
            pts = sorted((r["size"], g(r, op, field)) for r in ok if label(r) == name)
            pts = [(x, y) for x, y in pts if y is not None]
            if not pts:
                continue
            style = "-o" if name.startswith("chronomem") else "--s"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=colors[name], label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("facts in the store")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    handles = [
        plt.Line2D(
            [],
            [],
            color=colors[n],
            marker="o" if n.startswith("chronomem") else "s",
            linestyle="-" if n.startswith("chronomem") else "--",
            label=n,
        )
        for n in names
    ]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle("chronomem vs peers — same machine, same run, same hashing embedder")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", default="1000,10000,100000", help="facts per store (1000000 opt-in)")
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument(
        "--peers", default=None, help=f"comma list; default all installed: {','.join(PEERS)}"
    )
    ap.add_argument("--plot", default=None, help="write a PNG of latency/throughput vs size")
    ap.add_argument("--quick", action="store_true", help="1k facts, fewer calls: a smoke run")
    ap.add_argument("--singles", type=int, default=300)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--reads", type=int, default=300)
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per configuration")
    ap.add_argument(
        "--budget", type=float, default=60.0, help="seconds per measured phase (>= 5 calls)"
    )
    ap.add_argument("--no-write", action="store_true", help="do not write results JSON")
    ap.add_argument(
        "--ours", default=None, help=f"comma list of our systems; default {','.join(OURS)}"
    )
    ap.add_argument(
        "--writes-only",
        action="store_true",
        help="measure the batched load only (no single writes, search or reads)",
    )
    ap.add_argument(
        "--curve", action="store_true", help="keep the per-batch rate of the load in the JSON"
    )
    ap.add_argument(
        "--out",
        default="speed",
        help="results file stem: writes results/<out>-<backend>.json (default speed)",
    )
    ap.add_argument(
        "--replot", action="store_true", help="only redraw --plot from results/speed-*.json"
    )
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        res = run_config(json.loads(args.worker))
        print(json.dumps(res, default=str))
        return 0

    if args.replot:
        seen: dict[tuple[str, str, int], dict[str, Any]] = {}
        for f in sorted(common.RESULTS.glob("speed-*.json")):
            for r in json.loads(f.read_text())["results"]:
                seen[(r["system"], r["backend"], r["size"])] = r
        why = plot(list(seen.values()), args.plot or str(common.RESULTS / "speed.png"))
        print(why or "replotted")
        return 0
    if args.quick:
        args.sizes = "1000"
        args.singles, args.queries, args.reads = 50, 50, 50
    cfgs, skipped = plan(args)
    for s in skipped:
        print(f"skipped: {s}")
    results = []
    bar = None
    with contextlib.suppress(ImportError):
        from tqdm import tqdm

        bar = tqdm(total=len(cfgs), desc="configurations", unit="cfg")
    for cfg in cfgs:
        if bar is not None:
            bar.set_postfix_str(f"{cfg['system']}/{cfg['backend']} {cfg['size']:,}")
        res = run_worker_subprocess(cfg, args.timeout)
        results.append(res)
        if bar is not None:
            bar.update(1)
        else:
            print(f"done {label(res)} {res['size']:,}", flush=True)
    if bar is not None:
        bar.close()

    notes = sorted({n for r in results for n in r.get("notes", [])})
    print()
    print("All configurations (latencies in ms; each configuration in its own process):")
    print(results_table(results))
    if notes:
        print()
        for n in notes:
            print(f"note: {n}")
    backends = sorted({r["backend"] for r in results if r["system"] in OURS})
    stamp = common.stamp()
    for b in backends:
        rows = ratio_rows(results, b)
        tg = targets(results, b)
        print()
        print(
            f"Ratios, chronomem on {b} / peer (latency x: lower is better; throughput x: higher is better):"
        )
        print(ratio_table(rows))
        print()
        print(f"Targets ({b}):")
        print(
            common.table(
                ["target", "measured x", "met"],
                [
                    [
                        t["target"],
                        t["measured_x"],
                        {True: "yes", False: "NO", None: "n/a"}[t["met"]],
                    ]
                    for t in tg
                ],
            )
        )
        if not args.no_write:
            mine = [r for r in results if r["backend"] in (b, "memory") or r["system"] == "memvara"]
            path = common.write_json(
                f"{args.out}-{b}.json",
                {
                    **stamp,
                    "benchmark": "speed",
                    "backend": b,
                    "configuration": {
                        "sizes": args.sizes,
                        "batch": BATCH,
                        "singles": args.singles,
                        "queries": args.queries,
                        "reads": args.reads,
                        "k": 10,
                        "embedder": "chronomem HashingEmbedder(dim=256) for every system",
                        "quick": args.quick,
                    },
                    "skipped": skipped,
                    "notes": notes,
                    "results": mine,
                    "ratios": rows,
                    "targets": tg,
                },
            )
            print(f"wrote {common.shown(path)}")
    if args.plot:
        why = plot(results, args.plot)
        print(why or f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
