"""Writing imported history all or nothing: a sequence of writes, each at its
own belief time, in one transaction. An importer (hand-written facts, mem0, a
LangGraph store) that meets a bad row then leaves the store as it was, so the
fixed source can be imported again; no write may be stamped after the store's
clock (it would drag every later write's transaction time into the future)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import ChronomemError, TimeTravel
from ..ops import WriteOp
from ..timeutil import check_tx_clock, to_us
from ..writer import Writer

if TYPE_CHECKING:
    from ..memory import Memory

History = Iterable[tuple[Sequence[WriteOp], datetime | None, str]]


def write_history(memory: Memory, writes: History) -> int:
    """Apply each ``(ops, recorded_at, label)`` as ``memory``'s write at ``recorded_at``
    (``None``: now), all in one transaction. ``TimeTravel`` for a ``recorded_at``
    after the clock or before its slot's last change; any error writes nothing.
    An error names the write's ``label`` (e.g. ``"line 7"``). Returns the number of
    writes."""
    memory._check_open()
    engine = memory._engine
    now = engine.tx_us()
    planned = []
    for ops, at, label in writes:
        at_us = None
        if at is not None:
            at_us = check_tx_clock(to_us(at, f"{label}: recorded_at"), f"{label}: recorded_at is")
        if at_us is not None and at_us > now:
            raise TimeTravel(
                f"{label}: recorded_at is after the store's clock: an import records the "
                "past, and would otherwise drag every later write's transaction time forward"
            )
        planned.append((list(ops), at_us, label))
    writer = Writer(engine.registry, engine.on_insert if engine.hooks else None)
    try:
        with engine.backend.write() as conn:
            for ops, at_us, label in planned:
                if not ops:
                    continue
                try:
                    writer.apply(
                        conn,
                        memory.scope,
                        ops,
                        now,
                        lock=engine.backend.lock_slots,
                        for_update=engine.backend.for_update,
                        recorded_at=at_us,
                    )
                except ChronomemError as exc:
                    raise type(exc)(f"{label}: {exc}; nothing was imported") from None
    except BaseException:
        engine.invalidate_index()  # hooks may have seen rows that were rolled back
        raise
    return len(planned)
