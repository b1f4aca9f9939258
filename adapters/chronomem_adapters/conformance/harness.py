"""What an adapter package provides to the conformance kit: a small ``Harness``.

The kit speaks of *entities* with *attributes* holding string *values* ("ada's
city is Paris"). A harness maps those onto its framework's own API — for a
LangGraph store, an entity is a namespace and an attribute a field of an item;
for a chat-history adapter, ``append``/``transcript`` are messages. Every
method must go through the framework's API (what a user of that framework
would call), never around it to chronomem, so that the kit tests the adapter
and not the core.

Subclass ``HarnessBase`` and override what your framework can express. A
method the framework's API has no way to express is left as is: it raises
``NotExpressible`` and the kit skips that request with the reason given. A
method the framework can express but the adapter does not keep (an undeclared
semantic) must reach the adapter, which must raise ``UnsupportedSemantics``."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from .clock import KitClock

SIBLING_KINDS = ("user", "tenant", "session")


class NotExpressible(Exception):
    """The framework's own API has no way to make this request at all."""


class Status(str, enum.Enum):
    """How a value is labelled in a history or audit read."""

    CURRENT = "current"
    PAST = "past"
    RETRACTED = "retracted"
    SCHEDULED = "scheduled"


@dataclass(frozen=True)
class Entry:
    """One value of an attribute in a history or audit read."""

    value: str
    status: Status
    valid_from: datetime | None = None
    valid_to: datetime | None = None


@dataclass(frozen=True)
class Timed:
    """A value as a read returned it, with the validity interval it carried."""

    value: str
    valid_from: datetime | None
    valid_to: datetime | None


@runtime_checkable
class Harness(Protocol):
    """The operations the kit drives an adapter through."""

    @property
    def adapter(self) -> type:
        """The adapter class under test (it carries ``SEMANTICS`` and ``AS_OF``)."""

    @property
    def clock(self) -> KitClock:
        """The clock the adapter's store was built with."""

    @property
    def siblings(self) -> frozenset[str]:
        """Which of ``SIBLING_KINDS`` ``sibling`` can make."""

    def write(self, entity: str, attribute: str, value: str) -> None:
        """Set the attribute (a single-valued slot) to ``value`` now."""

    def end(self, entity: str, attribute: str) -> None:
        """The world changed: the attribute no longer has a value (not a deletion)."""

    def delete(self, entity: str, attribute: str) -> None:
        """The framework's delete of the record holding the attribute."""

    def read(self, entity: str, attribute: str) -> list[str]:
        """The attribute's values as a default (current) read returns them."""

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        """The attribute's values in the world at ``valid_at`` as believed at ``known_at``."""

    def history(self, entity: str, attribute: str) -> list[Entry]:
        """Past and current values, oldest first."""

    def audit(self, entity: str, attribute: str) -> list[Entry]:
        """Every value ever believed, retracted ones included, oldest first."""

    def erase(self, entity: str, attribute: str) -> None:
        """Irreversibly delete the record holding the attribute."""

    def write_with_source(self, entity: str, attribute: str, value: str, source: str) -> None:
        """Write the value as learnt from the source text ``source``."""

    def provenance(self, entity: str, attribute: str) -> list[str]:
        """The source texts a read of the attribute carries."""

    def read_timed(self, entity: str, attribute: str) -> list[Timed]:
        """A current read, with the validity interval each result carries."""

    def append(self, messages: Sequence[tuple[str, str]]) -> None:
        """Append (role, text) messages to the conversation."""

    def transcript(self) -> list[tuple[str, str]]:
        """The conversation's (role, text) messages."""

    def find(self, prefix: str) -> set[str]:
        """Entities the framework's own prefix/namespace read returns for ``prefix``."""

    def sibling(self, kind: str, name: str) -> Harness:
        """The same store seen as another user / tenant / session called ``name``."""


class HarnessBase:
    """A harness whose every request is ``NotExpressible`` until overridden."""

    adapter: type
    clock: KitClock
    siblings: frozenset[str] = frozenset()

    def _no(self, what: str) -> NotExpressible:
        return NotExpressible(f"{self.adapter.__name__}'s framework API cannot {what}")

    def write(self, entity: str, attribute: str, value: str) -> None:
        raise self._no("write an attribute")

    def end(self, entity: str, attribute: str) -> None:
        raise self._no("end a value without deleting it")

    def delete(self, entity: str, attribute: str) -> None:
        raise self._no("delete")

    def read(self, entity: str, attribute: str) -> list[str]:
        raise self._no("read an attribute")

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        raise self._no("read as of a past instant")

    def history(self, entity: str, attribute: str) -> list[Entry]:
        raise self._no("read history")

    def audit(self, entity: str, attribute: str) -> list[Entry]:
        raise self._no("read an audit view")

    def erase(self, entity: str, attribute: str) -> None:
        raise self._no("erase")

    def write_with_source(self, entity: str, attribute: str, value: str, source: str) -> None:
        raise self._no("write with a source")

    def provenance(self, entity: str, attribute: str) -> list[str]:
        raise self._no("return sources with results")

    def read_timed(self, entity: str, attribute: str) -> list[Timed]:
        raise self._no("return validity intervals with results")

    def append(self, messages: Sequence[tuple[str, str]]) -> None:
        raise self._no("append messages")

    def transcript(self) -> list[tuple[str, str]]:
        raise self._no("return a transcript")

    def find(self, prefix: str) -> set[str]:
        raise self._no("read by prefix")

    def sibling(self, kind: str, name: str) -> Harness:
        raise self._no(f"make a sibling {kind}")
