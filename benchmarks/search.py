"""Search and read latency of chronomem at growing store sizes (issue: retrieval).

    python benchmarks/search.py                       # 1k, 10k, 100k facts on SQLite
    python benchmarks/search.py --sizes 1000000       # 1M (opt-in: minutes)
    python benchmarks/search.py --backend postgres    # PostgreSQL (CHRONOMEM_PG_URL)

Each size runs in its own subprocess so peak RSS is per size. Reports p50/p95
of ``search(k=10)``, of current reads ``facts(subject=…)``, of as-of reads
``facts(subject=…, as_of=…)`` (and their ratio to current reads), ingest rate
and peak RSS. Hashing embedder (the default). Writes JSON to
``benchmarks/results/search-<backend>.json``."""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
PG_URL = os.environ.get("CHRONOMEM_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
CITIES = [f"city{i}" for i in range(500)]
PREDICATES = ["lives_in", "works_at", "likes", "speaks", "plans"]
WORDS = ["alpha", "beta", "gamma", "delta", "north", "south", "river", "harbour"]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def kept_database(name: str) -> str:
    """The URL of database ``name`` on the server at CHRONOMEM_PG_URL, created if absent."""
    import psycopg
    from sqlalchemy.engine import make_url

    base = make_url(PG_URL)
    dsn = base.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as c:
        if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            c.execute(f'CREATE DATABASE "{name}"')
    url = base.set(database=name)
    with psycopg.connect(url.set(drivername="postgresql").render_as_string(False)) as c:
        for ext in ("btree_gist", "vector"):
            if c.execute(
                "SELECT 1 FROM pg_available_extensions WHERE name = %s", (ext,)
            ).fetchone():
                c.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
        c.commit()
    return url.render_as_string(hide_password=False)


def measure(
    size: int,
    backend: str,
    queries: int,
    hnsw_after_load: bool = False,
    database: str | None = None,
) -> dict[str, object]:
    from chronomem import Memory
    from chronomem.retrieval import search as retrieval_search

    schema = None
    reused = False
    if database:  # a dedicated database, kept: loaded once, reused by later runs
        url = kept_database(database)
    elif backend == "postgres":
        from sqlalchemy import create_engine, text

        schema = f"bench_{os.getpid()}"
        eng = create_engine(PG_URL)
        with eng.connect() as c:
            for ext in ("btree_gist", "vector"):  # those the server has (pgvector: HNSW legs)
                if c.execute(
                    text("SELECT 1 FROM pg_available_extensions WHERE name = :n"), {"n": ext}
                ).scalar():
                    c.execute(text(f"CREATE EXTENSION IF NOT EXISTS {ext} SCHEMA public"))
            c.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"))
            c.commit()
        url = f"{PG_URL}?options=-csearch_path%3D{schema},public"
    else:
        url = str(Path(tempfile.mkdtemp()) / "bench.db")
    m = Memory(url)
    if database:  # loaded before (a marker row written once a load completed)?
        with m._engine.backend.write() as c:
            c.exec_driver_sql("CREATE TABLE IF NOT EXISTS bench_loaded (size bigint PRIMARY KEY)")
            reused = bool(
                c.exec_driver_sql(f"SELECT 1 FROM bench_loaded WHERE size = {int(size)}").first()
            )
    bulk = hnsw_after_load and m._retrieval.pgvector and not reused
    if bulk:  # load without the HNSW index, build it once after (CREATE INDEX)
        with m._engine.backend.write() as c:
            c.exec_driver_sql("DROP INDEX IF EXISTS cm_vectors_hnsw")
    rnd = random.Random(size)
    subjects = max(1, size // 5)
    t0 = time.perf_counter()
    batch = 2000
    midpoint = None
    for start in range(0, 0 if reused else size, batch):
        ops = [
            m.assertion(
                f"user{rnd.randrange(subjects)}",
                rnd.choice(PREDICATES),
                f"{rnd.choice(CITIES)} {rnd.choice(WORDS)}",
            )
            for _ in range(min(batch, size - start))
        ]
        receipt = m.apply(ops)
        if midpoint is None and start >= size // 2:
            midpoint = receipt.recorded_at
    ingest_s = time.perf_counter() - t0
    index_s = None
    if bulk:
        t = time.perf_counter()
        with m._engine.backend.write() as c:
            c.exec_driver_sql("SET LOCAL maintenance_work_mem = '2GB'")
            c.exec_driver_sql(
                "CREATE INDEX cm_vectors_hnsw ON cm_vectors USING hnsw (embedding vector_cosine_ops)"
            )
            c.exec_driver_sql("ANALYZE cm_vectors")
            c.exec_driver_sql("ANALYZE cm_versions")
        index_s = time.perf_counter() - t
    if database and not reused:
        with m._engine.backend.write() as c:
            c.exec_driver_sql(f"INSERT INTO bench_loaded VALUES ({int(size)})")
    if reused:  # the queries a fresh load would have drawn (the same seed, the same draws)
        for _ in range(size):
            rnd.randrange(subjects), rnd.choice(PREDICATES), rnd.choice(CITIES), rnd.choice(WORDS)
    as_of = midpoint or datetime.now(timezone.utc)
    qs = [
        (
            f"where does user{rnd.randrange(subjects)} live {rnd.choice(CITIES)}",
            f"user{rnd.randrange(subjects)}",
        )
        for _ in range(queries)
    ]
    t = time.perf_counter()
    m.search(qs[0][0])  # first call builds the in-process mirror; measured separately
    first_search_s = time.perf_counter() - t
    timings: dict[str, list[float]] = {"search": [], "current": [], "as_of": []}
    for query, subject in qs:
        for name, fn in (
            ("search", lambda q=query: m.search(q, k=10)),
            ("current", lambda s=subject: m.facts(subject=s)),
            ("as_of", lambda s=subject: m.facts(subject=s, as_of=as_of)),
        ):
            t = time.perf_counter()
            fn()
            timings[name].append((time.perf_counter() - t) * 1000)
    # each vector or lexical leg alone (the same queries, fewer of them)
    legs_p50: dict[str, float] = {}
    for leg in ("fact_lexical", "fact_vector", "entity_graph"):
        ts = []
        for query, _ in qs[: max(20, queries // 4)]:
            t = time.perf_counter()
            retrieval_search(m._engine, m.scope, query, k=10, legs_enabled=[leg])
            ts.append((time.perf_counter() - t) * 1000)
        legs_p50[leg] = round(statistics.median(ts), 3)
    stats = m.stats()
    m.close()
    if schema:
        from sqlalchemy import create_engine, text

        eng = create_engine(PG_URL)
        with eng.connect() as c:
            c.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
            c.commit()
    out: dict[str, object] = {
        "size": size,
        "versions": stats.versions,
        "pgvector": bool(m._retrieval.pgvector),
        "database": database,
        "reused_database": reused,
        "ingest_s": None if reused else round(ingest_s, 1),
        "ingest_facts_per_s": None if reused else round(size / ingest_s, 1),
        "hnsw_built_after_load_s": None if index_s is None else round(index_s, 1),
        "first_search_s": round(first_search_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    for name, values in timings.items():
        out[f"{name}_p50_ms"] = round(statistics.median(values), 3)
        out[f"{name}_p95_ms"] = round(pct(values, 0.95), 3)
    out["one_leg_search_p50_ms"] = legs_p50
    as_of_p50, current_p50 = out["as_of_p50_ms"], out["current_p50_ms"]
    assert isinstance(as_of_p50, float) and isinstance(current_p50, float)
    out["as_of_over_current_p50"] = round(as_of_p50 / max(current_p50, 1e-9), 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", help="results file (default benchmarks/results/search-<backend>.json)")
    ap.add_argument(
        "--hnsw-after-load",
        action="store_true",
        help="pgvector: load without the HNSW index and build it once after (bulk load)",
    )
    ap.add_argument(
        "--database",
        help="PostgreSQL: a dedicated database on the server (created if absent) that is kept: "
        "loaded once, reused as it is by later runs of the same size",
    )
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process: one size
    args = ap.parse_args()
    if args.one:
        print(
            json.dumps(
                measure(args.one, args.backend, args.queries, args.hnsw_after_load, args.database)
            )
        )
        return
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        res = subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--backend", args.backend, "--queries", str(args.queries)]
            + (["--hnsw-after-load"] if args.hnsw_after_load else [])
            + (["--database", args.database] if args.database else []),
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        row = json.loads(res.stdout.strip().splitlines()[-1])
        rows.append(row)
        rate = row["ingest_facts_per_s"]
        print(
            f"{row['size']:>9,} facts  search p50 {row['search_p50_ms']:7.2f} ms  p95 {row['search_p95_ms']:7.2f} ms"
            f" | current p50 {row['current_p50_ms']:6.2f} ms | as-of p50 {row['as_of_p50_ms']:6.2f} ms"
            f" ({row['as_of_over_current_p50']}x) | ingest "
            + (f"{rate:,.0f}/s" if rate is not None else "(database reused)")
            + f" | legs {row['one_leg_search_p50_ms']}"
            + f" | peak RSS {row['peak_rss_mb']} MB",
            flush=True,
        )
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        growth = float(b["search_p50_ms"]) / max(float(a["search_p50_ms"]), 1e-9)
        print(f"search p50 grows {growth:.1f}x for {b['size'] // a['size']}x more facts")
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE
    ).stdout.strip()
    result = {
        "benchmark": "search",
        "backend": args.backend,
        "commit": commit,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "platform": platform.platform(),
        },
        "embedder": "hashing-v1-256",
        "pg_url": PG_URL if args.backend == "postgres" else None,
        "loadavg": os.getloadavg(),
        "queries": args.queries,
        "hnsw_after_load": args.hnsw_after_load,
        "rows": rows,
    }
    out = Path(args.out).resolve() if args.out else HERE / "results" / f"search-{args.backend}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
