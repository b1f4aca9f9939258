"""The order of ``ChronomemStorage.search``'s records the query's vector did not reach.

chronomem's vector leg returns the records whose cosine to the query is positive.
CrewAI's own storage (LanceDB) returns the ``limit`` nearest records whatever their
similarity, so when the vector leg is exhausted the storage fills the page with the
other current records, scored 0 (their cosine, at most 0, clamped to CrewAI's
[0, 1]). Among these equal scores the record written most recently comes first: the
version that is current because it replaced another is the present, and an item
overwritten by a change ("I'm a farmer now.") outranks records left as they were.

The fill reads what the page still needs and no more (issue #32): pages of the
current records newest version first (``Memory.newest_facts``: valid from, then
recorded at, descending; ties by record id), the order and the cut in SQL, so the
rows read follow the search's ``limit``, not the number of records stored."""

from __future__ import annotations

from collections.abc import Callable, Collection

from chronomem import Fact

Page = Callable[[int, int], list[Fact]]  # (limit, offset) -> current records, newest first


def unreached(
    page: Page, reached: Collection[str], need: int, accept: Callable[[Fact], bool]
) -> list[Fact]:
    """The first ``need`` current record facts, newest version first, that are not
    in ``reached`` (record ids) and that ``accept`` keeps. Without a filter that
    rejects one, one page: ``need`` plus the reached records (each may be among the
    newest and is skipped). A filter's rejects are made up by further pages, each
    at least twice the last, until the page fills or the records run out. A record
    current in two scopes (an enclosing scope's version too) is taken once, its
    newest version."""
    out: list[Fact] = []
    seen: set[str] = set()
    pending = set(reached)  # reached records not met yet: they may still be skipped
    offset, size = 0, 0
    while len(out) < need:
        size = max(need - len(out) + len(pending), 2 * size)
        rows = page(size, offset)
        offset += len(rows)
        for f in rows:
            if f.subject in seen:
                continue
            seen.add(f.subject)
            if f.subject in reached:
                pending.discard(f.subject)
                continue
            if accept(f):
                out.append(f)
                if len(out) == need:
                    break
        if len(rows) < size:  # the records ran out
            break
    return out
