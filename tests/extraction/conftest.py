"""Fixtures for the extraction tests: an in-memory store on a manual clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from chronomem import Memory
from tests.conftest import ManualClock

# A Wednesday, mid-afternoon UTC: every relative time below is resolved against it.
REF = datetime(2024, 6, 12, 15, 30, tzinfo=timezone.utc)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(
        start=datetime(2024, 1, 10, 9, 0, tzinfo=timezone.utc), tick=timedelta(seconds=1)
    )


@pytest.fixture
def mem(clock: ManualClock) -> Iterator[Memory]:
    m = Memory(clock=clock)
    try:
        yield m
    finally:
        m.close()
