"""SQLite: the WAL checkpoint of a file store, run off the write path (issue #32).

A checkpoint copies the WAL's committed pages into the database file and syncs both;
after a batch of 1,000 facts (about 1,250 pages of WAL) it took about 40 ms, and
SQLite's own (``wal_autocheckpoint``) runs it inside the ``COMMIT`` that crosses the
limit, so every fourth or fifth batch waited for it. Here the store's writers ask
for one after they commit, once the WAL file holds ``pages`` pages, and a
thread of the store's runs it on a connection of its own while the caller goes on.

Nothing about durability changes: a commit is in the WAL before it returns, either
way (``synchronous=NORMAL``), and a checkpoint only moves committed pages, as SQLite's
own did. The checkpoint is ``PASSIVE`` first, which takes no lock a writer or a
reader waits for and copies what no reader still needs, then ``TRUNCATE`` without
waiting: it takes the write lock only to copy what was committed meanwhile and to
empty the WAL file, or answers busy at once (a later checkpoint does it). Emptying
it is what lets the WAL file's size tell the writers, with one ``stat``, how much
waits. The size is all they look at: reading the WAL index (``-shm``) would mean
opening and closing that file, and a ``close`` drops every POSIX lock this process
holds on it, SQLite's included (https://sqlite.org/howtocorrupt.html §2.2). The
connections' ``wal_autocheckpoint`` stays as a backstop at a larger limit
(``sqlite.WAL_AUTOCHECKPOINT``), for a WAL the thread cannot keep up with."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from urllib.parse import quote

log = logging.getLogger("chronomem.sqlite")

IDLE_S = 30.0  # a thread that was not asked for a checkpoint this long ends
FRAME_HEADER = 24  # bytes before each page in the WAL (walformat.html)


class Checkpointer:
    """Checkpoints the WAL of the database at ``path`` on a thread, when asked
    (``after_commit``) and the WAL file holds ``pages`` pages or more. The thread
    starts on a request (again in a forked child, which has no thread), ends after
    ``IDLE_S`` without one (a store never closed leaves none behind for long), and
    at ``stop``."""

    def __init__(self, path: str, pages: int, page_size: int = 4096):
        self.path = path
        self.wal = path + "-wal"
        self.pages = pages
        self.limit = pages * (page_size + FRAME_HEADER)
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._running = threading.Lock()  # held while this process checkpoints (``quiet``)
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._stopped = False
        self.runs = 0  # checkpoints run (tests)

    def due(self) -> bool:
        """Whether the WAL file holds ``pages`` pages or more (one ``stat``: no file
        is opened, so no lock of SQLite's is dropped)."""
        try:
            return os.stat(self.wal).st_size >= self.limit
        except OSError:  # no WAL file (yet)
            return False

    def after_commit(self) -> None:
        """Called by a writer after its commit: wake the thread (starting it if
        need be) if a checkpoint is due."""
        if self._stopped or not self.due():
            return
        self._own_locks()
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

    def _own_locks(self) -> None:
        """In a forked child, new locks and a new wake event: its parent's thread is
        not here, and may have held the locks, or been asked for a checkpoint, at
        the fork."""
        if self._pid and self._pid != os.getpid():
            self._lock = threading.Lock()
            self._running = threading.Lock()
            self._wake = threading.Event()

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
        """A ``PASSIVE`` checkpoint, then a ``TRUNCATE`` one that waits for nothing,
        on a connection of its own: the second's (busy, frames in the WAL, frames
        copied)."""
        # mode=rw: a file removed meanwhile is an error, never a new empty database
        uri = f"file:{quote(os.path.abspath(self.path))}?mode=rw"
        with self._running:
            conn = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
            try:
                conn.execute("PRAGMA synchronous=NORMAL")  # as the store's connections sync
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the copy: blocks no one
                # then empty the file under the write lock (little is left to copy)
                busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                conn.close()
            self.runs += 1
        return int(busy), int(frames), int(copied)

    def quiet(self) -> threading.Lock:
        """A lock to hold around a checkpoint of one's own (the erase's ``TRUNCATE``):
        SQLite refuses a second checkpoint while one runs, without waiting, so this
        process's thread must not be running one then; holding it waits for one that
        is."""
        self._own_locks()
        return self._running

    def settle(self, timeout: float = 10.0) -> bool:
        """Wait until no checkpoint is due, asked for or running (a benchmark keeps
        the thread's I/O out of what it times next); False if ``timeout`` passed
        first (a reader holding the WAL keeps a checkpoint from emptying it)."""
        self._own_locks()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._wake.is_set() or self._running.locked():
                pass  # one is asked for or running: wait for it
            elif not self.due():
                with self.quiet():
                    return True
            else:  # due, and neither asked for nor running (the last one left it busy)
                self.after_commit()
            time.sleep(0.001)
        return False

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
