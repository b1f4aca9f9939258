"""``to_us`` against its definition (the instant converted to UTC, counted in µs
from the epoch), for UTC datetimes (its shortcut: no conversion) and others; and
``parse_states(None)``, one shared set, against a new one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from chronomem.model import State, parse_states
from chronomem.timeutil import EPOCH, MAX_US, MIN_US, from_us, to_us

OFFSETS = st.integers(-23 * 60, 23 * 60).map(lambda m: timezone(timedelta(minutes=m)))
ZONES = st.just(timezone.utc) | OFFSETS


def reference(value: datetime) -> int:
    return (value.astimezone(timezone.utc) - EPOCH) // timedelta(microseconds=1)


@given(st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31), timezones=ZONES))
def test_to_us_is_its_definition(value: datetime) -> None:
    assert to_us(value) == reference(value)


@given(st.integers(MIN_US, MAX_US))
def test_to_us_of_from_us_is_the_same_count(us: int) -> None:
    assert to_us(from_us(us)) == us


def test_parse_states_of_none_is_live_alone() -> None:
    assert parse_states(None) == frozenset({State.LIVE})
    assert isinstance(parse_states(None), frozenset)
