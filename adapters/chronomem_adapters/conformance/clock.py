"""The kit's clock: an injectable manual clock the harness builds its store with."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

KIT_START = datetime(2026, 1, 1, tzinfo=timezone.utc)


class KitClock:
    """Each call returns the current instant and then moves it on by ``tick``; the
    kit moves it further with ``advance`` so that writes land at distinct instants."""

    def __init__(self, start: datetime = KIT_START, tick: timedelta = timedelta(seconds=1)):
        self.now = start
        self.tick = tick

    def __call__(self) -> datetime:
        value = self.now
        self.now = self.now + self.tick
        return value

    def advance(self, **delta: float) -> datetime:
        """Move the clock on (``advance(minutes=5)``) and return the new instant."""
        self.now = self.now + timedelta(**delta)
        return self.now

    def mark(self) -> datetime:
        """An instant strictly after everything written so far, before the next write."""
        self.now = self.now + self.tick
        return self.now - self.tick / 2
