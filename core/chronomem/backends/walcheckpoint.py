"""SQLite: the WAL checkpoint of a file store, run off the write path (issue #32).

A checkpoint copies the WAL's committed pages into the database file and syncs both;
after a batch of 1,000 facts (about 1,250 pages of WAL) it took about 40 ms, and
SQLite's own (``wal_autocheckpoint``) runs it inside the ``COMMIT`` that crosses the
limit, so every fourth or fifth batch waited for it. Here the store's writers ask
for one after they commit, once the WAL holds ``pages`` pages not yet copied, and a
thread of the store's runs it on a connection of its own while the caller goes on.

Nothing about durability changes: a commit is in the WAL before it returns, either
way (``synchronous=NORMAL``), and a checkpoint only moves committed pages, as SQLite's
own did. The checkpoint is ``PASSIVE``, as SQLite's own: it takes no lock a writer
or a reader waits for, and copies what no reader still needs (a later one copies the
rest). The writers' test reads two counters of the WAL index (the ``-shm`` file,
which SQLite maps into every connection's memory: https://sqlite.org/walformat.html):
the frames in the WAL (``mxFrame``) and those already copied (``nBackfill``). When
they cannot be read (no ``-shm`` file: an exclusive locking mode; a format this code
does not know), no checkpoint is asked for, and the connections' ``wal_autocheckpoint``,
kept as a backstop at a larger limit (``sqlite.WAL_AUTOCHECKPOINT``), does the job,
as it does for a WAL the thread cannot keep up with."""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
import threading
from urllib.parse import quote

log = logging.getLogger("chronomem.sqlite")

IDLE_S = 30.0  # a thread that was not asked for a checkpoint this long ends
# The WAL index header (walformat.html §2.1): its version, and where the two counters are.
SHM_VERSION = 3007000
SHM_HEAD = 100
MX_FRAME = 16  # frames in the WAL (the header's first copy)
N_BACKFILL = 96  # frames already copied into the database (the checkpoint info)


def _u32(head: bytes, at: int) -> int:
    return int.from_bytes(head[at : at + 4], sys.byteorder)  # native order, as mapped


class Checkpointer:
    """Checkpoints the WAL of the database at ``path`` on a thread, when asked
    (``after_commit``) and the WAL holds ``pages`` frames not yet copied. The thread
    starts on a request (again in a forked child, which has no thread), ends after
    ``IDLE_S`` without one (a store never closed leaves none behind for long), and
    at ``stop``."""

    def __init__(self, path: str, pages: int):
        self.path = path
        self.shm = path + "-shm"
        self.pages = pages
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._running = threading.Lock()  # held while this process checkpoints (``quiet``)
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._stopped = False
        self.runs = 0  # checkpoints run (tests)

    def pending(self) -> int | None:
        """Frames in the WAL not yet copied into the database, from the WAL index;
        None when it cannot be read or is not the format this code knows."""
        try:
            fd = os.open(self.shm, os.O_RDONLY)
        except OSError:
            return None
        try:
            head = os.pread(fd, SHM_HEAD, 0)
        except OSError:
            return None
        finally:
            os.close(fd)
        if len(head) < SHM_HEAD or _u32(head, 0) != SHM_VERSION:
            return None
        frames, copied = _u32(head, MX_FRAME), _u32(head, N_BACKFILL)
        return frames - copied if frames >= copied else None

    def due(self) -> bool:
        """Whether ``pages`` frames or more wait in the WAL (one small read)."""
        waiting = self.pending()
        return waiting is not None and waiting >= self.pages

    def after_commit(self) -> None:
        """Called by a writer after its commit: wake the thread (starting it if
        need be) if a checkpoint is due."""
        if self._stopped or not self.due():
            return
        if self._pid and self._pid != os.getpid():
            # a forked child: its parent's thread is not here, and may have held the locks
            self._lock = threading.Lock()
            self._running = threading.Lock()
        with self._lock:
            if self._stopped:
                return
            if self._thread is None or self._pid != os.getpid():
                self._wake = threading.Event()
                self._thread = threading.Thread(
                    target=self._run, name="chronomem-wal-checkpoint", daemon=True
                )
                self._pid = os.getpid()
                self._thread.start()
            self._wake.set()

    def _run(self) -> None:
        wake = self._wake
        while True:
            woken = wake.wait(IDLE_S)
            with self._lock:
                if self._stopped or not (woken or wake.is_set()):
                    if self._thread is threading.current_thread():
                        self._thread = None
                    return
                wake.clear()
            try:
                self.checkpoint()
            except Exception:  # a failed checkpoint loses nothing: the WAL keeps it
                log.debug("background WAL checkpoint failed", exc_info=True)

    def checkpoint(self) -> tuple[int, int, int]:
        """One ``PASSIVE`` checkpoint on a connection of its own: SQLite's (busy,
        frames in the WAL, frames copied)."""
        # mode=rw: a file removed meanwhile is an error, never a new empty database
        uri = f"file:{quote(os.path.abspath(self.path))}?mode=rw"
        with self._running:
            conn = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
            try:
                conn.execute("PRAGMA synchronous=NORMAL")  # as the store's connections sync
                busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            finally:
                conn.close()
            self.runs += 1
        return int(busy), int(frames), int(copied)

    def quiet(self) -> threading.Lock:
        """A lock to hold around a checkpoint of one's own (the erase's ``TRUNCATE``):
        SQLite refuses a second checkpoint while one runs, without waiting, so this
        process's thread must not be running one then; holding it waits for one that
        is."""
        if self._pid and self._pid != os.getpid():
            self._running = threading.Lock()
        return self._running

    def running(self) -> bool:
        """Whether this process has a checkpoint thread (tests)."""
        thread = self._thread
        return thread is not None and self._pid == os.getpid() and thread.is_alive()

    def stop(self) -> None:
        """End the thread, after the checkpoint it is running if any; later
        requests are ignored."""
        with self._lock:
            self._stopped = True
            thread = self._thread if self._pid == os.getpid() else None
            self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
