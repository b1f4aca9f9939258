"""The vocabulary every adapter declares itself in (docs/design.md §8).

``Semantic`` names one bitemporal guarantee as seen through a framework's own
API; ``TimeKeeping`` says where an adapter takes its read instant from; and
``UnsupportedSemantics`` is what an adapter raises when a caller asks it for a
semantic it does not keep, instead of silently ignoring the request."""

from __future__ import annotations

import enum

from chronomem import ChronomemError


class Semantic(str, enum.Enum):
    """One guarantee an adapter keeps, as seen through the framework's own API."""

    CURRENT_VIEW = "current_view"
    SUPERSESSION = "supersession"
    VALID_TIME = "valid_time"
    TRANSACTION_TIME = "transaction_time"
    HISTORY = "history"
    RETRACTION = "retraction"
    ERASURE = "erasure"
    PROVENANCE = "provenance"
    TIME_IN_OUTPUT = "time_in_output"
    TRANSCRIPT = "transcript"

    @property
    def meaning(self) -> str:
        return MEANINGS[self]


MEANINGS: dict[Semantic, str] = {
    Semantic.CURRENT_VIEW: "default reads return only what is live now",
    Semantic.SUPERSESSION: "a new value for a single-valued slot ends the old one",
    Semantic.VALID_TIME: "a caller can read the world as of a past valid instant",
    Semantic.TRANSACTION_TIME: "a caller can read what was believed at a past instant, exactly",
    Semantic.HISTORY: "ended values are reachable, labelled as past",
    Semantic.RETRACTION: "a delete is recoverable in the audit view, distinct from ended",
    Semantic.ERASURE: "irreversible deletion is reachable",
    Semantic.PROVENANCE: "results carry their source episodes",
    Semantic.TIME_IN_OUTPUT: "results carry their validity interval",
    Semantic.TRANSCRIPT: "messages come back exactly, in order",
}

# The two semantics that need a read instant other than "now".
TIME_TRAVEL = frozenset({Semantic.VALID_TIME, Semantic.TRANSACTION_TIME})

# What every adapter keeps: the current view, supersession and both clocks.
BITEMPORAL = frozenset({Semantic.CURRENT_VIEW, Semantic.SUPERSESSION, *TIME_TRAVEL})
# ... and a value's history, with a retraction distinct from an ending.
VERSIONED = BITEMPORAL | {Semantic.HISTORY, Semantic.RETRACTION}


class TimeKeeping(str, enum.Enum):
    """Where an adapter takes the instant a read is made ``as_of``."""

    PER_CALL = "per_call"  # each read takes valid_at / known_at / as_of arguments
    AT_CONSTRUCTION = "at_construction"  # the adapter object is built for one instant
    VIEW = "view"  # ``adapter.as_of(...)`` returns a read-only view with the same API
    NONE = "none"  # reads are always "now"; no past instant can be asked for


class UnsupportedSemantics(ChronomemError, NotImplementedError):
    """A caller asked an adapter for a semantic it does not keep.

    Raised instead of silently answering as if the request had been honoured
    (for example a read ``as_of`` a past instant through an adapter that can only
    read the present)."""

    def __init__(self, semantic: Semantic | str, adapter: str = "", detail: str = ""):
        self.semantic = Semantic(semantic)
        self.adapter = adapter
        who = f"{adapter} does not keep" if adapter else "unsupported semantic:"
        msg = f"{who} {self.semantic.name} ({self.semantic.meaning})"
        super().__init__(f"{msg}; {detail}" if detail else msg)
