"""``Memory.apply``'s transaction: writes by id resolved to the fact they name
(which this scope must own), then ``Writer.apply`` (docs/design.md §3); and
``Memory.apply_planned``'s: operations planned from what a few subjects hold,
read in the write transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .engine import Engine
from .errors import InvalidInput
from .facts import own_fact
from .model import Receipt
from .ops import CorrectOp, PlannedWrite, RetractOp, WriteOp
from .reads import INLINE, scope_values, subject_rows
from .scope import Scope
from .writer import Writer, planned_ops


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


def apply_planned(engine: Engine, scope: Scope, planned: PlannedWrite) -> Receipt:
    """``Memory.apply_planned``: one write transaction that reads the live facts of
    ``planned.subjects``, plans from them and applies the plan, then ``then``.

    Without row locks (SQLite, where ``BEGIN IMMEDIATE`` holds the database) and
    in a scope that reads no enclosing one (the tenant's own: its reads are its
    writes' rows), the read is the writer's own live read, after the stamp
    (``Writer.apply(planned=…)``: one statement serves the plan and the writer).
    Elsewhere it is ``Memory.rows``' point read, run first in the transaction."""
    subjects = list(dict.fromkeys(planned.subjects))
    if not 0 < len(subjects) <= INLINE:
        raise InvalidInput(f"a planned write reads 1 to {INLINE} subjects")
    if any(isinstance(op, RetractOp | CorrectOp) for op in planned.then):
        raise InvalidInput("a planned write takes asserts and ends")
    backend = engine.backend
    writer = Writer(engine.registry, engine.on_insert if engine.hooks else None)
    with backend.write() as conn:
        fused = not backend.for_update and not backend.sends_together()
        if fused and not any(scope_values(scope)):
            return writer.apply(
                conn, scope, (), engine.tx_us(), lock=backend.lock_slots, for_update=False,
                planned=planned,
            )  # fmt: skip
        rows = subject_rows(conn, scope, planned.valid_at, None, subjects)
        return writer.apply(
            conn,
            scope,
            planned_ops(planned, rows),
            engine.tx_us(),
            lock=backend.lock_slots,
            for_update=backend.for_update,
        )
