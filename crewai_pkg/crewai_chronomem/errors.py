"""Errors the CrewAI adapters raise beyond chronomem's own."""

from __future__ import annotations

from chronomem import ChronomemError


class ReadOnlyView(ChronomemError, RuntimeError):
    """A write (remember, update, forget, reset, erase) was sent to an ``as_of`` view."""
