"""SQLite: the WAL checkpoint of a file store, run off the write path (issue #32).

A checkpoint copies the WAL's committed pages into the database file and syncs both;
after a batch of 1,000 facts (about 1,250 pages of WAL) it took about 40 ms, and
SQLite's own (``wal_autocheckpoint``) runs it inside the ``COMMIT`` that crosses the
limit, so every fourth or fifth batch waited for it. Here the store's writers ask
for one after they commit, once the WAL has grown past ``pages`` pages, and a
thread of the store's runs it on a connection of its own, while the caller goes on.

Nothing about durability changes: a commit is in the WAL before it returns, either
way (``synchronous=NORMAL``), and a checkpoint only moves committed pages, as SQLite's
own did. The checkpoint is ``TRUNCATE`` with no busy wait: it copies what it can
without blocking anyone, then empties the WAL file only if no writer or reader is
using it at that instant (otherwise a later checkpoint does). Emptying it is what
lets the WAL file's size say how much is waiting, the writers' cheap test. The
connections keep ``wal_autocheckpoint`` as a backstop at a larger limit
(``sqlite.WAL_AUTOCHECKPOINT``), for a WAL the thread cannot keep up with."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from urllib.parse import quote

log = logging.getLogger("chronomem.sqlite")

FRAME_HEADER = 24  # bytes before each page in the WAL (walformat.html)


IDLE_S = 30.0  # a thread that was not asked for a checkpoint this long ends


class Checkpointer:
    """Checkpoints the WAL of the database at ``path`` on a thread, when asked
    (``after_commit``) and the WAL holds ``pages`` pages of ``page_size`` bytes or
    more. The thread starts on a request (again in a forked child, which has no
    thread), ends after ``IDLE_S`` without one (a store never closed leaves none
    behind for long), and at ``stop``."""

    def __init__(self, path: str, pages: int, page_size: int = 4096):
        self.path = path
        self.wal = path + "-wal"
        self.limit = pages * (page_size + FRAME_HEADER)
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._stopped = False
        self.runs = 0  # checkpoints run (tests)

    def due(self) -> bool:
        """Whether the WAL file holds ``pages`` pages or more (one ``stat``)."""
        try:
            return os.stat(self.wal).st_size >= self.limit
        except OSError:  # no WAL file (yet)
            return False

    def after_commit(self) -> None:
        """Called by a writer after its commit: wake the thread (starting it if
        need be) if a checkpoint is due."""
        if self._stopped or not self.due():
            return
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
        """A ``PASSIVE`` checkpoint (the copy, taking no lock a writer or reader
        waits on), then a ``TRUNCATE`` one that waits for nothing: it takes the
        write lock for what was committed meanwhile and to empty the file, or
        answers busy at once. Returns the second's (busy, frames in the WAL,
        frames copied)."""
        # mode=rw: a file removed meanwhile is an error, never a new empty database
        uri = f"file:{quote(os.path.abspath(self.path))}?mode=rw"
        conn = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
        try:
            conn.execute("PRAGMA synchronous=NORMAL")  # as the store's connections sync
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.close()
        self.runs += 1
        return int(busy), int(frames), int(copied)

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
