"""Internal rows: predicates an adapter keeps for its own bookkeeping.

A predicate that starts with ``@`` is reserved (LangGraph's item markers
``@item`` and search index entries ``@index:…``). Such facts are stored and
searched like any other, so the adapter that wrote them can use them, but they
are never shown to a person or a prompt: ``Memory.recall`` and the CLI's
``search`` show, for a hit on one, the other facts of its subject (a LangGraph
item's fields), and the CLI's ``facts``/``history`` hide them (``--all`` shows
them). Field names an adapter stores as predicates must therefore not start
with ``@`` (the LangGraph store escapes such names)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .model import Fact

__all__ = ["RESERVED_PREFIX", "for_people", "is_internal", "without_internal"]

H = TypeVar("H", bound=Any)
RESERVED_PREFIX = "@"


def is_internal(predicate: str) -> bool:
    """Whether ``predicate`` names an adapter's internal row."""
    return predicate.startswith(RESERVED_PREFIX)


def for_people(hits: Sequence[H], facts_of: Callable[[str], list[Fact]]) -> list[H]:
    """The hits a person or a prompt may see, in order: a hit on an internal row
    stands for the other facts of its subject (a LangGraph index entry for the
    item's fields, ``facts_of(subject)`` reads them at the search's instant), each
    shown once; every other hit is kept as it is."""
    out: list[H] = []
    seen: set[str] = set()
    for hit in hits:
        fact = getattr(hit, "fact", None)
        if fact is None or not is_internal(fact.predicate):
            if fact is None or fact.version_id not in seen:
                out.append(hit)
                if fact is not None:
                    seen.add(fact.version_id)
            continue
        for other in facts_of(fact.subject):
            if not is_internal(other.predicate) and other.version_id not in seen:
                seen.add(other.version_id)
                out.append(replace(hit, fact=other))
    return out


def without_internal(hits: Sequence[H]) -> list[H]:
    """The hits an adapter hands its framework: internal rows left out."""
    return [
        h for h in hits if (f := getattr(h, "fact", None)) is None or not is_internal(f.predicate)
    ]
