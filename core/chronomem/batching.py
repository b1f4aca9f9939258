"""One chunking helper for ``IN (…)`` lists: SQLite caps bound parameters per
statement, and long lists plan badly on both databases."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

IN_BATCH = 500  # ids per ``IN (…)`` list

T = TypeVar("T")


def chunks(items: Sequence[T], size: int = IN_BATCH) -> Iterator[list[T]]:
    """``items`` in consecutive lists of at most ``size``."""
    for i in range(0, len(items), size):
        yield list(items[i : i + size])
