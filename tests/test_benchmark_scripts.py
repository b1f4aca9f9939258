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
