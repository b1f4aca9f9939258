"""What the served-read log hands back: reads, their items, and what changed since."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import ChronomemError
from ..model import Episode, Fact
from ..queries import Query, query_of


class ErasedRead(ChronomemError, LookupError):
    """The read served something since erased: it can no longer be replayed."""


@dataclass(frozen=True)
class ReadItem:
    """One thing a read handed out: a fact version (``kind='v'``) or an episode (``'e'``)."""

    kind: str
    id: str
    score: float | None
    state: str | None  # the version's state as served (None for an episode)
    erased: bool


@dataclass(frozen=True)
class Read:
    """One logged read."""

    id: str
    at: datetime  # its transaction-clock instant
    op: str  # facts | search | recall
    scope: dict[str, str]
    args: dict[str, Any]  # as called, with the valid instant resolved
    items: list[ReadItem]
    tag: dict[str, str]
    erased: bool  # it served something later erased; its text arguments are blanked

    @property
    def query(self) -> Query:
        """The read as a query value (``chronomem.queries``), as called."""
        return query_of(self.op, self.args)


@dataclass(frozen=True)
class ServedItem:
    """One item a read served, then and now."""

    read_id: str
    at: datetime
    kind: str
    id: str
    score: float | None
    then: Fact | Episode | None  # as served (None: erased since)
    state_then: str | None
    change: str  # unchanged | ended | corrected | retracted | erased
    now: Fact | None = None  # the fact's value believed now, when it changed (corrected)


@dataclass
class Served:
    """What the agent knew: every item served to the selected reads."""

    reads: list[Read]
    items: list[ServedItem] = field(default_factory=list)

    def changed(self) -> list[ServedItem]:
        return [i for i in self.items if i.change != "unchanged"]

    def text(self) -> str:
        lines = []
        for it in self.items:
            when = it.at.isoformat()
            if it.then is None:
                what = f"[{it.kind} {it.id}] (erased)"
            elif isinstance(it.then, Fact):
                f = it.then
                what = f"{f.subject} {f.predicate} {f.object} ({it.state_then})"
            else:
                what = f"episode {it.then.id}: {it.then.text}"
            note = it.change
            if it.now is not None and it.change == "corrected":
                note = f"corrected to {it.now.object!r}"
            lines.append(f"{when} read {it.read_id}: {what} -> {note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()
