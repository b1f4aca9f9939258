"""The benchmark scripts stay runnable (tiny sizes; real runs are by hand)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_search_benchmark_runs_and_reports_every_figure(tmp_path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "search.py"), "--one", "300", "--queries", "5"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    row = json.loads(out.stdout.strip().splitlines()[-1])
    assert row["size"] == 300 and 0 < row["versions"] <= 300  # repeats are `unchanged`
    for key in ("search_p50_ms", "search_p95_ms", "current_p50_ms", "as_of_p50_ms", "peak_rss_mb"):
        assert row[key] > 0, key


def test_writers_benchmark_counts_every_fact_of_every_writer(tmp_path) -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks.speed import workload
    from benchmarks.writers import run_one
    from chronomem import Memory

    r = run_one("sqlite", "chronomem", 2, 7, "own", 40, str(tmp_path))
    assert r["facts"] == 40 and r["per_s"] > 0
    (db,) = tmp_path.glob("chronomem-*.db")
    subjects = {f.subject for f in workload(40, 0, 0, 0).facts}
    seen: list[set[str]] = []
    for tenant in ("tenant0", "tenant1"):
        with Memory(str(db), tenant=tenant) as m:
            seen.append({f.subject for f in m.facts()})
    assert seen[0] and seen[1] and not (seen[0] & seen[1])  # each writer its own tenant
    assert seen[0] | seen[1] == subjects
    with Memory(str(db)) as m:
        assert m.facts() == []  # nothing landed in the default tenant


def test_writers_shares_split_by_subject() -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks.speed import workload
    from benchmarks.writers import shares

    facts = workload(200, 0, 0, 0).facts
    parts = shares(facts, 3)
    assert sorted(f.i for p in parts for f in p) == sorted(f.i for f in facts)
    owners = [{f.subject for f in p} for p in parts]
    assert (
        not (owners[0] & owners[1]) and not (owners[1] & owners[2]) and not (owners[0] & owners[2])
    )


def test_writers_table_reports_a_failed_peer_and_ratios() -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks.writers import table

    def row(system: str, w: int, tenancy: str, **kw: object) -> dict[str, object]:
        return {"system": system, "writers": w, "batch": 1, "tenancy": tenancy, **kw}

    out = table(
        [
            row("chronomem", 1, "own", per_s=100.0),
            row("chronomem", 2, "own", per_s=150.0),
            row("peer", 1, "-", per_s=50.0),
            row("peer", 2, "-", failed="database is locked"),
        ]
    ).splitlines()
    assert out[3].split("|")[6:8] == [" 1.50 ", " - "]  # vs one writer; the peer failed
    assert out[2].split("|")[7] == " 2.00 "  # one writer vs the peer's one writer
    assert "failed: database is locked" in out[5]


def test_a_result_written_outside_the_repository_is_named_by_its_full_path(tmp_path) -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks import common

    assert common.shown(common.RESULTS / "recall.json") == "benchmarks/results/recall.json"
    outside = tmp_path / "recall-elsewhere.json"
    assert common.shown(outside) == str(outside)


def test_halves_are_a_fixed_hash_of_the_id() -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks import common

    # pinned: a change to the hash would move items between halves after tuning on one
    assert common.half_of("move-paris-berlin", "changes") == "heldout"
    assert common.half_of("e47becba", "longmemeval") == "tuning"
    halves = [common.half_of(f"q{i}", "longmemeval") for i in range(400)]
    assert 150 < halves.count("tuning") < 250 and set(halves) == set(common.HALVES)


def test_recall_set_overrides_a_constant_wherever_it_was_imported() -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks import recall
    from chronomem.retrieval import fusion, legs

    before = fusion.RRF_K
    try:
        assert recall.override(["fusion.RRF_K=17"]) == {"fusion.RRF_K": 17}
        assert (fusion.RRF_K, legs.RRF_K) == (17, 17)  # legs imported it by name
    finally:
        recall.override([f"fusion.RRF_K={before}"])
    assert (before, before) == (fusion.RRF_K, legs.RRF_K)


def test_namespaces_benchmark_agrees_with_its_peers(tmp_path) -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks.namespaces import LISTINGS, run

    row = run(200, 6, 2, str(tmp_path), False)  # asserts every store lists the same
    assert row["items"] == 200 and row["namespaces"] == 6
    for name in LISTINGS:
        assert row[name]["chronomem_ms"] > 0 and row[name]["ratio_vs_SqliteStore"] > 0


def test_namespaces_calls_counts_one_statement_per_call(tmp_path) -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks.namespaces import calls

    row = calls(200, 4, str(tmp_path))  # asserts both stores list the same
    listing, get = row["list_namespaces"], row["get"]
    assert (listing["statements"], listing["rows"]) == (1, 25)  # a namespace per 8 items
    assert (get["statements"], get["rows"]) == (1, 1)
    assert listing["vm_steps"] > 0 and get["ratio"] > 0
