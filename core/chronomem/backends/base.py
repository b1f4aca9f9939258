"""What the store needs from a database, and how a URL picks one."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, event
from sqlalchemy.engine import ExceptionContext

from ..errors import ChronomemError, InvalidInput


class Backend:
    """A database engine plus the few operations that differ per dialect."""

    name = "base"

    def __init__(self, engine: Engine, *, serialize: bool = False):
        self.engine = engine
        event.listen(engine, "handle_error", self._handle_error)
        # One shared connection (in-memory SQLite) must not be used by two threads at once.
        self._guard: threading.RLock | None = threading.RLock() if serialize else None

    @contextmanager
    def _guarded(self) -> Iterator[None]:
        if self._guard is None:
            yield
        else:
            with self._guard:
                yield

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction, serialized against other writers as the dialect allows."""
        with self._guarded(), self._connect_write() as conn, conn.begin():
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._guarded(), self.engine.connect() as conn, conn.begin():
            yield conn

    def _connect_write(self) -> Connection:
        return self.engine.connect()

    def _handle_error(self, ctx: ExceptionContext) -> BaseException | None:
        if ctx.is_pre_ping:  # the pool handles stale connections itself
            return None
        return self.translate_error(ctx.original_exception, connecting=ctx.connection is None)

    def translate_error(self, exc: BaseException, *, connecting: bool) -> ChronomemError | None:
        """The chronomem error (saying what to do) for a driver error this backend
        recognises; None keeps the driver's error."""
        return None

    def lock_slots(self, conn: Connection, tenant: str, slots: Sequence[str]) -> None:
        """Serialize writers of the same slots until the transaction ends."""

    def after_erase(self, conn: Connection) -> None:
        """Make physically deleted text unrecoverable from indexes (dialect work)."""

    def maintenance_after_erase(self) -> None:
        """Work that must run outside a transaction after an erase."""

    @property
    def for_update(self) -> bool:
        return False

    def dispose(self) -> None:
        self.engine.dispose()


def open_backend(url: str | None) -> Backend:
    if isinstance(url, str) and not url.strip():
        raise InvalidInput(
            "the database url is empty: pass a file path, a sqlite:// or postgresql:// URL, "
            "or None (or ':memory:') for an in-memory store"
        )
    if url is None or url == ":memory:":
        from .sqlite import SqliteBackend

        return SqliteBackend(None)
    if not isinstance(url, str):
        raise InvalidInput(f"url must be a str, not {type(url).__name__}")
    if url.startswith(("postgresql", "postgres://")):
        from .postgres import PostgresBackend

        return PostgresBackend(url)
    if url.startswith("sqlite"):
        from .sqlite import SqliteBackend

        return SqliteBackend(url)
    if "://" in url:
        raise InvalidInput(
            f"unsupported database URL {url.split('://')[0]}://; use sqlite or postgresql"
        )
    from .sqlite import SqliteBackend

    return SqliteBackend(url)  # a plain file path
