"""``Memory.apply``'s transaction: writes by id resolved to the fact they name
(which this scope must own), then ``Writer.apply`` (docs/design.md §3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .engine import Engine
from .facts import own_fact
from .model import Receipt
from .ops import CorrectOp, RetractOp, WriteOp
from .scope import Scope
from .writer import Writer


def apply(engine: Engine, scope: Scope, ops: Sequence[WriteOp], recorded_at: int | None) -> Receipt:
    writer = Writer(engine.registry, engine.on_insert if engine.hooks else None)
    with engine.backend.write() as conn:
        # the ops' types, not each op, tested (a batch holds one or two)
        if any(issubclass(kind, RetractOp | CorrectOp) for kind in set(map(type, ops))):
            ops = [
                replace(op, fact_id=own_fact(conn, scope, op.fact_id))
                if isinstance(op, RetractOp | CorrectOp)
                else op
                for op in ops
            ]
        return writer.apply(
            conn,
            scope,
            ops,
            engine.tx_us(),
            lock=engine.backend.lock_slots,
            for_update=engine.backend.for_update,
            recorded_at=recorded_at,
        )
