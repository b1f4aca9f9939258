"""Benchmark: rule extraction time per turn, and the labelled-set figures.

Run: ``.venv/bin/python -m tests.extraction.bench_rules [--repeat N]``

Not a test (speed is measured, never asserted). Prints the median over
``--repeat`` passes of the mean time per turn over every labelled turn and
every trap sentence, then precision / recall on the development and held-out
parts and the number of trap sentences that yielded a belief about the user (an assertion or a held end)."""

from __future__ import annotations

import argparse
import os
import statistics
import time

from chronomem.extraction import RuleExtractor, Turn

from . import labelled
from .conftest import REF


def per_turn_seconds(texts: list[str], repeat: int) -> tuple[float, float]:
    """Median wall-clock and CPU (this process only) seconds per turn: on a
    shared machine the CPU figure is the one other processes do not inflate."""
    ex = RuleExtractor()
    turns = [Turn(t, occurred_at=REF) for t in texts]
    ex.extract(turns)  # warm up (patterns compile lazily in re's cache)
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        ex.extract(turns)
        wall.append((time.perf_counter() - w) / len(turns))
        cpu.append((time.process_time() - c) / len(turns))
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rows = labelled.rows("dev") + labelled.rows("heldout")
    texts = [r["text"] for r in rows] + labelled.traps()
    wall, cpu = per_turn_seconds(texts, args.repeat)
    print(f"rule extraction: {cpu * 1e3:.3f} ms CPU, {wall * 1e3:.3f} ms wall per turn "
          f"(median of {args.repeat} passes over {len(texts)} turns; "
          f"load average {os.getloadavg()[0]:.1f})")  # fmt: skip
    for split in ("dev", "heldout"):
        part = labelled.rows(split)
        s = labelled.score(part, REF)
        print(f"{split}: turns={len(part)} facts={s.tp + s.fn} precision={s.precision:.3f} "
              f"recall={s.recall:.3f} (tp={s.tp} fp={s.fp} fn={s.fn})")  # fmt: skip
    ex = RuleExtractor()
    noisy = [x for x in labelled.traps() if labelled.beliefs(ex, x, REF)]
    print(
        f"traps: {len(noisy)} of {len(labelled.traps())} yielded a belief about the user (an assertion or a held end)"
    )


if __name__ == "__main__":
    main()
