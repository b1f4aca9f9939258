"""The values chronomem hands back: facts (versions), episodes, receipts."""

from __future__ import annotations

import enum
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import InvalidTimeSelector
from .scope import DEFAULT_TENANT, LEVELS, Scope

if TYPE_CHECKING:
    import numpy as np


class State(str, enum.Enum):
    """Where a version stands relative to a read's valid and belief instants."""

    LIVE = "live"
    ENDED = "ended"
    SCHEDULED = "scheduled"
    RETRACTED = "retracted"


ALL_STATES = frozenset(State)


class CloseReason(str, enum.Enum):
    """Why a version was closed (``Fact.closed_reason``, the ``closed_reason``
    column): the values are the stored strings, so a member compares equal to
    the string a row holds."""

    SUPERSEDED = "superseded"  # a newer version of the slot replaced it
    ENDED = "ended"  # its valid time was ended (``end``)
    RETRACTED = "retracted"  # it was withdrawn as never true (``retract``)

    def __str__(self) -> str:
        return self.value


_LIVE_ONLY = frozenset({State.LIVE})  # ``parse_states(None)`` (immutable: one for all)


def parse_states(states: Iterable[State | str] | State | str | None) -> frozenset[State]:
    """``None`` -> {live}; a name or a collection of names -> the states; else an error."""
    if states is None:
        return _LIVE_ONLY
    try:
        items = [states] if isinstance(states, str | State) else list(states)
    except TypeError:
        raise InvalidTimeSelector(
            f"states must be a state name or a collection of them, not {states!r}"
        ) from None
    out: set[State] = set()
    for s in items:
        try:
            out.add(State(s))
        except ValueError:
            raise InvalidTimeSelector(
                f"unknown state {s!r}; use any of {sorted(x.value for x in State)}"
            ) from None
    if not out:
        raise InvalidTimeSelector("states must not be empty")
    return frozenset(out)


@dataclass(frozen=True)
class Fact:
    """One version of a logical fact, as seen by a read."""

    id: str  # the logical fact id (shared by every version of the fact)
    version_id: str
    subject: str
    predicate: str
    object: str
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    superseded_at: datetime | None
    state: State
    closed_reason: str | None = None
    superseded_by: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    source_episode_ids: tuple[str, ...] = ()
    extractor: str | None = None
    scope: dict[str, str] = field(default_factory=dict)
    subject_key: str = ""  # the folded identity keys (as given, for exact writes)
    object_key: str = ""

    def __str__(self) -> str:
        until = f" until {self.valid_to.date().isoformat()}" if self.valid_to else ""
        return (
            f"{self.subject} {self.predicate} {self.object} "
            f"(since {self.valid_from.date().isoformat()}{until}; {self.state.value})"
        )


class FactRow(NamedTuple):
    """A live fact as a point read needs it (``Memory.rows``): its identity, its
    slot, its object and its validity, without the sources, metadata, scope or
    transaction times a ``Fact`` carries (its state is live)."""

    id: str  # the logical fact id, as ``Fact.id``
    version_id: str
    subject: str  # as written
    subject_key: str  # the folded identity key (as given, for exact writes)
    predicate: str
    object: str
    valid_from: datetime
    valid_to: datetime | None  # None: open-ended

    @classmethod
    def of(cls, fact: Fact) -> FactRow:
        r"""The row of a live ``Fact`` (the read log's path reads ``Fact``\ s)."""
        return cls(
            fact.id,
            fact.version_id,
            fact.subject,
            fact.subject_key,
            fact.predicate,
            fact.object,
            fact.valid_from,
            fact.valid_to,
        )


# A hit of a lean search within a prefix (``Memory.search_scored``): the version
# as a ``FactRow``, its state at the search's instant, its fused score, and its
# cosine to the query (None: no stored vector, or the vector leg did not run).
ScoredRow = tuple[FactRow, State, float, float | None]


