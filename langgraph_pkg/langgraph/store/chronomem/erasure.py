"""Physical erasure of an item: every version of every fact it ever had.

A store erases only the items of its own scope: what ``get`` reads through an
enclosing scope (a user's store reading the tenant's items) is ``ScopeError``,
as ``delete`` is, and an item of a narrower scope (a user's item, seen from a
tenant-level store, which ``get`` never returns) is not erased — reads and
writes by key agree on what a store can reach."""

from __future__ import annotations

from chronomem import Memory, NotFound, State
from chronomem.errors import ScopeError

COUNTS = ("versions", "episodes", "vectors", "sources")
_EVERY_STATE = [s.value for s in State]


def erase_subject(memory: Memory, subject: str) -> dict[str, int]:
    """Erase every fact about ``subject`` in exactly the memory's scope, whatever its
    state (counts of what was deleted; all zero when there was nothing)."""
    try:
        counts = memory.erase_subject(subject, exact=True, descendants=False)
    except NotFound:
        if memory.facts(subject=subject, exact=True, states=_EVERY_STATE, limit=1):
            raise ScopeError(
                "this item belongs to an enclosing scope's store (shared memory): "
                "erase it through the store of the scope that wrote it"
            ) from None
        counts = {}
    return {**dict.fromkeys(COUNTS, 0), **counts}
