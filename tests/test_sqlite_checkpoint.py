"""A SQLite file store checkpoints its WAL on a thread of its own once the WAL has
grown past ``CHECKPOINT_PAGES`` (``backends/walcheckpoint.py``, issue #32), not in
the commit that crossed the limit. These tests pin who has the thread, that it runs
and ends, and that what the batches committed reads back the same, in this store
and in a new one, before and after the thread's checkpoints, with writes going on
meanwhile. Speed is measured in ``benchmarks/peers.py``, not here."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from chronomem import Memory
from chronomem.backends import sqlite as sqlite_backend
from chronomem.backends import walcheckpoint
from chronomem.backends.walcheckpoint import Checkpointer


def _batch(m: Memory, b: int, n: int = 400) -> list[str]:
    ops = [m.assertion(f"subject {b}-{i}", "likes", f"thing{i} of batch{b}") for i in range(n)]
    return list(m.apply(ops).fact_ids)


def _wait(pred: object, timeout: float = 30.0) -> bool:
    """Poll ``pred`` until it holds (a bound on a test's wait, not a timing claim)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_only_a_writable_file_store_has_a_checkpointer(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    m = Memory(path)
    try:
        cp = m.backend.checkpointer  # type: ignore[attr-defined]
        assert isinstance(cp, Checkpointer) and cp.path == path
        assert not cp.running()  # no thread before a checkpoint is due
    finally:
        m.close()
    ro = Memory(f"sqlite:///{path}?mode=ro")
    mem = Memory(None)
    try:
        assert ro.backend.checkpointer is None  # type: ignore[attr-defined]
        assert mem.backend.checkpointer is None  # type: ignore[attr-defined]
    finally:
        ro.close()
        mem.close()


def test_the_connections_keep_a_larger_autocheckpoint_as_a_backstop() -> None:
    assert sqlite_backend.WAL_AUTOCHECKPOINT > sqlite_backend.CHECKPOINT_PAGES


def test_batches_past_the_limit_are_checkpointed_by_the_thread_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_backend, "CHECKPOINT_PAGES", 50)  # a few batches' worth
    path = str(tmp_path / "s.db")
    m = Memory(path)
    written: list[str] = []
    try:
        cp = m.backend.checkpointer  # type: ignore[attr-defined]
        assert cp is not None and cp.limit == 50 * (4096 + walcheckpoint.FRAME_HEADER)
        for b in range(6):
            written += _batch(m, b)
        assert _wait(lambda: cp.runs >= 1)
        assert cp.running()
        # the thread's checkpoint emptied the WAL file (or a later one will)
        assert _wait(lambda: not cp.due())
        raw = sqlite3.connect(path)
        try:
            assert raw.execute("SELECT count(*) FROM cm_versions").fetchone()[0] == 2400
            assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            raw.close()
        assert {f.id for f in m.facts(predicate="likes", limit=10_000)} == set(written)
    finally:
        m.close()
    assert not cp.running()  # close ends the thread
    m = Memory(path)
    try:
        assert {f.id for f in m.facts(predicate="likes", limit=10_000)} == set(written)
        hits = m.search("thing7 batch5", k=3)
        assert hits[0].fact is not None and hits[0].fact.object == "thing7 of batch5"
        assert m.check().ok  # the FTS5 indexes agree with the text
    finally:
        m.close()


def test_checkpoints_running_beside_writers_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    m = Memory(path)
    cp = m.backend.checkpointer  # type: ignore[attr-defined]
    stop = threading.Event()
    results: list[tuple[int, int, int]] = []

    def hammer() -> None:  # checkpoints as fast as they come, against the writes
        while not stop.is_set():
            results.append(cp.checkpoint())

    t = threading.Thread(target=hammer)
    t.start()
    written: list[str] = []
    try:
        for b in range(8):
            written += _batch(m, b, 200)
    finally:
        stop.set()
        t.join()
    try:
        assert results  # some ran while the batches were written
        assert {f.id for f in m.facts(predicate="likes", limit=10_000)} == set(written)
        assert m.check().ok
    finally:
        m.close()
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT count(*) FROM cm_versions").fetchone()[0] == 1600
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        raw.close()


