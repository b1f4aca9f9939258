"""``Memory(storage="chronomem:<url>")``: CrewAI's storage factory hook.

``register(embedder=..., dim=...)`` installs a factory with
``crewai.memory.storage.factory.set_memory_storage_factory`` that answers specs
starting with ``chronomem:`` (the rest is the chronomem URL: a SQLite path,
``postgresql+psycopg://…``, or empty for in-memory) and defers every other spec
to CrewAI's built-in selection. One ``ChronomemStorage`` is kept per spec, so
every ``Memory`` (and every crew restored from ``model_dump``) naming the same
spec shares the same open store. ``close()`` (CrewAI's ``Memory.close``) drains it
and leaves it usable (``handle.py``); a store closed for good (its chronomem
``Memory`` closed directly) is replaced by a fresh one on the next lookup."""

from __future__ import annotations

import threading
from typing import Any

from crewai.memory.storage.factory import set_memory_storage_factory

from .storage import ChronomemStorage

PREFIX = "chronomem:"

_lock = threading.Lock()
_open: dict[str, ChronomemStorage] = {}


def spec_for(url: str | None) -> str:
    """The ``storage=`` string naming a chronomem store."""
    return PREFIX + (url or "")


def register(*, embedder: object = None, dim: int | None = None, **options: Any) -> None:
    """Make ``chronomem:<url>`` storage specs resolve to ``ChronomemStorage``."""

    def factory(spec: str) -> ChronomemStorage | None:
        if not isinstance(spec, str) or not spec.startswith(PREFIX):
            return None
        with _lock:
            found = _open.get(spec)
            if found is None or not found.is_open():  # a store closed for good is never handed out
                url = spec[len(PREFIX) :] or None
                found = ChronomemStorage(url, embedder=embedder, dim=dim, **options)
                _open[spec] = found
            return found

    set_memory_storage_factory(factory)


def unregister() -> None:
    """Restore CrewAI's built-in storage selection and close the stores opened here."""
    set_memory_storage_factory(None)
    with _lock:
        for storage in _open.values():
            storage.close()
        _open.clear()
