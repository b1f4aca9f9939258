"""chronomem adapters: the semantics vocabulary, declarations, and the conformance kit."""

from __future__ import annotations

from .declaration import AdapterSpec, declare, spec_of
from .semantics import MEANINGS, Semantic, TimeKeeping, UnsupportedSemantics

__all__ = [
    "MEANINGS",
    "AdapterSpec",
    "Semantic",
    "TimeKeeping",
    "UnsupportedSemantics",
    "declare",
    "spec_of",
]
