"""Reads as values: what ``Memory.facts``, ``search`` and ``recall`` were asked.

Each public read builds one frozen query value holding its arguments as the
caller passed them (validation happens when it runs, as before), the engine
runs it (``chronomem.reading.run``), and the served-read log stores it
(``readlog.args.encode``: its fields by name, instants as microseconds, states
by name) and rebuilds it to replay (``query_of``). The field names are the
methods' parameter names, which is the stored format of every logged read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from .model import State

States = Iterable[State | str] | State | str | None


@dataclass(frozen=True)
class FactQuery:
    """``Memory.facts``: the facts of a scope at a valid and a belief instant."""

    op: ClassVar[str] = "facts"

    subject: str | None = None
    predicate: str | None = None
    obj: str | None = None
    valid_at: datetime | None = None
    known_at: datetime | None = None
    as_of: datetime | None = None
    states: States = None
    limit: int | None = None
    subject_prefix: str | None = None
    exact: bool = False
    subjects: Sequence[str] | None = None


@dataclass(frozen=True)
class SearchQuery:
    """``Memory.search``: a hybrid search at a valid and a belief instant."""

    op: ClassVar[str] = "search"

    query: str
    k: int = 10
    valid_at: datetime | None = None
    known_at: datetime | None = None
    as_of: datetime | None = None
    states: States = None
    include_episodes: bool = False
    min_score: float = 0.0
    subject: str | None = None
    subject_prefix: str | None = None
    predicates: Sequence[str] | None = None
    exact: bool = False
    asked_at: datetime | None = None  # relative times in the query count from it


@dataclass(frozen=True)
class RecallQuery:
    """``Memory.recall``: a prompt-ready block of what a search surfaces."""

    op: ClassVar[str] = "recall"

    query: str
    k: int = 8
    include_history: bool = False
    include_episodes: bool = False
    valid_at: datetime | None = None
    known_at: datetime | None = None
    as_of: datetime | None = None
    asked_at: datetime | None = None


Query = FactQuery | SearchQuery | RecallQuery

QUERIES: dict[str, type[FactQuery] | type[SearchQuery] | type[RecallQuery]] = {
    q.op: q for q in (FactQuery, SearchQuery, RecallQuery)
}


def query_of(op: str, args: Mapping[str, Any]) -> Query:
    """The query value a logged read's ``op`` and decoded arguments describe."""
    return QUERIES[op](**args)
