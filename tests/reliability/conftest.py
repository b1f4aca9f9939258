"""Fixtures for the reliability tests: durable stores (a SQLite FILE, or a fresh
PostgreSQL schema), and subprocess workers that can be killed."""

from __future__ import annotations

import multiprocessing
import multiprocessing.process
import os
import signal
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from . import _worker

SLOW = os.environ.get("CHRONOMEM_SLOW") == "1"


_CTX = multiprocessing.get_context("forkserver")
_CTX.set_forkserver_preload(
    ["numpy", "sqlalchemy", "psycopg", "chronomem", "tests.reliability._worker"]
)


@dataclass
class Worker:
    """A worker process, its ready pipe, and (for the kill loop) when to kill it."""

    proc: multiprocessing.process.BaseProcess
    ready: Connection
    kill_at: float | None = None
    early: bool = False

    @property
    def pid(self) -> int:
        assert self.proc.pid is not None
        return self.proc.pid

    def kill9(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        self.proc.join(10)
        assert self.proc.exitcode == -signal.SIGKILL, self.proc.exitcode


def spawn(mode: str, url: str, seed: int, out: Path, count: int = -1) -> Worker:
    """Start a worker process (see ``_worker``); it signals ``ready`` on its pipe."""
    parent, child = _CTX.Pipe(duplex=False)
    proc = _CTX.Process(
        target=_worker.run, args=(mode, url, seed, str(out), count, child), daemon=True
    )
    proc.start()
    child.close()
    return Worker(proc, parent)


def wait_ready(w: Worker, timeout: float = 60.0) -> None:
    if not w.ready.poll(timeout):
        w.proc.kill()
        raise AssertionError(f"worker never became ready (exit code {w.proc.exitcode})")
    assert w.ready.recv() == "ready"


def worker_errors(out_dir: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(out_dir.glob("*.err")))
