"""Issue #31, items 7 and 8 (PostgreSQL): a read-log batch written while another
process erases an item it served, in both orders, made deterministic by pausing
one transaction at a known point and waiting (by polling ``pg_stat_activity``,
not by sleeping) until the other is blocked on the read-log lock or done; and the
planner statistics of the read log and of tables an erasure empties."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import create_engine, text

import chronomem.readlog
from chronomem import Memory
from chronomem.readlog import ErasedRead, batch


def _blocked(url: str, app: str) -> bool:
    """Whether the session named ``app`` waits on a lock right now."""
    engine = create_engine(url.split("?")[0])
    try:
        with engine.connect() as conn:
            return bool(
                conn.execute(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = :a "
                        "AND wait_event_type = 'Lock'"
                    ),
                    {"a": app},
                ).scalar()
            )
    finally:
        engine.dispose()


def _until(cond: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _named(url: str, app: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}application_name={app}"


def _check_erased(reader: Memory) -> None:
    logged = reader.reads()
    assert len(logged) == 1
    (read,) = logged
    assert read.erased and all(i.erased for i in read.items), read
    assert read.args.get("subject") is None  # the erased text left the log
    with pytest.raises(ErasedRead):
        reader.replay(read.id)


@pytest.mark.parametrize("first", ["batch", "erase"])
def test_a_batch_written_while_another_process_erases_is_marked(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, first: str
) -> None:
    """``first`` is inside its transaction (the batch: its rows written; the erase:
    rows deleted and the log marked), not committed, when the other starts: the
    other must wait for it, and the entry ends up marked either way."""
    app = f"cm-second-{uuid.uuid4().hex[:8]}"
    second = _named(pg_url, app)
    eraser = Memory(pg_url if first == "erase" else second)
    reader = Memory(second if first == "erase" else pg_url, read_log=True)
    try:
        fid = eraser.remember("alice", "lives_in", "Paris").fact_ids[0]
        assert reader.facts(subject="alice")  # pending in the reader's batch
        inside, go = threading.Event(), threading.Event()
        owner, name = (batch, "_write") if first == "batch" else (chronomem.readlog, "forget")
        real = getattr(owner, name)

        def paused(*args: Any, **kw: Any) -> None:
            real(*args, **kw)
            inside.set()
            assert go.wait(30)

        monkeypatch.setattr(owner, name, paused)
        flush = threading.Thread(target=batch.flush, args=(reader,))
        erase = threading.Thread(target=eraser.erase, args=(fid,))
        one, two = (flush, erase) if first == "batch" else (erase, flush)
        one.start()
        assert inside.wait(30)
        two.start()
        _until(lambda: not two.is_alive() or _blocked(pg_url, app), "the second never waited")
        go.set()
        one.join(30)
        two.join(30)
        monkeypatch.undo()
        _check_erased(reader)
    finally:
        eraser.close()
        reader.close()


def _stats(url: str, table: str, needle: str) -> list[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT attname, concat_ws(' ', most_common_vals::text, "
                    "histogram_bounds::text, most_common_elems::text) FROM pg_stats "
                    "WHERE schemaname = current_schema() AND tablename = :t"
                ),
                {"t": table},
            ).all()
    finally:
        engine.dispose()
    return [a for a, vals in rows if needle in (vals or "")]


def test_erase_rewrites_the_read_logs_statistics(pg_url: str) -> None:
    mk = f"zq{uuid.uuid4().hex[:10]}"
    with Memory(pg_url, read_log=True) as m:
        m.remember("ann", "likes", "tea")
        fid = m.remember(mk, "likes", "tea").fact_ids[0]
        for _ in range(30):
            m.facts(subject=mk)
            m.facts(subject="ann")
        readlog_flush = chronomem.readlog.flush
        readlog_flush(m)
        engine = create_engine(pg_url)
        with engine.connect() as conn:
            conn.execute(text("ANALYZE cm_reads"))
            conn.commit()
        engine.dispose()
        assert _stats(pg_url, "cm_reads", mk), "the marker should be in the statistics before"
        m.erase(fid)
    assert _stats(pg_url, "cm_reads", mk) == []


def test_purge_leaves_no_statistics_of_what_it_emptied(pg_url: str) -> None:
    """ANALYZE of an empty table keeps its old statistics: the purge replaces them."""
    mk = f"zq{uuid.uuid4().hex[:10]}"
    with Memory(pg_url) as m:
        for i in range(40):
            m.add_episode(f"{mk} said hello")
            m.remember(mk, "likes", f"tea {i % 3}")
        engine = create_engine(pg_url)
        with engine.connect() as conn:
            conn.execute(text("ANALYZE cm_episodes"))
            conn.execute(text("ANALYZE cm_versions"))
            conn.commit()
        engine.dispose()
        assert _stats(pg_url, "cm_episodes", mk) and _stats(pg_url, "cm_versions", mk)
        m.purge()
    assert _stats(pg_url, "cm_episodes", mk) == []
    assert _stats(pg_url, "cm_versions", mk) == []
