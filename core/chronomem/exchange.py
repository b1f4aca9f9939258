"""Moving memory in and out: a JSON Lines dump that round-trips exactly, plain
facts written by hand, and an importer from mem0's history database.

**The dump** (``export_jsonl`` / ``import_jsonl``) holds a tenant's rows as they
are stored: every version with its fact id, version id, both clocks
(``valid_from``/``valid_to``, ``recorded_at``/``superseded_at``), what closed it
and what superseded it, its extractor, metadata and index text; every episode;
every fact-episode source link; the tenant's predicate registry. One JSON object
per line, the first a header::

    {"type": "chronomem", "format": 1, "tenant": "…", "counts": {…}, …}
    {"type": "predicate", "name": "lives_in", "canonical": "lives_in", …}
    {"type": "episode", "id": "…", "text": "…", "occurred_at": "2026-…", …}
    {"type": "version", "id": "…", "fact_id": "…", "valid_from": "…", …}
    {"type": "source", "fact_id": "…", "episode_id": "…", …}

Instants are ISO 8601 UTC strings to the microsecond (an instant outside years
1-9999, which only a "never ends" validity can hold, is its integer microsecond
count). Importing writes the rows back unchanged — not through the state
machine, which would stamp new transaction times and new ids — so every read at
every past ``known_at`` answers exactly as it did in the exported store. That is
only sound into a tenant that holds nothing yet: ``import_jsonl`` refuses a
non-empty one. Search vectors are not dumped; the importing store's embedder
computes them.

**mem0** (``import_mem0_history``): mem0 keeps every ADD/UPDATE/DELETE of a
memory in a SQLite ``history`` table. Each memory becomes a single-valued slot
(subject: the mem0 memory id, predicate ``mem0_memory``) whose values are
written at the event's own time, on both clocks: an UPDATE ends the old text
where the new one starts, a DELETE ends the memory."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from itertools import pairwise
from typing import IO, TYPE_CHECKING, Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from . import reads
from .batching import chunks
from .errors import InvalidInput, NotFound, ScopeError
from .identity import key_hash
from .ops import AssertOp, EndOp
from .predicates import Cardinality
from .schema import episodes, sources, txclock, versions
from .schema import predicates as predicates_table
from .timeutil import MAX_US, MIN_US, from_us, to_us
from .writer import stamp

if TYPE_CHECKING:
    from .memory import Memory

FORMAT = 1
CHUNK = 500
MEM0_PREDICATE = "mem0_memory"

_SCOPE = (("user", "user_id"), ("agent", "agent_id"), ("session", "session_id"))
_VERSION_TEXT = ("subject", "subject_key", "predicate", "object", "object_key", "slot")
_VERSION_OPT_TEXT = ("superseded_by", "closed_reason", "extractor", "index_text")


# -- instants ---------------------------------------------------------------------------
def instant(us: int | None) -> str | int | None:
    """Stored microseconds -> the dump's form (ISO 8601 UTC, or the integer outside
    the calendar)."""
    if us is None:
        return None
    return from_us(us).isoformat() if MIN_US <= us <= MAX_US else us


def parse_instant(value: object, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(f"{what}: {value!r} is not an ISO 8601 instant") from None
        if dt.tzinfo is None:
            raise InvalidInput(f"{what}: {value!r} has no UTC offset")
        return to_us(dt, what)
    raise InvalidInput(f"{what}: expected an ISO 8601 instant, not {type(value).__name__}")


def _opt_instant(value: object, what: str) -> int | None:
    return None if value is None else parse_instant(value, what)


# -- progress -----------------------------------------------------------------------------
def _bar(total: int | None, desc: str, enabled: bool) -> Any:
    """A tqdm bar on stderr when asked for and tqdm is installed, else a no-op."""
    if enabled:
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc=desc, unit="row", leave=False)
        except ImportError:  # pragma: no cover - tqdm comes with the cli extra
            pass
    return _NoBar()


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


# -- export -------------------------------------------------------------------------------
def _scope_of(row: Any) -> dict[str, str]:
    return {name: row[col] for name, col in _SCOPE if row[col]}


def _meta(text: str) -> Any:
    return json.loads(text) if text else {}


def export_records(memory: Memory, *, progress: bool = False) -> Iterator[dict[str, Any]]:
    """The dump of ``memory``'s scope (and the scopes under it) as records, header first."""
    memory._engine.check_open()
    scope = memory.scope
    t = scope.tenant
    sh = memory._engine
    vis_v = reads.scope_within(versions, scope)
    vis_e = reads.scope_within(episodes, scope)
    with sh.backend.read() as conn:
        n_versions = conn.execute(select(func.count()).where(vis_v)).scalar_one()
        n_episodes = conn.execute(select(func.count()).where(vis_e)).scalar_one()
        preds = conn.execute(
            select(predicates_table)
            .where(predicates_table.c.tenant == t)
            .order_by(predicates_table.c.name)
        ).mappings()
        pred_rows = [dict(r) for r in preds]
        fact_ids = set(conn.execute(select(versions.c.fact_id).where(vis_v).distinct()).scalars())
        src_rows = [
            dict(r)
            for r in conn.execute(
                select(sources)
                .where(sources.c.tenant == t)
                .order_by(sources.c.recorded_at, sources.c.fact_id, sources.c.episode_id)
            ).mappings()
            if r["fact_id"] in fact_ids
        ]
    yield {
        "type": "chronomem",
        "format": FORMAT,
        "tenant": t,
        "scope": {k: v for k, v in (("user", scope.user), ("agent", scope.agent),
                                    ("session", scope.session)) if v},
        "exported_at": memory.now().isoformat(),
        "counts": {
            "predicates": len(pred_rows),
            "episodes": n_episodes,
            "versions": n_versions,
            "sources": len(src_rows),
        },
    }  # fmt: skip
    bar = _bar(len(pred_rows) + n_episodes + n_versions + len(src_rows), "export", progress)
    try:
        for p in pred_rows:
            yield {"type": "predicate", **{k: v for k, v in p.items() if k != "tenant"}}
            bar.update()
        with sh.backend.read() as conn:
            for e in conn.execute(
                select(episodes).where(vis_e).order_by(episodes.c.recorded_at, episodes.c.id)
            ).mappings():
                yield {
                    "type": "episode",
                    "id": e["id"],
                    "scope": _scope_of(e),
                    "role": e["role"],
                    "text": e["text"],
                    "occurred_at": instant(e["occurred_at"]),
                    "recorded_at": instant(e["recorded_at"]),
                    "metadata": _meta(e["metadata"]),
                    "content_hash": e["content_hash"],
                }
                bar.update()
            for v in conn.execute(
                select(versions).where(vis_v).order_by(versions.c.recorded_at, versions.c.id)
            ).mappings():
                yield {
                    "type": "version",
                    "id": v["id"],
                    "fact_id": v["fact_id"],
                    "scope": _scope_of(v),
                    **{k: v[k] for k in _VERSION_TEXT},
                    "valid_from": instant(v["valid_from"]),
                    "valid_to": instant(v["valid_to"]),
                    "recorded_at": instant(v["recorded_at"]),
                    "superseded_at": instant(v["superseded_at"]),
                    **{k: v[k] for k in _VERSION_OPT_TEXT},
                    "metadata": _meta(v["metadata"]),
                    "content_hash": v["content_hash"],
                }
                bar.update()
        for s in src_rows:
            yield {
                "type": "source",
                "fact_id": s["fact_id"],
                "episode_id": s["episode_id"],
                "recorded_at": instant(s["recorded_at"]),
                "extractor": s["extractor"],
            }
            bar.update()
    finally:
        bar.close()


