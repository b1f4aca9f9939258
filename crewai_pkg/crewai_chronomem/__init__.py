"""chronomem for CrewAI 1.x: bitemporal memory for crews.

- ``ChronomemMemory``: a ``crewai.memory.Memory`` whose saves and recalls are
  chronomem's (facts with validity intervals, supersession, time travel; no
  LLM needed). Use it as ``Crew(memory=ChronomemMemory(memory=mem))``.
- ``ChronomemStorage``: a CrewAI ``StorageBackend`` over chronomem for users who
  keep CrewAI's own ``Memory`` (``Memory(storage="chronomem:<url>")``).

See the package README for which to use when."""

from __future__ import annotations

from .errors import ReadOnlyView
from .extractor import CrewAIExtractor
from .factory import register, spec_for, unregister
from .memory import ChronomemMemory
from .storage import ChronomemStorage, RecordVersion

__all__ = [
    "ChronomemMemory",
    "ChronomemStorage",
    "CrewAIExtractor",
    "ReadOnlyView",
    "RecordVersion",
    "register",
    "spec_for",
    "unregister",
]
