"""Errors of the LangGraph store (every one is a ``ChronomemError``);
``ReadOnlyView`` (a put, delete, erase or TTL refresh sent to a time-travel view)
is chronomem's own."""

from __future__ import annotations

from chronomem import ChronomemError, ReadOnlyView

__all__ = ["PinUnavailable", "ReadOnlyView"]


class PinUnavailable(ChronomemError, LookupError):
    """``pin_reads='checkpoint'`` could not find the checkpoint a run started from
    (no checkpointer reachable, or the checkpoint is not in it)."""
