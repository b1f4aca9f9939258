"""Timestamps: aware UTC datetimes outside, integer microseconds inside.

Integer microseconds compare correctly in SQL on every backend and have no
timezone or precision surprises."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from .errors import InvalidInput, InvalidTimeSelector, InvalidType, NaiveDatetime

Clock = Callable[[], datetime]

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_US = timedelta(microseconds=1)
_MIN = datetime.min.replace(tzinfo=timezone.utc)
_MAX = datetime.max.replace(tzinfo=timezone.utc)
# The calendar a datetime can hold: years 1-9999 (UTC), to the microsecond.
MIN_US = (_MIN - EPOCH) // _US
MAX_US = (_MAX - EPOCH) // _US
# A validity at least this long ends after the calendar does, whatever its start:
# it never ends. Longer ones are cut to it (they could not fit a SQL BIGINT).
FOREVER_US = MAX_US - MIN_US + 1
# The latest transaction time a clock may give. Transaction time strictly
# increases per tenant, so a store stamped at the calendar's last microsecond
# could never write again; the last year is kept for those increments.
LAST_TX_US = (datetime(9999, 1, 1, tzinfo=timezone.utc) - EPOCH) // _US


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


def to_us(value: datetime, name: str = "timestamp") -> int:
    """Aware datetime -> integer microseconds since the Unix epoch (UTC)."""
    if value.__class__ is datetime and value.tzinfo is timezone.utc:
        return (value - EPOCH) // _US  # already UTC (what ``from_us`` gives): no conversion
    if not isinstance(value, datetime):
        raise InvalidType(f"{name} must be a datetime, not {type(value).__name__}")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise NaiveDatetime(
            f"{name} is a naive datetime; pass a timezone-aware one "
            "(e.g. datetime(..., tzinfo=timezone.utc))"
        )
    try:
        utc = value.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        raise InvalidInput(f"{name} {value!r} falls outside years 1-9999 in UTC") from None
    return (utc - EPOCH) // _US


def opt_us(value: datetime | None, name: str) -> int | None:
    return None if value is None else to_us(value, name)


def read_instants(
    valid_at: datetime | None, known_at: datetime | None, as_of: datetime | None
) -> tuple[int | None, int | None]:
    """A read's time arguments as (valid, known) µs: ``as_of`` means both, and is
    never combined with either (``InvalidTimeSelector``); None = not given."""
    if as_of is not None:
        if valid_at is not None or known_at is not None:
            raise InvalidTimeSelector("as_of means both valid_at and known_at; do not combine them")
        t = to_us(as_of, "as_of")
        return t, t
    return opt_us(valid_at, "valid_at"), opt_us(known_at, "known_at")


def from_us(value: int) -> datetime:
    """Integer microseconds -> aware UTC datetime. Total: a stored value outside
    years 1-9999 (written by an older version, or a validity that ends after the
    calendar) is clamped to the first or last representable microsecond, so a read
    never fails on what is stored."""
    if value > MAX_US:
        return _MAX
    if value < MIN_US:
        return _MIN
    return EPOCH + value * _US


def opt_dt(value: int | None) -> datetime | None:
    return None if value is None else from_us(value)


def end_dt(value: int | None) -> datetime | None:
    """A valid-time end: past year 9999 it never ends (``None``, unbounded)."""
    return None if value is None or value > MAX_US else from_us(value)


def check_tx_clock(now_us: int, what: str = "clock() returned") -> int:
    """A clock reading (or an import's ``recorded_at``) that may become a
    transaction time, or ``InvalidInput``."""
    if now_us >= LAST_TX_US:
        raise InvalidInput(
            f"{what} {from_us(now_us).isoformat()}: transaction times must be "
            f"before {from_us(LAST_TX_US).isoformat()} (the store's clock only moves "
            "forward, and the calendar ends in 9999); nothing was written — fix the clock"
        )
    return now_us


# -- ISO 8601 -------------------------------------------------------------------------
def parse_iso(
    text: str,
    name: str = "timestamp",
    *,
    naive: str = "refuse",
    error: type[Exception] = InvalidInput,
) -> datetime:
    """The one ISO-8601 reader: ``text`` -> an aware UTC datetime.

    A trailing ``Z``/``z`` is UTC; a bare date (``2026-01-01``) is that day's
    UTC midnight. ``naive`` says what a time without an offset is: ``"refuse"``
    (``NaiveDatetime``, the API's rule) or ``"utc"`` (read as UTC, for formats
    that document it: CLI arguments, model answers, imported files). Text that
    is not ISO 8601 raises ``error`` (``InvalidInput`` unless the caller has its
    own error for a bad answer or a bad argument)."""
    if naive not in ("refuse", "utc"):
        raise InvalidInput(f"naive must be 'refuse' or 'utc', not {naive!r}")
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise error(f"{name} is not an ISO 8601 timestamp: {text!r}") from None
    if len(value) == 10:  # a date alone: its UTC midnight
        return dt.replace(tzinfo=timezone.utc)
    if dt.tzinfo is None or dt.tzinfo.utcoffset(dt) is None:
        if naive == "refuse":
            raise NaiveDatetime(
                f"{name} {text!r} is a naive time (no UTC offset); write one, "
                "e.g. '2026-01-01T00:00:00Z'"
            )
        dt = dt.replace(tzinfo=timezone.utc)
    return from_us(to_us(dt, name))  # range checked, normalised to UTC


def instant(
    value: object,
    name: str = "timestamp",
    *,
    naive: str = "refuse",
    error: type[Exception] = InvalidInput,
) -> datetime | None:
    """A read or write instant as callers give it: ``None``, an aware ``datetime``
    or an ISO-8601 string (``parse_iso``) -> ``None`` or an aware UTC datetime.
    Anything else is ``InvalidType``; a naive ``datetime`` follows ``naive``; text
    that is not ISO 8601 raises ``error``."""
    if value is None:
        return None
    if isinstance(value, str):
        return parse_iso(value, name, naive=naive, error=error)
    if not isinstance(value, datetime):
        raise InvalidType(
            f"{name} must be a timezone-aware datetime or an ISO-8601 string, "
            f"not {type(value).__name__}"
        )
    if naive == "utc" and (value.tzinfo is None or value.tzinfo.utcoffset(value) is None):
        value = value.replace(tzinfo=timezone.utc)
    return from_us(to_us(value, name))
