"""Counting what a call costs the database: the SQL statements it runs on a
store's engine and the episode rows it decodes. Bounded work is asserted with
these counts (issue #32), never with timers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event

from chronomem import Memory, reads


@dataclass
class Cost:
    statements: list[str] = field(default_factory=list)
    episode_rows: int = 0

    @property
    def shape(self) -> tuple[int, int]:
        """(statements, episode rows): equal shapes mean equal work."""
        return (len(self.statements), self.episode_rows)


@contextmanager
def counting(memory: Memory) -> Iterator[Cost]:
    """Every statement run on ``memory``'s engine meanwhile (``ANALYZE`` and
    savepoint bookkeeping excluded) and every episode row decoded."""
    cost = Cost()
    engine = memory.backend.engine
    decode = reads.to_episode

    def note(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if not statement.lstrip().upper().startswith(("ANALYZE", "SAVEPOINT", "RELEASE")):
            cost.statements.append(statement)

    def counted(row: Any) -> Any:
        cost.episode_rows += 1
        return decode(row)

    event.listen(engine, "before_cursor_execute", note)
    reads.to_episode = counted  # type: ignore[assignment]
    try:
        yield cost
    finally:
        reads.to_episode = decode  # type: ignore[assignment]
        event.remove(engine, "before_cursor_execute", note)