def test_an_idle_thread_ends_and_a_later_request_starts_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walcheckpoint, "IDLE_S", 0.05)
    path = str(tmp_path / "s.db")
    Memory(path).close()
    cp = Checkpointer(path, pages=0)  # always due once the WAL file exists
    m = Memory(path)
    try:
        _batch(m, 0, 10)
        cp.after_commit()
        assert _wait(lambda: cp.runs >= 1)
        assert _wait(lambda: not cp.running())  # idle: the thread ended
        _batch(m, 1, 10)
        cp.after_commit()
        assert _wait(lambda: cp.runs >= 2)
    finally:
        cp.stop()
        m.close()
    assert not cp.running()
    runs = cp.runs
    cp.after_commit()  # after stop: ignored
    assert cp.runs == runs and not cp.running()


def test_due_is_the_wal_file_size_and_a_checkpoint_empties_it(tmp_path: Path) -> None:
    path = str(tmp_path / "p.db")
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute("CREATE TABLE t (x BLOB)")
        cp = Checkpointer(path, pages=10)
        assert cp.limit == 10 * (4096 + walcheckpoint.FRAME_HEADER)
        for _ in range(3):
            conn.executemany("INSERT INTO t VALUES (?)", [(os.urandom(900),) for _ in range(100)])
        assert os.path.getsize(path + "-wal") >= cp.limit and cp.due()
        busy, frames, copied = cp.checkpoint()
        assert busy == 0 and frames == copied == 0  # all copied, then the file emptied
        assert os.path.getsize(path + "-wal") == 0 and not cp.due()
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 300
    finally:
        conn.close()


def test_no_wal_file_is_not_due(tmp_path: Path) -> None:
    cp = Checkpointer(str(tmp_path / "q.db"), pages=0)
    assert not cp.due()


def test_a_checkpoint_never_creates_a_missing_database(tmp_path: Path) -> None:
    path = str(tmp_path / "gone.db")
    cp = Checkpointer(path, pages=0)
    with pytest.raises(sqlite3.OperationalError):
        cp.checkpoint()
    assert not os.path.exists(path)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_thread(tmp_path: Path) -> None:
    path = str(tmp_path / "f.db")
    Memory(path).close()
    m = Memory(path)
    cp = Checkpointer(path, pages=0)
    try:
        _batch(m, 0, 10)
        cp.after_commit()
        assert _wait(lambda: cp.runs >= 1)
        pid = os.fork()
        if pid == 0:  # the child: a thread of its own checkpoints
            ok = False
            try:
                runs = cp.runs
                cp.after_commit()
                ok = cp.running() and _wait(lambda: cp.runs > runs, 10.0)
                cp.stop()
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
    finally:
        cp.stop()
        m.close()


def test_an_erase_truncates_the_wal_beside_the_checkpoint_thread(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The erase's own checkpoint waits for one the store's thread is running
    (SQLite would refuse it at once, leaving erased bytes in the WAL)."""
    path = str(tmp_path / "e.db")
    m = Memory(path)
    cp = m.backend.checkpointer  # type: ignore[attr-defined]
    ids = _batch(m, 0, 200)
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            cp.checkpoint()

    t = threading.Thread(target=hammer)
    t.start()
    try:
        with caplog.at_level("WARNING", logger="chronomem.sqlite"):
            for fid in ids[:20]:
                m.erase(fid)
    finally:
        stop.set()
        t.join()
    try:
        assert not [r for r in caplog.records if "erased bytes stay" in r.getMessage()]
        assert len(m.facts(predicate="likes", limit=1000)) == 180
    finally:
        m.close()


def test_settle_returns_once_the_checkpoint_it_waited_for_has_emptied_the_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``settle`` (what the benchmarks call between turns) waits for a due
    checkpoint to run, and then nothing is due, asked for or running; it answers
    False, without waiting longer than asked, when a checkpoint cannot empty the
    WAL (a reader holds its snapshot)."""
    monkeypatch.setattr(sqlite_backend, "CHECKPOINT_PAGES", 50)
    path = str(tmp_path / "s.db")
    m = Memory(path)
    try:
        cp = m.backend.checkpointer  # type: ignore[attr-defined]
        for b in range(3):
            _batch(m, b)
        assert cp.settle()
        assert not cp.due() and not cp._wake.is_set()
        assert cp._running.acquire(blocking=False)  # no checkpoint is running
        cp._running.release()
        reader = sqlite3.connect(path, isolation_level=None)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM cm_versions").fetchone()  # holds a snapshot
            for b in range(3, 6):
                _batch(m, b)
            started = time.monotonic()
            assert cp.due() and not cp.settle(timeout=0.3)
            assert time.monotonic() - started < 10
        finally:
            reader.close()
        assert cp.settle()
        assert not cp.due()
    finally:
        m.close()
