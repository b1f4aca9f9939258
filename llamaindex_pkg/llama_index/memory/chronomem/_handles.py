"""The chronomem ``Memory`` behind a LlamaIndex object, kept as fields and reopened.

LlamaIndex serialises components by their fields (``BaseComponent.to_dict``;
a workflow ``Context.to_dict`` does this for the memory in its store) and
rebuilds them with ``cls(**fields)``. So every class here keeps the store's
URL and scope as plain fields and the open ``Memory`` as a private attribute.

Reopening prefers a store this process already has open under that URL (so a
restored object shares the original's connection pool, clock and embedder);
otherwise it opens ``Memory(url, scope=...)``. An in-memory SQLite store has
no URL another object could reopen: restoring one outside its process is a
clear ``InvalidInput``."""

from __future__ import annotations

import threading
import uuid
import weakref
from typing import Any

from chronomem import InvalidInput, InvalidType, Memory
from chronomem.scope import Scope

_IN_MEMORY = (
    "sqlite://",
    "sqlite:///:memory:",
    "sqlite+pysqlite://",
    "sqlite+pysqlite:///:memory:",
)

_lock = threading.Lock()
_open: dict[str, weakref.WeakSet[Memory]] = {}
_keys: weakref.WeakValueDictionary[str, Memory] = weakref.WeakValueDictionary()


def is_in_memory(url: str | None) -> bool:
    return url is None or url in _IN_MEMORY or url.endswith(":memory:")


def remember_handle(memory: Memory) -> str | None:
    """Record an open store so that objects restored from fields can find it.
    Returns the in-process key of an in-memory store (``None`` for a URL that
    names a database): two in-memory stores share the URL ``sqlite://``, so only
    the key tells them apart, and only in this process."""
    with _lock:
        if is_in_memory(memory.url):
            for key, handle in _keys.items():
                if handle is memory:
                    return key
            key = uuid.uuid4().hex
            _keys[key] = memory
            return key
        _open.setdefault(memory.url, weakref.WeakSet()).add(memory)
        return None


def _is_open(memory: Memory) -> bool:
    try:
        memory.backend  # noqa: B018 - raises StoreClosed once the store is closed
    except Exception:
        return False
    return True


def scope_fields(memory: Memory) -> dict[str, Any]:
    """The fields that name ``memory``'s store and scope (and record the handle)."""
    if not isinstance(memory, Memory):
        raise InvalidType(f"memory must be a chronomem Memory, not {type(memory).__name__}")
    s = memory.scope
    return {
        "url": memory.url,
        "store_key": remember_handle(memory),
        "tenant": s.tenant,
        "user": s.user,
        "agent": s.agent,
        "session": s.session,
    }


def open_scope(
    url: str | None,
    tenant: str,
    user: str | None,
    agent: str | None,
    session: str | None,
    *,
    store_key: str | None = None,
    embedder: Any = None,
) -> Memory:
    """The ``Memory`` for these fields: an open handle of this process when there
    is one for the URL (narrowed to the scope), else a newly opened store."""
    want = Scope(tenant, user, agent, session)
    with _lock:
        if is_in_memory(url):
            keyed = _keys.get(store_key) if store_key else None
            live = [keyed] if keyed is not None and _is_open(keyed) else []
        else:
            live = [m for m in _open.get(url or "", ()) if _is_open(m)]
    if live:
        handle = live[0]
        if handle.scope == want:
            return handle
        # an exact scope through the public API: switching tenant starts from an empty scope
        other = (
            handle.scope.tenant
            if handle.scope.tenant != tenant
            else ("x" if tenant != "x" else "y")
        )
        return handle.scoped(tenant=other).scoped(
            tenant=tenant, user=user, agent=agent, session=session
        )
    if is_in_memory(url) and store_key is None:
        raise InvalidInput(
            "no chronomem store given: pass memory=chronomem.Memory(...) (e.g. "
            "Memory('memory.db')), or url= a SQLite file or PostgreSQL URL"
        )
    if is_in_memory(url):
        raise InvalidInput(
            "this object was serialised from an in-memory chronomem store that is not open "
            "in this process (closed, or another process); build it from a SQLite file or PostgreSQL URL to restore it elsewhere"
        )
    assert url is not None
    if "***" in url:
        raise InvalidInput(
            "the serialised URL has its password hidden; open the store in this process first "
            "(ChronomemMemory.from_defaults(url=...)) so the object can be restored from it"
        )
    memory = Memory(url, scope=want, embedder=embedder)
    remember_handle(memory)
    return memory
