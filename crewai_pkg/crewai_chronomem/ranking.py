"""The order of ``ChronomemStorage.search``'s records the query's vector did not reach.

chronomem's vector leg returns the records whose cosine to the query is positive.
CrewAI's own storage (LanceDB) returns the ``limit`` nearest records whatever their
similarity, so when the vector leg is exhausted the storage fills the page with the
other current records, scored 0 (their cosine, at most 0, clamped to CrewAI's
[0, 1]). Among these equal scores the record written most recently comes first: the
version that is current because it replaced another is the present, and an item
overwritten by a change ("I'm a farmer now.") outranks records left as they were."""

from __future__ import annotations

from collections.abc import Container, Iterable

from chronomem import Fact


def unreached(current: Iterable[Fact], reached: Container[str]) -> list[Fact]:
    """The current record facts not in ``reached`` (record ids), newest version first
    (valid from, then recorded at; ties by record id)."""
    rest = [f for f in current if f.subject not in reached]
    rest.sort(key=lambda f: f.subject)
    rest.sort(key=lambda f: (f.valid_from, f.recorded_at), reverse=True)
    return rest