def export_jsonl(memory: Memory, out: IO[str], *, progress: bool = False) -> dict[str, int]:
    """Write the dump of ``memory``'s scope to ``out``; returns the record counts."""
    counts: dict[str, int] = {}
    for rec in export_records(memory, progress=progress):
        out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        if rec["type"] != "chronomem":
            counts[rec["type"]] = counts.get(rec["type"], 0) + 1
    return counts


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
    for name, col in _SCOPE:
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
    for key in _VERSION_TEXT:
        row[key] = _text(rec, key, n)
    for key in _VERSION_OPT_TEXT:
        row[key] = _text(rec, key, n, optional=True)
    row["subject_hash"] = key_hash(row["subject_key"])
    row["valid_from"] = parse_instant(rec.get("valid_from"), f"line {n}: valid_from")
    row["valid_to"] = _opt_instant(rec.get("valid_to"), f"line {n}: valid_to")
    row["recorded_at"] = parse_instant(rec.get("recorded_at"), f"line {n}: recorded_at")
    row["superseded_at"] = _opt_instant(rec.get("superseded_at"), f"line {n}: superseded_at")
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
    bar = _bar(total, "import", progress)
    try:
        _write_rows(memory, rows, bar)
    except IntegrityError as exc:  # e.g. a predicate or source link listed twice
        raise InvalidInput(
            f"the dump contradicts itself ({type(exc.orig).__name__}): nothing was imported"
        ) from None
    finally:
        bar.close()
    sh.registry.invalidate(t)
    memory._engine.invalidate_index()
    return {k + "s": len(v) for k, v in rows.items()}


