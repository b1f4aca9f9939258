"""Import of mem0's history database: each memory a single-valued slot whose
values are written at the event's own time, on both clocks."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..identity import encodable, require_text
from ..ops import AssertOp, EndOp
from ..predicates import Cardinality
from ..timeutil import from_us, instant, to_us
from .common import bar
from .history import write_history

if TYPE_CHECKING:
    from ..memory import Memory

MEM0_PREDICATE = "mem0_memory"


# -- mem0 ---------------------------------------------------------------------------------
def _mem0_time(value: object, what: str) -> int:
    """mem0 stamps ``datetime.now(tz).isoformat()``; older rows may be naive (read as UTC)."""
    if not isinstance(value, datetime) and not (isinstance(value, str) and value.strip()):
        raise InvalidInput(f"{what}: no time")
    dt = instant(value, what, naive="utc")
    assert dt is not None
    return to_us(dt, what)


def mem0_events(path: str) -> list[dict[str, Any]]:
    """The rows of a mem0 history database, oldest first. Reads both mem0 layouts:
    ``old_memory``/``new_memory``/``created_at``/``updated_at`` and the older
    ``prev_value``/``new_value``/``timestamp``."""
    if not isinstance(path, str | os.PathLike) or not os.path.isfile(path):
        raise NotFound(f"no mem0 history database at {str(path)[:200]!r}")
    # by path, as a URI whose every special character (# ? %) is escaped: read-only,
    # never created (a bare "file:" + path would cut the path at '#' or '?')
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise NotFound(f"cannot open mem0 history {path!r}: {exc}") from None
    try:
        conn.row_factory = sqlite3.Row
        try:
            rows = [dict(r) for r in conn.execute("SELECT rowid AS _rowid, * FROM history")]
        except sqlite3.Error as exc:
            raise InvalidInput(f"{path!r} has no mem0 history table: {exc}") from None
    finally:
        conn.close()
    events = []
    for r in rows:
        event = str(r.get("event") or "").upper()
        if event not in ("ADD", "UPDATE", "DELETE"):
            continue  # mem0 also logs NONE (nothing changed)
        created = r.get("created_at", r.get("timestamp"))
        updated = r.get("updated_at")
        when = updated if event != "ADD" and updated else created
        if r.get("memory_id") is None or not str(r.get("memory_id")).strip():
            raise InvalidInput(f"mem0 history row {r.get('id')!r} has no memory id")
        events.append(
            {
                "history_id": str(r.get("id")),
                "memory_id": str(r.get("memory_id")),
                "event": event,
                "text": r.get("new_memory", r.get("new_value")),
                "at": _mem0_time(when, f"mem0 history row {r.get('id')!r}"),
                "actor_id": r.get("actor_id"),
                "role": r.get("role"),
                "order": r["_rowid"],
            }
        )
    events.sort(key=lambda e: (e["at"], e["order"]))
    return events


def import_mem0_history(memory: Memory, path: str, *, progress: bool = False) -> dict[str, int]:
    """Import a mem0 history database (SQLite) into ``memory``'s scope, each event
    written at its own time on both clocks (see the module docstring). Returns
    counts per event kind. One transaction: a bad row (no text, a time after the
    store's clock) writes nothing."""
    events = mem0_events(path)
    counts = {"ADD": 0, "UPDATE": 0, "DELETE": 0}
    last: dict[str, int] = {}
    writes = []
    progress_bar = bar(len(events), "mem0", progress)
    try:
        for e in events:
            label = f"mem0 history row {e['history_id']!r}"
            mid = require_text(e["memory_id"], f"{label}: memory id")
            at = max(e["at"], last.get(mid, e["at"] - 1) + 1)  # same-instant events: in order
            last[mid] = at
            if e["event"] == "DELETE":
                ops: list[Any] = [EndOp(mid, MEM0_PREDICATE, None, at, cardinality=Cardinality.ONE)]
            else:
                text = e["text"]
                if not isinstance(text, str) or not text.strip():
                    raise InvalidInput(f"{label}: no memory text")
                require_text(text, f"{label}: memory text")
                meta = {
                    k: e[k] if isinstance(e[k], str | int | float) else str(e[k])
                    for k in ("history_id", "event", "actor_id", "role")
                    if e[k] is not None
                }
                encodable(json.dumps(meta, ensure_ascii=False), f"{label}: metadata")
                ops = [
                    AssertOp(
                        mid,
                        MEM0_PREDICATE,
                        text,
                        at,
                        None,
                        bounded=False,
                        metadata={"mem0": meta},
                        extractor="mem0",
                        cardinality=Cardinality.ONE,
                        index_text=text,
                    )
                ]
            writes.append((ops, from_us(at), label))
            counts[e["event"]] += 1
        write_history(memory, writes)
        progress_bar.update(len(events))
    finally:
        progress_bar.close()
    return {k.lower(): v for k, v in counts.items()}
