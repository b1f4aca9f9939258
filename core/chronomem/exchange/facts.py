"""Import of hand-written facts, one JSON object a line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import ChronomemError, InvalidInput
from ..ops import AssertOp
from ..timeutil import parse_iso, to_us
from .common import bar, json_objects
from .history import write_history

if TYPE_CHECKING:
    from ..memory import Memory


# -- plain facts ----------------------------------------------------------------------------
_FACT_KEYS = {"subject", "predicate", "object", "valid_from", "valid_to", "recorded_at",
              "metadata", "extractor"}  # fmt: skip


def import_facts(memory: Memory, lines: Iterable[str], *, progress: bool = False) -> dict[str, int]:
    """Import hand-written facts, one JSON object a line::

        {"subject": "alice", "predicate": "lives_in", "object": "Paris",
         "valid_from": "2025-06-01", "recorded_at": "2026-01-05"}

    ``valid_from``/``valid_to`` default as in ``remember``; a line with
    ``recorded_at`` is history (``Memory.import_fact``: believed since then), written
    in ``recorded_at`` order; lines without it are remembered now, in one batch.
    Instants without an offset are UTC. Returns how many facts each way.
    All lines are written in one transaction: a bad line (or a ``recorded_at`` after
    the store's clock) writes nothing."""
    past: list[tuple[int, int, AssertOp, datetime]] = []
    now: list[AssertOp] = []
    for n, rec in _fact_lines(lines):
        unknown = set(rec) - _FACT_KEYS
        if unknown:
            raise InvalidInput(f"line {n}: unknown field(s) {sorted(unknown)}")
        kw: dict[str, Any] = {}
        for key in ("valid_from", "valid_to"):
            if rec.get(key) is not None:
                kw[key] = _loose_instant(rec[key], f"line {n}: {key}")
        for key in ("metadata", "extractor"):
            if rec.get(key) is not None:
                kw[key] = rec[key]
        at = None
        if rec.get("recorded_at") is not None:
            at = _loose_instant(rec["recorded_at"], f"line {n}: recorded_at")
            kw.setdefault("valid_from", at)  # as ``Memory.import_fact``
        try:
            op = memory.assertion(rec["subject"], rec["predicate"], rec["object"], **kw)
            if at is not None:
                past.append((to_us(at, "recorded_at"), n, op, at))
            else:
                now.append(op)
        except ChronomemError as exc:
            raise type(exc)(f"line {n}: {exc}") from None
        except KeyError as exc:
            raise InvalidInput(f"line {n}: a fact has a {exc.args[0]!r}") from None
    progress_bar = bar(len(past) + len(now), "import", progress)
    try:
        writes = [([op], at, f"line {n}") for _, n, op, at in sorted(past, key=lambda p: p[:2])]
        write_history(memory, [*writes, (now, None, "the lines without recorded_at")])
        progress_bar.update(len(past) + len(now))
    finally:
        progress_bar.close()
    return {"history": len(past), "remembered": len(now)}


def _fact_lines(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    return json_objects(lines, "a JSON object")


def _loose_instant(value: object, what: str) -> datetime:
    """ISO 8601 date or time; without an offset, UTC."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what}: expected an ISO 8601 string")
    return parse_iso(value, what, naive="utc")
