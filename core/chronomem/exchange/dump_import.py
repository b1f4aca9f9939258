"""Import of a dump: records parsed, checked and written unchanged in one transaction."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from ..batching import chunks
from ..errors import InvalidInput, ScopeError
from ..identity import key_hash
from ..schema import episodes, sources, txclock, versions
from ..schema import predicates as predicates_table
from ..writer import stamp
from .common import (
    CHUNK,
    FORMAT,
    SCOPE_COLUMNS,
    VERSION_OPT_TEXT,
    VERSION_TEXT,
    bar,
    opt_instant,
    parse_instant,
)

if TYPE_CHECKING:
    from ..memory import Memory


# -- import -------------------------------------------------------------------------------
def read_jsonl(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {n}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            raise InvalidInput(f"line {n}: each line is a JSON object with a 'type'")
        yield n, rec


def _text(rec: dict[str, Any], key: str, n: int, *, optional: bool = False) -> Any:
    value = rec.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"line {n}: {rec['type']} field {key!r} must be a string")
    return value


def _scope_cols(rec: dict[str, Any], n: int) -> dict[str, str]:
    scope = rec.get("scope") or {}
    if not isinstance(scope, dict) or not set(scope) <= {"user", "agent", "session"}:
        raise InvalidInput(f"line {n}: scope must be an object of user/agent/session")
    cols = {}
    for name, col in SCOPE_COLUMNS:
        value = scope.get(name, "")
        if not isinstance(value, str):
            raise InvalidInput(f"line {n}: scope {name} must be a string")
        cols[col] = value
    return cols


def _metadata(rec: dict[str, Any], n: int) -> str:
    meta = rec.get("metadata", {})
    if not isinstance(meta, dict):
        raise InvalidInput(f"line {n}: metadata must be an object")
    return json.dumps(meta, sort_keys=True, ensure_ascii=False)


def _episode_row(rec: dict[str, Any], n: int, tenant: str) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "id": _text(rec, "id", n),
        **_scope_cols(rec, n),
        "role": _text(rec, "role", n, optional=True),
        "text": _text(rec, "text", n),
        "occurred_at": parse_instant(rec.get("occurred_at"), f"line {n}: occurred_at"),
        "recorded_at": parse_instant(rec.get("recorded_at"), f"line {n}: recorded_at"),
        "metadata": _metadata(rec, n),
        "content_hash": _text(rec, "content_hash", n),
    }


def _version_row(rec: dict[str, Any], n: int, tenant: str) -> dict[str, Any]:
    row: dict[str, Any] = {"tenant": tenant, "id": _text(rec, "id", n)}
    row["fact_id"] = _text(rec, "fact_id", n)
    row.update(_scope_cols(rec, n))
    for key in VERSION_TEXT:
        row[key] = _text(rec, key, n)
    for key in VERSION_OPT_TEXT:
        row[key] = _text(rec, key, n, optional=True)
    row["subject_hash"] = key_hash(row["subject_key"])
    row["valid_from"] = parse_instant(rec.get("valid_from"), f"line {n}: valid_from")
    row["valid_to"] = opt_instant(rec.get("valid_to"), f"line {n}: valid_to")
    row["recorded_at"] = parse_instant(rec.get("recorded_at"), f"line {n}: recorded_at")
    row["superseded_at"] = opt_instant(rec.get("superseded_at"), f"line {n}: superseded_at")
    if row["valid_to"] is not None and row["valid_to"] <= row["valid_from"]:
        raise InvalidInput(f"line {n}: valid_to must be after valid_from")
    if row["superseded_at"] is not None and row["superseded_at"] < row["recorded_at"]:
        raise InvalidInput(f"line {n}: superseded_at must not be before recorded_at")
    row["metadata"] = _metadata(rec, n)
    row["content_hash"] = _text(rec, "content_hash", n)
    return row


def _source_row(rec: dict[str, Any], n: int, tenant: str) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "fact_id": _text(rec, "fact_id", n),
        "episode_id": _text(rec, "episode_id", n),
        "recorded_at": parse_instant(rec.get("recorded_at"), f"line {n}: recorded_at"),
        "extractor": _text(rec, "extractor", n, optional=True),
    }


def _predicate_row(rec: dict[str, Any], n: int, tenant: str) -> dict[str, Any]:
    return {
        "tenant": tenant,
        **{k: _text(rec, k, n) for k in ("name", "canonical", "cardinality", "volatility")},
        "origin": _text(rec, "origin", n, optional=True) or "user",
    }


_ROWS: dict[str, tuple[Any, Callable[[dict[str, Any], int, str], dict[str, Any]]]] = {
    "predicate": (predicates_table, _predicate_row),
    "episode": (episodes, _episode_row),
    "version": (versions, _version_row),
    "source": (sources, _source_row),
}


def import_records(
    memory: Memory, records: Iterable[tuple[int, dict[str, Any]]], *, progress: bool = False
) -> dict[str, int]:
    """Write a dump's records into ``memory``'s tenant, unchanged (ids, both clocks,
    scopes), in one transaction. The tenant must hold no facts, episodes or
    registered predicates yet (``InvalidInput`` otherwise); ``memory`` must be the
    tenant itself, not a user/agent/session scope of it (``ScopeError``), since the
    records carry their own scopes."""
    memory._engine.check_open()
    scope = memory.scope
    if scope.user or scope.agent or scope.session:
        raise ScopeError(
            "import into the tenant, not a user/agent/session scope: each record carries its scope"
        )
    t = scope.tenant
    sh = memory._engine
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in _ROWS}
    header = None
    total = None
    for n, rec in records:
        kind = rec["type"]
        if kind == "chronomem":
            if rec.get("format") != FORMAT:
                raise InvalidInput(f"line {n}: unsupported dump format {rec.get('format')!r}")
            header = rec
            counts = rec.get("counts")
            if isinstance(counts, dict):
                total = sum(v for v in counts.values() if isinstance(v, int))
            continue
        if header is None:
            raise InvalidInput(f"line {n}: a chronomem dump starts with its header line")
        if kind not in _ROWS:
            raise InvalidInput(f"line {n}: unknown record type {kind!r}")
        rows[kind].append(_ROWS[kind][1](rec, n, t))
    if header is None:
        raise InvalidInput("not a chronomem dump: no header line")
    _check_links(rows)
    progress_bar = bar(total, "import", progress)
    try:
        _write_rows(memory, rows, progress_bar)
    except IntegrityError as exc:  # e.g. a predicate or source link listed twice
        raise InvalidInput(
            f"the dump contradicts itself ({type(exc.orig).__name__}): nothing was imported"
        ) from None
    finally:
        progress_bar.close()
    sh.registry.invalidate(t)
    memory._engine.invalidate_index()
    return {k + "s": len(v) for k, v in rows.items()}


def _write_rows(memory: Memory, rows: dict[str, list[dict[str, Any]]], progress_bar: Any) -> None:
    """Insert the rows in one transaction, index them, move the tenant's clock."""
    sh = memory._engine
    t = memory.scope.tenant
    with sh.backend.write() as conn:
        _require_empty(conn, t)
        for kind in ("predicate", "episode", "version", "source"):
            table = _ROWS[kind][0]
            batch = rows[kind]
            for chunk in chunks(batch, CHUNK):
                conn.execute(table.insert(), chunk)
                if kind == "version":
                    sh.on_insert(conn, chunk)
                elif kind == "episode":
                    sh.on_episodes(conn, chunk)
                progress_bar.update(len(chunk))
        times = [r["recorded_at"] for k in ("episode", "version", "source") for r in rows[k]]
        times += [r["superseded_at"] for r in rows["version"] if r["superseded_at"]]
        if times:
            # later writes must stamp after every imported belief change; every
            # process's search mirror of the tenant reloads (as after an erase)
            tx = stamp(conn, t, memory._engine.now_us(), at=max(times))
            conn.execute(
                update(txclock).where(txclock.c.tenant == t).values(erased_us=tx, registry_us=tx)
            )


