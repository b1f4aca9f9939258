"""Which instant a framework call reads at: ``valid_at``, ``known_at`` or ``as_of``.

Every adapter takes the same three time keywords, at construction and per
call, from Python objects or from serialised configs (ISO-8601 strings). This
module validates them once, the same way for every adapter:

- an instant is a timezone-aware ``datetime`` or an ISO-8601 string with an
  offset (``"2026-01-01T00:00:00Z"``; a date alone is its UTC midnight), read by
  core's one parser (``chronomem.timeutil.instant``); a naive one is ``NaiveDatetime``;
- ``as_of`` means both clocks at once, so it never combines with the others
  (``InvalidTimeSelector``);
- a per-call selection that names any instant replaces the construction-time
  one as a whole (mixing a view's ``as_of`` with a call's ``valid_at`` would
  read at two different instants; see docs/design.md §4)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chronomem import InvalidTimeSelector, InvalidType
from chronomem.timeutil import instant

NAMES = ("valid_at", "known_at", "as_of")


def parse_instant(value: object, name: str) -> datetime | None:
    """One time argument: ``None``, an aware ``datetime`` or an ISO-8601 string
    (core's parser); text that is not ISO 8601 is ``InvalidType``, like any other
    value that is not an instant."""
    return instant(value, name, error=InvalidType)


@dataclass(frozen=True)
class TimeSelection:
    """A validated read instant; all ``None`` means "now, as currently believed"."""

    valid_at: datetime | None = None
    known_at: datetime | None = None
    as_of: datetime | None = None

    @property
    def is_present(self) -> bool:
        return self.valid_at is None and self.known_at is None and self.as_of is None

    def kwargs(self) -> dict[str, datetime]:
        """Keyword arguments for ``Memory.facts``/``search``/``recall``."""
        return {n: v for n in NAMES if (v := getattr(self, n)) is not None}

    def override(self, other: TimeSelection) -> TimeSelection:
        """``other`` where it names any instant, else ``self``."""
        return self if other.is_present else other

    def to_json(self) -> dict[str, str | None]:
        return {n: (v.isoformat() if (v := getattr(self, n)) else None) for n in NAMES}


def select_time(
    valid_at: object = None, known_at: object = None, as_of: object = None
) -> TimeSelection:
    """Validate the three keywords into a ``TimeSelection``."""
    sel = TimeSelection(
        parse_instant(valid_at, "valid_at"),
        parse_instant(known_at, "known_at"),
        parse_instant(as_of, "as_of"),
    )
    if sel.as_of is not None and (sel.valid_at is not None or sel.known_at is not None):
        raise InvalidTimeSelector("as_of means both valid_at and known_at; do not combine them")
    return sel


def pop_time(kwargs: dict[str, Any]) -> TimeSelection:
    """Take the time keywords out of ``kwargs`` (in place) as a selection."""
    return select_time(*(kwargs.pop(n, None) for n in NAMES))
