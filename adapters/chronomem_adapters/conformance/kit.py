"""What every adapter package's harness shares: the base scope a harness writes
in, the sibling scopes the isolation tests compare it with, the map from a
fact's state to the kit's ``Status``, and ``KitExtractor`` (the deterministic
extractor for adapters whose writes go through extraction).

A harness writes in ``BASE_SCOPE``; ``sibling_scope(kind, name)`` is the same
database seen from another user, tenant or session."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime

from chronomem import Memory, State
from chronomem.extraction import Extracted, ExtractionResult, Turn
from chronomem.timeutil import instant

from .harness import Entry, HarnessBase, Status

BASE_SCOPE = {"user": "kit-user", "session": "kit-session"}

# A fact's state as the kit's status (a scheduled value is not yet history)
STATUS: dict[str, Status] = {
    State.LIVE: Status.CURRENT,
    State.ENDED: Status.PAST,
    State.RETRACTED: Status.RETRACTED,
    State.SCHEDULED: Status.SCHEDULED,
}

KIT = "chronomem-kit"  # the op key of a kit message (``kit_message``)


def status_of(state: State | str) -> Status:
    """The kit's status of a fact in ``state`` (a ``State`` or its value)."""
    return STATUS[State(state)]


# The states a history shows, and an audit view (a retraction is not history)
HISTORY_STATES = (State.LIVE.value, State.ENDED.value)
AUDIT_STATES = (*HISTORY_STATES, State.RETRACTED.value)

# One version as a harness reads it: value, state, valid from, valid to (a
# datetime or its ISO text, as the framework's output carries it)
Version = tuple[str, "State | str", "datetime | str | None", "datetime | str | None"]


def entries(versions: Iterable[Version]) -> list[Entry]:
    """The kit's entries of ``versions`` in valid-time order (ties by value);
    scheduled versions are not history yet and are left out."""
    out = [
        Entry(value, status_of(state), instant(start, "valid_from"), instant(end, "valid_to"))
        for value, state, start, end in versions
        if State(state) is not State.SCHEDULED
    ]
    return sorted(out, key=lambda e: (e.valid_from or datetime.min, e.value))


class VersionsHarness(HarnessBase):
    """A harness whose ``history`` and ``audit`` read one list of versions: it
    implements ``versions`` (the versions of an attribute in the given states)."""

    def versions(self, entity: str, attribute: str, states: Sequence[str]) -> Iterable[Version]:
        raise self._no("read history")

    def history(self, entity: str, attribute: str) -> list[Entry]:
        return entries(self.versions(entity, attribute, HISTORY_STATES))

    def audit(self, entity: str, attribute: str) -> list[Entry]:
        return entries(self.versions(entity, attribute, AUDIT_STATES))


def open_scope(
    root: Memory, scope: dict[str, str] | None, attributes: Iterable[str]
) -> tuple[dict[str, str], Memory]:
    """A harness's scope (``BASE_SCOPE`` unless given) and its store, with the kit's
    ``attributes`` registered as single-valued predicates."""
    chosen = dict(scope or BASE_SCOPE)
    store = root.scoped(**chosen)
    for attribute in attributes:
        store.register_predicate(attribute, cardinality="one")
    return chosen, store


def sibling_scope(kind: str, name: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The scope of a sibling of ``base`` (default ``BASE_SCOPE``): another user,
    another tenant (same user and session), or another session of the user."""
    own = dict(base or BASE_SCOPE)
    if kind == "user":
        return {"user": name}
    if kind == "tenant":
        return {"tenant": name, **own}
    if kind == "session":
        return {"user": own["user"], "session": name}
    raise ValueError(f"unknown sibling kind {kind!r}")


def kit_message(op: str, entity: str, attribute: str, value: str | None = None) -> str:
    """A message ``KitExtractor`` reads: ``op`` is ``"set"`` or ``"end"``."""
    return json.dumps({KIT: op, "entity": entity, "attribute": attribute, "value": value})


class KitExtractor:
    """Reads one fact from a turn that is a JSON object ``{"entity", "attribute",
    "value"}`` (``"end": true``, or a ``kit_message`` with op ``"end"``, ends the
    value), and the facts ``expected`` for a given text; any other turn is
    skipped. Predicates it meets are single-valued."""

    name = "kit"
    version = "1"

    def __init__(self) -> None:
        self.expected: dict[str, tuple[str, str, str]] = {}

    def extract(self, turns: Sequence[Turn]) -> list[ExtractionResult]:
        out = []
        for t in turns:
            if t.text in self.expected:
                e, a, v = self.expected[t.text]
                out.append(ExtractionResult(t, [Extracted(e, a, v)]))
                continue
            try:
                data = json.loads(t.text)
            except ValueError:
                data = None
            if not isinstance(data, dict) or "entity" not in data:
                out.append(ExtractionResult(t, [], skipped=True))
                continue
            if data.get("end") or data.get(KIT) == "end":
                fact = Extracted(data["entity"], data["attribute"], None, op="end")
            else:
                fact = Extracted(data["entity"], data["attribute"], data["value"])
            out.append(ExtractionResult(t, [fact]))
        return out

    def cardinality_of(self, predicate: str, example: Extracted | None = None) -> str | None:
        return "one"
