"""Storage backends: one schema, one module per database."""

from __future__ import annotations

from .base import Backend, open_backend

__all__ = ["Backend", "open_backend"]
