"""Errors of the LangGraph store (every one is a ``ChronomemError``)."""

from __future__ import annotations

from chronomem import ChronomemError


class ReadOnlyView(ChronomemError, RuntimeError):
    """A write (put, delete, erase, TTL refresh) was sent to a time-travel view."""


class PinUnavailable(ChronomemError, LookupError):
    """``pin_reads='checkpoint'`` could not find the checkpoint a run started from
    (no checkpointer reachable, or the checkpoint is not in it)."""