def _write_rows(memory: Memory, rows: dict[str, list[dict[str, Any]]], bar: Any) -> None:
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
                bar.update(len(chunk))
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
    Instants without an offset are UTC. Returns how many facts each way."""
    past: list[tuple[int, int, dict[str, Any]]] = []
    now: list[dict[str, Any]] = []
    for n, rec in _fact_lines(lines):
        unknown = set(rec) - _FACT_KEYS
        if unknown:
            raise InvalidInput(f"line {n}: unknown field(s) {sorted(unknown)}")
        kw: dict[str, Any] = {
            "subject": rec.get("subject"),
            "predicate": rec.get("predicate"),
            "obj": rec.get("object"),
        }
        for key in ("valid_from", "valid_to"):
            if rec.get(key) is not None:
                kw[key] = _loose_instant(rec[key], f"line {n}: {key}")
        for key in ("metadata", "extractor"):
            if rec.get(key) is not None:
                kw[key] = rec[key]
        if rec.get("recorded_at") is not None:
            at = _loose_instant(rec["recorded_at"], f"line {n}: recorded_at")
            past.append((to_us(at), n, {**kw, "recorded_at": at}))
        else:
            memory.assertion(kw.pop("subject"), kw.pop("predicate"), kw.pop("obj"), **kw)
            now.append({**kw, "subject": rec.get("subject"), "predicate": rec.get("predicate"),
                        "obj": rec.get("object")})  # fmt: skip
    bar = _bar(len(past) + len(now), "import", progress)
    try:
        for _, n, kw in sorted(past, key=lambda p: (p[0], p[1])):
            try:
                memory.import_fact(kw.pop("subject"), kw.pop("predicate"), kw.pop("obj"), **kw)
            except InvalidInput as exc:
                raise type(exc)(f"line {n}: {exc}") from None
            bar.update()
        if now:
            memory.remember_many(now)
            bar.update(len(now))
    finally:
        bar.close()
    return {"history": len(past), "remembered": len(now)}


def _fact_lines(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {n}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise InvalidInput(f"line {n}: each line is a JSON object")
        yield n, rec


def _loose_instant(value: object, what: str) -> datetime:
    """ISO 8601 date or time; without an offset, UTC."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what}: expected an ISO 8601 string")
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"{what}: {value!r} is not an ISO 8601 instant") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def is_dump(first_line: str) -> bool:
    """Whether a file's first line is a chronomem dump header (else: plain facts)."""
    try:
        rec = json.loads(first_line)
    except json.JSONDecodeError:
        return False
    return isinstance(rec, dict) and rec.get("type") == "chronomem"


# -- mem0 ---------------------------------------------------------------------------------
def _mem0_time(value: object, what: str) -> int:
    """mem0 stamps ``datetime.now(tz).isoformat()``; older rows may be naive (read as UTC)."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str) and value.strip():
        try:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"{what}: {value!r} is not an ISO 8601 time") from None
    else:
        raise InvalidInput(f"{what}: no time")
    return to_us(dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc), what)


def mem0_events(path: str) -> list[dict[str, Any]]:
    """The rows of a mem0 history database, oldest first. Reads both mem0 layouts:
    ``old_memory``/``new_memory``/``created_at``/``updated_at`` and the older
    ``prev_value``/``new_value``/``timestamp``."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
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
    counts per event kind."""
    events = mem0_events(path)
    counts = {"ADD": 0, "UPDATE": 0, "DELETE": 0}
    last: dict[str, int] = {}
    bar = _bar(len(events), "mem0", progress)
    try:
        for e in events:
            mid = e["memory_id"]
            at = max(e["at"], last.get(mid, e["at"] - 1) + 1)  # same-instant events: in order
            last[mid] = at
            if e["event"] == "DELETE":
                ops: list[Any] = [EndOp(mid, MEM0_PREDICATE, None, at, cardinality=Cardinality.ONE)]
            else:
                text = e["text"]
                if not isinstance(text, str) or not text.strip():
                    raise InvalidInput(f"mem0 history row {e['history_id']!r}: no memory text")
                meta = {
                    k: e[k] for k in ("history_id", "event", "actor_id", "role") if e[k] is not None
                }
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
            memory.apply(ops, recorded_at=from_us(at))
            counts[e["event"]] += 1
            bar.update()
    finally:
        bar.close()
    return {k.lower(): v for k, v in counts.items()}
