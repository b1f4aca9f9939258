"""Helpers for the import tests: dumps as records, edited and re-serialised, and
a raw snapshot of every table, to check that a refused import wrote nothing."""

from __future__ import annotations

import io
import json
from typing import Any

from sqlalchemy import select

from chronomem import Memory
from chronomem.exchange import export_jsonl, import_jsonl
from chronomem.schema import episodes, predicates, sources, txclock, versions

KINDS = ("predicate", "episode", "version", "source")


def dump(m: Memory) -> list[dict[str, Any]]:
    buf = io.StringIO()
    export_jsonl(m, buf)
    return [json.loads(line) for line in buf.getvalue().splitlines()]


def recount(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The header counts what the edited dump holds."""
    counts = {k + "s": sum(r["type"] == k for r in recs) for k in KINDS}
    return [{**recs[0], "counts": counts}, *recs[1:]]


def load(m: Memory, recs: list[dict[str, Any]]) -> dict[str, int]:
    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in recs)
    return import_jsonl(m, io.StringIO(text))


def snapshot(m: Memory) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the store's tables (all tenants), sorted."""
    out = {}
    with m._engine.backend.read() as conn:
        for table in (versions, episodes, sources, predicates, txclock):
            out[table.name] = sorted(tuple(map(repr, r)) for r in conn.execute(select(table)))
    return out
