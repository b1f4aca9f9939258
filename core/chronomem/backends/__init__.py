"""Storage backends: one schema, one module per database; ``open_backend`` picks
one by URL, ``of`` a backend class by a connection's dialect. Every dialect
difference of core lives here (``tests/test_dialect_boundary.py``)."""

from __future__ import annotations

from sqlalchemy import Connection

from ..errors import InvalidInput
from .base import Backend
from .postgres import PostgresBackend
from .sqlite import SqliteBackend

__all__ = ["Backend", "of", "open_backend"]

_BY_DIALECT: dict[str, type[Backend]] = {b.name: b for b in (SqliteBackend, PostgresBackend)}


def of(conn: Connection) -> type[Backend]:
    """The backend class whose SQL fits ``conn``'s database."""
    return _BY_DIALECT[conn.dialect.name]


def open_backend(url: str | None) -> Backend:
    if isinstance(url, str) and not url.strip():
        raise InvalidInput(
            "the database url is empty: pass a file path, a sqlite:// or postgresql:// URL, "
            "or None (or ':memory:') for an in-memory store"
        )
    if url is None or url == ":memory:":
        return SqliteBackend(None)
    if not isinstance(url, str):
        raise InvalidInput(f"url must be a str, not {type(url).__name__}")
    if url.startswith(("postgresql", "postgres://")):
        return PostgresBackend(url)
    if url.startswith("sqlite"):
        return SqliteBackend(url)
    if "://" in url:
        raise InvalidInput(
            f"unsupported database URL {url.split('://')[0]}://; use sqlite or postgresql"
        )
    return SqliteBackend(url)  # a plain file path