def _check_links(rows: dict[str, list[dict[str, Any]]]) -> None:
    ids = [r["id"] for r in rows["version"]]
    if len(set(ids)) != len(ids):
        raise InvalidInput("the dump repeats a version id")
    _check_i1(rows["version"])
    eids = {r["id"] for r in rows["episode"]}
    if len(eids) != len(rows["episode"]):
        raise InvalidInput("the dump repeats an episode id")
    facts = {r["fact_id"] for r in rows["version"]}
    for s in rows["source"]:
        if s["fact_id"] not in facts or s["episode_id"] not in eids:
            raise InvalidInput(
                f"source link {s['fact_id']} -> {s['episode_id']} names a fact or an "
                "episode the dump does not hold"
            )


def _check_i1(rows: list[dict[str, Any]]) -> None:
    """Invariant I1 over the dump's current versions: in a slot they never overlap
    in valid time (a crafted or damaged dump is refused, not imported)."""
    by_slot: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for r in rows:
        if r["superseded_at"] is None:
            where = (r["user_id"], r["agent_id"], r["session_id"], r["slot"])
            end = r["valid_to"] if r["valid_to"] is not None else 2**63
            by_slot.setdefault(where, []).append((r["valid_from"], end))
    for key, spans in by_slot.items():
        spans.sort()
        for (_, a_end), (b_start, _) in pairwise(spans):
            if b_start < a_end:
                raise InvalidInput(
                    f"the dump's current versions of slot {key[3]} overlap in valid time "
                    "(invariant I1): it was damaged or edited; nothing was imported"
                )


def _require_empty(conn: Any, tenant: str) -> None:
    for table in (versions, episodes, predicates_table):
        if conn.execute(select(table.c.tenant).where(table.c.tenant == tenant).limit(1)).first():
            raise InvalidInput(
                f"tenant {tenant!r} already holds memory: a dump is imported into an empty "
                "tenant (its ids and transaction times are kept exactly); import into a "
                "new database or another --tenant"
            )


def import_jsonl(memory: Memory, lines: Iterable[str], *, progress: bool = False) -> dict[str, int]:
    """Import a dump (an open file or any iterable of lines) into ``memory``'s empty tenant."""
    return import_records(memory, read_jsonl(lines), progress=progress)


def is_dump(first_line: str) -> bool:
    """Whether a file's first line is a chronomem dump header (else: plain facts)."""
    try:
        rec = json.loads(first_line)
    except json.JSONDecodeError:
        return False
    return isinstance(rec, dict) and rec.get("type") == "chronomem"
