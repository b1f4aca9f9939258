"""Import of a dump: every record parsed and checked as hostile input
(``dump_rows``), the dump as a whole checked (``dump_checks``), then the rows
written unchanged in one transaction — or nothing at all."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from ..batching import chunks
from ..errors import InvalidInput, ScopeError
from ..schema import episodes, txclock, versions
from ..schema import predicates as predicates_table
from ..writer import stamp
from . import dump_checks
from .common import CHUNK, FORMAT, bar, json_objects
from .dump_rows import ROWS, scope_of

if TYPE_CHECKING:
    from ..memory import Memory


def read_jsonl(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    what = "a JSON object with a 'type'"
    for n, rec in json_objects(lines, what):
        if not isinstance(rec.get("type"), str):
            raise InvalidInput(f"line {n}: each line is {what}")
        yield n, rec


def _header_scope(rec: dict[str, Any], n: int) -> None:
    tenant = rec.get("tenant")
    if not isinstance(tenant, str):
        raise InvalidInput(f"line {n}: the header names no tenant")
    scope_of({"type": "chronomem", "scope": rec.get("scope")}, n, tenant)


def import_records(
    memory: Memory, records: Iterable[tuple[int, dict[str, Any]]], *, progress: bool = False
) -> dict[str, int]:
    """Write a dump's records into ``memory``'s tenant, unchanged (ids, both clocks,
    scopes), in one transaction. The tenant must hold no facts, episodes or
    registered predicates yet (``InvalidInput`` otherwise); ``memory`` must be the
    tenant itself, not a user/agent/session scope of it (``ScopeError``), since the
    records carry their own scopes. The dump is checked whole first
    (``dump_checks``): a refused dump writes nothing."""
    memory._engine.check_open()
    scope = memory.scope
    if scope.user or scope.agent or scope.session:
        raise ScopeError(
            "import into the tenant, not a user/agent/session scope: each record carries its scope"
        )
    t = scope.tenant
    sh = memory._engine
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in ROWS}
    header: dict[str, Any] | None = None
    for n, rec in records:
        kind = rec["type"]
        if kind == "chronomem":
            if header is not None:
                raise InvalidInput(f"line {n}: a second dump header")
            if rec.get("format") != FORMAT:
                raise InvalidInput(f"line {n}: unsupported dump format {rec.get('format')!r}")
            _header_scope(rec, n)
            header = rec
            continue
        if header is None:
            raise InvalidInput(f"line {n}: a chronomem dump starts with its header line")
        if kind not in ROWS:
            raise InvalidInput(f"line {n}: unknown record type {kind!r}")
        rows[kind].append(ROWS[kind][1](rec, n, t))
    if header is None:
        raise InvalidInput("not a chronomem dump: no header line")
    dump_checks.check_counts(header, rows)
    top = scope_of({"type": "chronomem", "scope": header.get("scope")}, 1, t)
    dump_checks.check_scopes(top, rows, header["tenant"])
    dump_checks.check_chains(header, rows)
    dump_checks.check_registry(rows["predicate"])
    latest = dump_checks.check_clock(rows, sh.now_us())
    progress_bar = bar(sum(len(v) for v in rows.values()), "import", progress)
    try:
        _write_rows(memory, rows, latest, progress_bar)
    except IntegrityError as exc:  # e.g. a source link listed twice
        raise InvalidInput(
            f"the dump contradicts itself ({type(exc.orig).__name__}): nothing was imported"
        ) from None
    finally:
        progress_bar.close()
        sh.registry.invalidate(t)
        sh.invalidate_index()
    return {k + "s": len(v) for k, v in rows.items()}


def _write_rows(
    memory: Memory, rows: dict[str, list[dict[str, Any]]], latest: int | None, progress_bar: Any
) -> None:
    """Insert the rows in one transaction, index them, move the tenant's clock."""
    sh = memory._engine
    t = memory.scope.tenant
    with sh.backend.write() as conn:
        _require_empty(conn, t)
        for kind in ("predicate", "episode", "version", "source"):
            table = ROWS[kind][0]
            for chunk in chunks(rows[kind], CHUNK):
                conn.execute(table.insert(), chunk)
                if kind == "version":
                    sh.on_insert(conn, chunk)
                elif kind == "episode":
                    sh.on_episodes(conn, chunk)
                progress_bar.update(len(chunk))
        if latest is not None:
            # later writes must stamp after every imported belief change; every
            # process's search mirror of the tenant reloads (as after an erase)
            tx = stamp(conn, t, sh.now_us(), at=latest)
            conn.execute(
                update(txclock).where(txclock.c.tenant == t).values(erased_us=tx, registry_us=tx)
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
    try:
        return import_records(memory, read_jsonl(lines), progress=progress)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"the dump is not UTF-8 text ({exc.reason})") from None


def is_dump(first_line: str) -> bool:
    """Whether a file's first line is a chronomem dump header (else: plain facts)."""
    try:
        rec = json.loads(first_line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(rec, dict) and rec.get("type") == "chronomem"
