"""Physical erasure of an item: every version of every fact it ever had."""

from __future__ import annotations

from sqlalchemy import select

from chronomem import Memory
from chronomem.reads import scope_visible
from chronomem.schema import versions


def fact_ids(memory: Memory, subject: str) -> list[str]:
    """Every fact ever recorded for ``subject`` in the memory's scope, whatever its
    belief state (facts wholly superseded are not reachable through ``facts()``)."""
    q = (
        select(versions.c.fact_id)
        .where(scope_visible(versions, memory.scope), versions.c.subject_key == subject)
        .distinct()
    )
    with memory.backend.read() as conn:
        return sorted(conn.execute(q).scalars())


def erase_subject(memory: Memory, subject: str) -> dict[str, int]:
    total = {"versions": 0, "episodes": 0, "vectors": 0, "sources": 0}
    for fid in fact_ids(memory, subject):
        for k, v in memory.erase(fid).items():
            total[k] = total.get(k, 0) + v
    return total
