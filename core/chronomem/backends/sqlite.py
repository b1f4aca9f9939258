"""SQLite: the embedded, zero-configuration default.

WAL for concurrent readers, ``BEGIN IMMEDIATE`` for writers (so a write never
fails half-way on a lock upgrade), a busy timeout, and ``secure_delete`` so an
erased fact's bytes are overwritten in the file."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Connection, create_engine, event
from sqlalchemy.pool import StaticPool

from .base import Backend

BUSY_TIMEOUT_S = 30.0
CHECKPOINT_WAIT_MS = 200
log = logging.getLogger("chronomem.sqlite")


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, url_or_path: str | None):
        if url_or_path is None:
            url, memory = "sqlite://", True
        elif url_or_path.startswith("sqlite"):
            url = url_or_path
            memory = url in ("sqlite://", "sqlite:///:memory:")
        else:
            url, memory = f"sqlite:///{url_or_path}", False
        kwargs: dict[str, Any] = {
            "connect_args": {"check_same_thread": False, "timeout": BUSY_TIMEOUT_S}
        }
        if memory:
            kwargs["poolclass"] = StaticPool
        else:
            kwargs["pool_size"] = 8
            kwargs["max_overflow"] = 16
        engine = create_engine(url, **kwargs)
        self.memory = memory

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cur = dbapi_conn.cursor()
            if not memory:
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            cur.execute("PRAGMA secure_delete=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
            conn.exec_driver_sql(f"BEGIN {mode}")

        super().__init__(engine, serialize=memory)

    def _connect_write(self) -> Connection:
        return self.engine.connect().execution_options(sqlite_begin="IMMEDIATE")

    def after_erase(self, conn: Connection) -> None:
        # Merge the FTS segments so deleted tokens leave the index's shadow tables.
        for fts in ("cm_versions_fts", "cm_episodes_fts"):
            conn.exec_driver_sql(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")

    def maintenance_after_erase(self) -> None:
        if self.memory:
            return
        with self._guarded(), self.engine.connect() as conn:
            # Move the WAL's copies of erased pages into the (zeroed) file, then truncate
            # it. A reader holding an old snapshot would make TRUNCATE wait out the busy
            # timeout while blocking writers, so wait briefly; if busy, the next
            # checkpoint (SQLite runs them as the WAL grows) finishes the job.
            conn.exec_driver_sql(f"PRAGMA busy_timeout={CHECKPOINT_WAIT_MS}")
            try:
                busy, _, _ = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").one()
            finally:
                conn.exec_driver_sql(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            if busy:
                log.warning(
                    "erase: a reader held the WAL; erased bytes stay in %s-wal until the next checkpoint",
                    self.engine.url.database,
                )
