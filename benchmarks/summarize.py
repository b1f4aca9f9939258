"""Print the README's summary tables (markdown) from the JSON files in results/.

.venv/bin/python benchmarks/summarize.py"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def f(x: Any, d: int = 1) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "-"
    if isinstance(x, float):
        return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.{d}f}"
    return f"{x:,}" if isinstance(x, int) else str(x)


def md(headers: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def g(r: dict[str, Any], *path: str) -> Any:
    for p in path:
        if not isinstance(r, dict) or p not in r:
            return None
        r = r[p]
    return r


def speed() -> None:
    for backend in ("sqlite", "postgres"):
        p = RESULTS / f"speed-{backend}.json"
        if not p.exists():
            continue
        d = json.loads(p.read_text())
        src = d.get("chronomem_source", {})
        print(
            f"\n### Speed — chronomem on {backend} (commit {str(src.get('snapshot_of') or d['git']['commit'])[:10]})\n"
        )
        rows = []
        for r in d["results"]:
            if "error" in r:
                rows.append(
                    [
                        f"{r['system']}/{r['backend']}",
                        f(r["size"]),
                        "not measured: " + r["error"][:70],
                    ]
                    + [""] * 8
                )
                continue
            rows.append(
                [
                    f"{r['system']}/{r['backend']}",
                    f(r["size"]),
                    f(g(r, "batch_write", "per_s"), 0),
                    f(g(r, "single_write", "per_s"), 0),
                    f(g(r, "search", "p50_ms"), 2),
                    f(g(r, "search", "p95_ms"), 2),
                    f(g(r, "get", "p50_ms"), 2),
                    f(g(r, "current_read", "p50_ms"), 2),
                    f(g(r, "as_of_read", "p50_ms"), 2),
                    f(r.get("rss_peak_mb"), 0),
                    f((r.get("rss_peak_mb") or 0) - (r.get("rss_base_mb") or 0), 0),
                ]
            )
        print(
            md(
                [
                    "system/backend",
                    "facts",
                    "batch facts/s",
                    "single writes/s",
                    "search p50 ms",
                    "search p95 ms",
                    "get p50 ms",
                    "current read p50 ms",
                    "as-of read p50 ms",
                    "peak RSS MB",
                    "RSS over baseline MB",
                ],
                rows,
            )
        )
        print(f"\nTargets ({backend}):\n")
        print(
            md(
                ["target", "measured", "met"],
                [
                    [
                        t["target"],
                        f(t["measured_x"], 2) + "x" if t["measured_x"] is not None else "-",
                        {True: "yes", False: "**no**", None: "n/a"}[t["met"]],
                    ]
                    for t in d["targets"]
                ],
            )
        )


def recall(name: str) -> None:
    p = RESULTS / name
    if not p.exists():
        return
    d = json.loads(p.read_text())
    src = d.get("chronomem_source", {})
    for ds, arms in d["results"].items():
        tables = dict.fromkeys(t for a in arms for t in a["tables"])
        for table in tables:
            for emb in dict.fromkeys(a["embedder"] for a in arms):
                mine = [a for a in arms if a["embedder"] == emb and table in a["tables"]]
                if not mine:
                    continue
                n = mine[0]["tables"][table]["result"]["n"]
                print(
                    f"\n### {ds} — evidence = {table}, {n:,} questions, embedder {emb} "
                    f"(commit {str(src.get('snapshot_of') or d['git']['commit'])[:10]})\n"
                )
                rows = []
                for a in mine:
                    r = a["tables"][table]["result"]
                    rows.append(
                        [
                            f"{a['system']} {a['arm']}",
                            *[f(r[m]) for m in ("R@1", "R@5", "R@10", "R@12", "R@20", "MRR")],
                            f(a["facts"]),
                            f(a["ingest_s"]),
                            f(a["search_ms"]["p50"]),
                            f(a["search_ms"]["p95"]),
                        ]
                    )
                c = mine[0]["tables"][table]["chance"]
                rows.append(
                    [
                        "chance",
                        *[f(c[m], 2) for m in ("R@1", "R@5", "R@10", "R@12", "R@20", "MRR")],
                        "",
                        "",
                        "",
                        "",
                    ]
                )
                print(
                    md(
                        [
                            "system arm",
                            "R@1",
                            "R@5",
                            "R@10",
                            "R@12",
                            "R@20",
                            "MRR",
                            "facts",
                            "ingest s",
                            "search p50 ms",
                            "p95 ms",
                        ],
                        rows,
                    )
                )
    if d.get("determinism"):
        print("\nDeterminism (each arm re-run on a fresh store):\n")
        print(
            md(
                ["arm", "rankings differing", "metrics identical"],
                [
                    [
                        k,
                        f"{v['rankings_differing']} / {v.get('of', '?')}",
                        "yes" if v["metrics_identical"] else "**no**",
                    ]
                    for k, v in d["determinism"].items()
                ],
            )
        )


def ablations() -> None:
    for p in sorted(RESULTS.glob("ablate-*.json")):
        d = json.loads(p.read_text())
        cfg = d["configuration"]
        table = "evidence" if cfg["dataset"] == "locomo" else "session"
        print(
            f"\n### Ablation — {cfg['dataset']}, {cfg['embedder']}, {cfg['arm']} arm (chronomem only)\n"
        )
        rows = []
        for v in d["variants"]:
            r = v["tables"][table]["result"]
            rows.append(
                [v["variant"], *[f(r[m]) for m in ("R@1", "R@5", "R@10", "R@12", "R@20", "MRR")]]
            )
        print(md(["variant", "R@1", "R@5", "R@10", "R@12", "R@20", "MRR"], rows))


if __name__ == "__main__":
    what = sys.argv[1:] or ["speed", "recall", "ablate"]
    if "speed" in what:
        speed()
    if "recall" in what:
        for n in ("recall-hashing.json", "recall-minilm.json", "recall.json"):
            recall(n)
    if "ablate" in what:
        ablations()
