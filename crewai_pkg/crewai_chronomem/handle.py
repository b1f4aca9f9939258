"""The chronomem store a CrewAI object works on, kept out of copies.

CrewAI deep-copies memories and the objects holding them (``Memory.__deepcopy__``
copies private attributes, agents and crews copy themselves per run). A
chronomem ``Memory`` holds a database engine and a search mirror: a deep copy
would be a second, diverging store. ``Handle`` is the one object both the
memory and the storage keep privately; copying it (deep or shallow) returns
the same handle, so every copy keeps working on the same store. Its lock
serialises the adapter's work on the store: CrewAI calls memories from its
save pool and from agent threads at once."""

from __future__ import annotations

import threading
from typing import Any

from chronomem import Memory, StoreClosed


class Handle:
    """A shared reference to one chronomem ``Memory`` plus the lock guarding it."""

    __slots__ = ("lock", "memory", "owned")

    def __init__(self, memory: Memory, *, owned: bool = False):
        self.memory = memory
        self.owned = owned  # opened by the adapter from a URL: closed with it
        self.lock = threading.RLock()

    def __copy__(self) -> Handle:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Handle:
        return self

    def __reduce__(self) -> Any:
        raise TypeError("a chronomem store handle cannot be pickled; reopen the store by URL")

    def close(self) -> None:
        """What CrewAI's ``close`` means for its backends: drain, and stay usable.

        An owned store writes its pending served-read log entries and returns its
        pooled connections (a later call opens new ones); an in-memory store
        keeps its one connection, which holds its data. The store is never
        closed for good here, so a ``Memory`` or storage that shares it (the
        storage factory hands one per URL) keeps working after another closes."""
        if self.owned and self.is_open():
            self.memory.drain()

    def is_open(self) -> bool:
        try:
            self.memory.backend  # noqa: B018  (raises StoreClosed once closed)
        except StoreClosed:
            return False
        return True
