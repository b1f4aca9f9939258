"""Internal rows: predicates an adapter keeps for its own bookkeeping.

A predicate that starts with ``@`` is reserved (LangGraph's item markers
``@item`` and search index entries ``@index:…``). Such facts are stored and
searched like any other, so the adapter that wrote them can use them, but they
are never shown to a person or a prompt: ``Memory.recall`` leaves them out,
and the CLI's ``facts``/``history``/``search`` hide them (``--all`` shows
them). Field names an adapter stores as predicates must therefore not start
with ``@`` (the LangGraph store escapes such names)."""

from __future__ import annotations

RESERVED_PREFIX = "@"


def is_internal(predicate: str) -> bool:
    """Whether ``predicate`` names an adapter's internal row."""
    return predicate.startswith(RESERVED_PREFIX)
