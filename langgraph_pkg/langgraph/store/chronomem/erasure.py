"""Physical erasure of an item: every version of every fact it ever had."""

from __future__ import annotations

from chronomem import Memory, NotFound

COUNTS = ("versions", "episodes", "vectors", "sources")


def erase_subject(memory: Memory, subject: str) -> dict[str, int]:
    """Erase every fact about ``subject`` in the memory's scope, whatever its state
    (counts of what was deleted; all zero when there was nothing)."""
    try:
        counts = memory.erase_subject(subject, exact=True)
    except NotFound:
        counts = {}
    return {**dict.fromkeys(COUNTS, 0), **counts}
