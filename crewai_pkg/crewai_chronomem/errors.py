"""Errors the CrewAI adapters raise: chronomem's own (``ReadOnlyView``: a write
(remember, update, forget, reset, erase) sent to an ``as_of`` view)."""

from __future__ import annotations

from chronomem import ReadOnlyView

__all__ = ["ReadOnlyView"]
