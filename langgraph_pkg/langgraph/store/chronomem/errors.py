"""Errors of the LangGraph store (every one is a ``ChronomemError``)."""

from __future__ import annotations

from chronomem import ChronomemError


class ReadOnlyView(ChronomemError, RuntimeError):
    """A write (put, delete, erase, TTL refresh) was sent to a time-travel view."""
