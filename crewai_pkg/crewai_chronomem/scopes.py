"""What CrewAI asks about the scope tree (``get_scope_info``, ``list_scopes``,
``list_categories``), answered from a list of records, for both the storage
backend and the memory's records view."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from crewai.memory.types import MemoryRecord, ScopeInfo

from . import paths

Select = Callable[[str | None], Sequence[MemoryRecord]]


def child_scopes(select: Select, parent: str = "/") -> list[str]:
    """The immediate child scopes of ``parent`` that hold records."""
    recs = select(paths.normalize(parent))
    return sorted({c for r in recs if (c := paths.child_of(r.scope, parent)) is not None})


def scope_info(select: Select, scope: str) -> ScopeInfo:
    """CrewAI's ``ScopeInfo`` of ``scope`` (its records and those below it)."""
    path = paths.normalize(scope)
    recs = select(path)
    return ScopeInfo(
        path=path,
        record_count=len(recs),
        categories=sorted({c for r in recs for c in r.categories}),
        oldest_record=min((r.created_at for r in recs), default=None),
        newest_record=max((r.created_at for r in recs), default=None),
        child_scopes=child_scopes(select, path),
    )


def category_counts(records: Sequence[MemoryRecord]) -> dict[str, int]:
    """How many of ``records`` carry each category."""
    counts: dict[str, int] = {}
    for r in records:
        for c in r.categories:
            counts[c] = counts.get(c, 0) + 1
    return counts
