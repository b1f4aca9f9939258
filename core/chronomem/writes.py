"""``Memory.apply``'s transaction: writes by id resolved to the fact they name
(which this scope must own), then ``Writer.apply`` (docs/design.md §3); and
``Memory.apply_planned``'s: operations planned from what a few subjects hold,
read in the write transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import Connection

from .batching import chunks
from .engine import Engine
from .errors import InvalidInput
from .facts import LIVE, own_fact
from .model import FactRow, Receipt
from .ops import PlannedWrite, WriteOp
from .reads import INLINE, facts_query, scope_values, subject_rows
from .scope import Scope
from .writer import BY_ID, Writer, planned_ops


def apply(engine: Engine, scope: Scope, ops: Sequence[WriteOp], recorded_at: int | None) -> Receipt:
    writer = Writer(engine.registry, engine.on_insert if engine.hooks else None)
    with engine.backend.write() as conn:
        # the ops' types, not each op, tested (a batch holds one or two)
        if any(issubclass(kind, BY_ID) for kind in set(map(type, ops))):
            ops = [
                replace(op, fact_id=own_fact(conn, scope, op.fact_id))
                if isinstance(op, BY_ID)
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
    Elsewhere it is ``Memory.rows``' read (a point read for a few subjects), run
    first in the transaction, and the plan's ``DocumentOp``s are applied as their
    ``ops()``."""
    subjects = list(dict.fromkeys(planned.subjects))
    if not subjects:
        raise InvalidInput("a planned write reads at least one subject")
    if any(isinstance(op, BY_ID) for op in planned.then):
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
        rows = _live_rows(conn, scope, planned.valid_at, subjects)
        return writer.apply(
            conn,
            scope,
            planned_ops(planned, rows),
            engine.tx_us(),
            lock=backend.lock_slots,
            for_update=backend.for_update,
        )


# the subjects one read of a planned write's many subjects names at most
SUBJECTS_PER_READ = 500


def _live_rows(conn: Connection, scope: Scope, valid_at: int, subjects: list[str]) -> list[FactRow]:
    """The live rows of ``subjects`` (distinct, exact keys) at ``valid_at``, as
    ``Memory.rows`` reads them: a few in the point read's prepared statement,
    more in reads of ``SUBJECTS_PER_READ``."""
    if len(subjects) <= INLINE:
        return subject_rows(conn, scope, valid_at, None, subjects)
    out: list[FactRow] = []
    for part in chunks(subjects, SUBJECTS_PER_READ):
        q = facts_query(
            scope, valid_at=valid_at, known_at=None, states=LIVE, subject_keys=part, light=True
        )
        out += q.rows(conn)
    return out