@dataclass(frozen=True)
class Held:
    """What a search within a prefix held (``ScoredHits.held``): its query, the
    query's vector (``embed_query_checked``'s) and the rows it read by version id,
    each with its stored vector (``_vec``: the ``cm_vectors`` bytes, None when it
    has none), as of the search's snapshot. ``Memory.similarities(held=)`` compares
    those versions with no read or embedding."""

    query: str
    vector: np.ndarray
    rows: Mapping[str, Mapping[str, Any]]


class ScoredHits(list[ScoredRow]):
    """``Memory.search_scored``'s hits (a list of ``ScoredRow``), with what the
    search held (``held``: a ``Held``, None when its vector leg did not
    embed the query): passed to ``Memory.similarities`` with the same query, the
    versions the search read are compared without a read or an embedding."""

    held: Held | None = None


@dataclass(frozen=True)
class Episode:
    """A raw record: a chat message, a task output, a document."""

    id: str
    text: str
    role: str | None
    occurred_at: datetime
    recorded_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    scope: dict[str, str] = field(default_factory=dict)


@dataclass
class Receipt:
    """What a write did. Ids are version ids unless the name says otherwise."""

    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    retracted: list[str] = field(default_factory=list)
    superseded_count: int = 0
    fact_ids: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    recorded_at: datetime | None = None

    @property
    def changed(self) -> bool:
        return bool(self.added or self.ended or self.retracted)

    def merge(self, other: Receipt) -> None:
        self.added += other.added
        self.unchanged += other.unchanged
        self.ended += other.ended
        self.retracted += other.retracted
        self.superseded_count += other.superseded_count
        self.fact_ids += [f for f in other.fact_ids if f not in self.fact_ids]
        self.superseded += other.superseded
        self.recorded_at = other.recorded_at or self.recorded_at


@dataclass
class ExtractionReceipt(Receipt):
    """What ``Memory.add`` did: the write's ``Receipt`` plus how extraction went.

    ``episode_ids``: the episodes the messages were stored as, in order;
    ``extracted``: facts written; ``skipped``: turns the salience gate passed
    over (small talk); ``unextracted``: turns kept but with nothing the extractor
    could read; ``failed``: turns whose extraction failed (nothing from them was
    written), with ``errors`` mapping their index in the messages to the reason."""

    episode_ids: list[str] = field(default_factory=list)
    extracted: int = 0
    skipped: int = 0
    unextracted: int = 0
    failed: int = 0
    errors: dict[int, str] = field(default_factory=dict)

    @classmethod
    def of(cls, base: Receipt) -> ExtractionReceipt:
        """The write's receipt, with no extraction counted yet."""
        return cls(**{f.name: getattr(base, f.name) for f in fields(Receipt)})

    def merge(self, other: Receipt) -> None:
        super().merge(other)
        if isinstance(other, ExtractionReceipt):
            offset = len(self.episode_ids)
            self.episode_ids += other.episode_ids
            self.extracted += other.extracted
            self.skipped += other.skipped
            self.unextracted += other.unextracted
            self.failed += other.failed
            self.errors.update({offset + i: e for i, e in other.errors.items()})


@dataclass(frozen=True)
class Provenance:
    """``Memory.why(fact_id)``: where a fact came from and what it replaced."""

    fact_id: str
    versions: list[Fact]
    episodes: list[Episode]
    extractors: list[str]
    superseded: list[Fact]  # versions of other facts this fact's writes closed


@dataclass(frozen=True)
class Stats:
    facts: int
    live_facts: int
    versions: int
    current_versions: int
    episodes: int
    predicates: int
    last_recorded_at: datetime | None


@dataclass(frozen=True)
class ScopeCounts:
    """What one scope holds itself (``Memory.scopes()``): facts ever written there,
    those live now, and its episodes."""

    scope: Scope
    facts: int
    live_facts: int
    episodes: int

    def options(self) -> str:
        """The CLI options that select this scope (``--tenant`` only when not default)."""
        pairs = [] if self.scope.tenant == DEFAULT_TENANT else [("tenant", self.scope.tenant)]
        pairs += [(lv, getattr(self.scope, lv)) for lv in LEVELS if getattr(self.scope, lv)]
        return " ".join(f"--{name} {shlex.quote(value)}" for name, value in pairs)
