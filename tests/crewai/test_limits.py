"""CrewAI's recall limit is the shared bound (``chronomem_adapters.limits.MAX_K``)."""

from __future__ import annotations

import pytest

from chronomem import Memory
from chronomem_adapters.limits import MAX_K
from crewai_chronomem import ChronomemMemory


def test_recall_limit_is_max_k() -> None:
    memory = ChronomemMemory(memory=Memory())
    try:
        memory.recall("anything", limit=MAX_K)
        with pytest.raises(ValueError, match=str(MAX_K)):
            memory.recall("anything", limit=MAX_K + 1)
    finally:
        memory.close()
