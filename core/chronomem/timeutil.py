"""Timestamps: aware UTC datetimes outside, integer microseconds inside.

Integer microseconds compare correctly in SQL on every backend and have no
timezone or precision surprises."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from .errors import InvalidInput, InvalidType, NaiveDatetime

Clock = Callable[[], datetime]

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_US = timedelta(microseconds=1)


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


def to_us(value: datetime, name: str = "timestamp") -> int:
    """Aware datetime -> integer microseconds since the Unix epoch (UTC)."""
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


def from_us(value: int) -> datetime:
    return EPOCH + value * _US


def opt_dt(value: int | None) -> datetime | None:
    return None if value is None else from_us(value)
