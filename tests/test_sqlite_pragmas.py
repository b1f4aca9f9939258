"""A SQLite file store's connections open with a page cache that holds a batch
(``CACHE_KIB``) and a WAL autocheckpoint at ``WAL_AUTOCHECKPOINT`` pages, a backstop
behind the store's own checkpoint thread (``tests/test_sqlite_checkpoint.py``; issue
#32: a batch of 1,000 facts dirtied more pages than SQLite's default 2 MB cache and
checkpointed at every commit). Speed is measured in ``benchmarks/peers.py``; these
tests pin the settings and that what a batch commits is read back, from the WAL and
after a checkpoint, by the same store and by a new one."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from chronomem import Memory
from chronomem.backends import sqlite as sqlite_backend


def _pragma(m: Memory, name: str) -> int:
    with m.backend.engine.connect() as conn:
        return int(conn.exec_driver_sql(f"PRAGMA {name}").scalar_one())


def test_a_file_store_opens_with_the_batch_cache_and_checkpoint(tmp_path: Path) -> None:
    m = Memory(str(tmp_path / "s.db"))
    try:
        assert _pragma(m, "cache_size") == -sqlite_backend.CACHE_KIB
        assert _pragma(m, "wal_autocheckpoint") == sqlite_backend.WAL_AUTOCHECKPOINT
        assert _pragma(m, "synchronous") == 1  # NORMAL, as before
        with m.backend.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
    finally:
        m.close()


def test_a_read_only_store_gets_the_cache_and_no_checkpoint_setting(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    Memory(path).close()
    m = Memory(f"sqlite:///{path}?mode=ro")
    try:
        assert _pragma(m, "cache_size") == -sqlite_backend.CACHE_KIB
        assert _pragma(m, "wal_autocheckpoint") == 1000  # SQLite's default, untouched
    finally:
        m.close()


def test_an_in_memory_store_keeps_sqlite_defaults() -> None:
    m = Memory(None)
    try:
        assert _pragma(m, "cache_size") == -2000
    finally:
        m.close()


def test_batches_past_the_old_cache_read_back_before_and_after_a_checkpoint(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "s.db")
    m = Memory(path)
    written: set[str] = set()
    try:
        for b in range(3):
            ops = [
                m.assertion(f"subject {b}-{i}", "likes", f"thing{i} of batch{b}")
                for i in range(1500)
            ]
            written |= set(m.apply(ops).fact_ids)
        assert len(written) == 4500
        wal = path + "-wal"
        assert os.path.getsize(wal) > 0  # committed pages wait in the WAL
        # another connection (a new process would do the same) reads the WAL too
        raw = sqlite3.connect(path)
        try:
            assert raw.execute("SELECT count(*) FROM cm_versions").fetchone()[0] == 4500
            assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            raw.close()
        assert len(m.facts(predicate="likes", limit=10_000)) == 4500
    finally:
        m.close()
    m = Memory(path)
    try:
        with m.backend.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        got = m.facts(predicate="likes", limit=10_000)
        assert {f.id for f in got} == written
        hits = m.search("thing7 batch2", k=3)
        assert hits[0].fact is not None and hits[0].fact.object == "thing7 of batch2"
        assert m.check().ok  # the FTS5 indexes agree with the text
    finally:
        m.close()
