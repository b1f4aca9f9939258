"""Batched writes of the log.

A logged read writes nothing. Its entry waits in the store's
pending batch (shared by every scoped view), written in one transaction every
``FLUSH_EVERY`` reads, at the first read ``FLUSH_AFTER_S`` after the oldest
pending one, and before anything that must see it: ``reads``, ``replay``,
``served`` (and ``get_read``), ``erase``/``erase_subject``/``purge`` (written in
the erasing transaction, so erasure reaches them; pending again if it rolls
back), ``close()`` (a store that cannot write them still closes, with a
``RuntimeWarning`` saying how many were lost), and interpreter exit. A batch written after another process erased
something it served is written as erasure leaves it (items marked, text arguments blanked).
A batch and another process's erase of the same tenant serialise
(``Backend.lock_read_log``): either the batch commits first and the erase's pass
over the log marks it, or the batch checks what is stored after the erase
committed.

Durability: a crash (of the process, or of a PostgreSQL server before the WAL
flush: the batch commits with ``synchronous_commit = off``) can lose the last
unwritten log entries, never a fact and never part of an entry. Another
process (or another ``Memory`` opened on the same database) sees a read once
its batch is written."""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import threading
import time
import warnings
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Connection, bindparam, event, select

from .. import backends
from ..batching import chunks
from ..schema import episodes as episodes_table
from ..schema import read_items, read_log, versions
from ..statemachine import new_id
from .args import TEXT_ARGS
from .instant import instant_hook
from .tags import current_tag

if TYPE_CHECKING:
    from ..engine import Engine
    from ..memory import Memory


@dataclass
class _Entry:
    """A logged read not yet written (``_Pending``)."""

    id: str
    tenant: str
    scope: dict[str, Any]
    at_us: int
    op: str
    args: dict[str, Any]
    tag: dict[str, str]
    items: list[tuple[str, str, float | None, str | None]]


class _Pending:
    """A store's logged reads not yet written: written in one transaction every
    ``FLUSH_EVERY`` reads, at the first read ``FLUSH_AFTER_S`` after the oldest,
    and before anything reads the log or erases (``flush``)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.entries: list[_Entry] = []
        self.oldest = 0.0
        self.lock = threading.Lock()  # guards ``entries``
        self.writing = threading.Lock()  # held while a batch is written


FLUSH_EVERY = 64
FLUSH_AFTER_S = 1.0
_stores: weakref.WeakSet[_Pending] = weakref.WeakSet()  # flushed at interpreter exit
_setup = threading.Lock()


def pending(engine: Engine) -> _Pending:
    p = engine.read_log_pending
    if p is None:
        with _setup:
            p = engine.read_log_pending
            if p is None:
                event.listen(engine.backend.engine, "commit", instant_hook)
                p = engine.read_log_pending = _Pending(engine)
                _stores.add(p)
    return cast(_Pending, p)


def record(
    mem: Memory,
    op: str,
    args: dict[str, Any],
    items: list[tuple[str, str, float | None, str | None]],
    at: int,
) -> str:
    scope = mem.scope
    entry = _Entry(
        new_id(), scope.tenant, dict(scope.columns()), at, op, args, current_tag(), items
    )
    p = pending(mem._engine)
    with p.lock:
        if not p.entries:
            p.oldest = time.monotonic()
        p.entries.append(entry)
        due = len(p.entries) >= FLUSH_EVERY or time.monotonic() - p.oldest >= FLUSH_AFTER_S
    if due:
        _flush(p)
    return entry.id


def flush(mem: Memory) -> None:
    """Write the store's pending log entries now (``reads``, ``replay``,
    ``served``, ``close`` and erasure call it first)."""
    p = cast("_Pending | None", mem._engine.read_log_pending)
    if p is not None:
        _flush(p)


def close(mem: Memory) -> None:
    """``Memory.close``: write the pending entries. A store that cannot write them
    (its database gone) still closes: the entries are dropped with a warning."""
    p = cast("_Pending | None", mem._engine.read_log_pending)
    if p is None:
        return
    try:
        _flush(p)
    except Exception as exc:
        lost = len(_take(p))
        warnings.warn(
            f"chronomem: {lost} served-read log entries were not written at close: {exc}",
            RuntimeWarning,
            stacklevel=3,
        )


def _take(p: _Pending) -> list[_Entry]:
    with p.lock:
        taken, p.entries = p.entries, []
    return taken


def _flush(p: _Pending) -> None:
    with p.writing:  # a concurrent flush finishes first: its reads are visible after this
        taken = _take(p)
        if not taken or p.engine.closed:
            return
        try:
            with p.engine.backend.write() as conn:
                # a log entry need not wait for the WAL flush (PostgreSQL): a server crash
                # can lose the last moments' entries (never a fact, never a torn entry)
                backends.of(conn).relax_durability(conn)
                # an erase of these tenants' items waits for this batch, or this batch
                # for the erase (issue #31 item 7): see Backend.lock_read_log
                tenants = sorted({e.tenant for e in taken})
                backends.of(conn).lock_read_log(conn, tenants, erasing=False)
                _write(conn, taken)
        except BaseException:
            with p.lock:  # not written: kept, ahead of the reads made since
                p.entries[:0] = taken
            raise


def _write(conn: Connection, entries: list[_Entry]) -> None:
    """Insert the entries. One erased meanwhile (by another process, or between
    the read and this write) is written as erasure leaves it: items marked,
    text arguments blanked."""
    gone = _missing(conn, entries)
    reads_rows: list[dict[str, Any]] = []
    item_rows: list[dict[str, Any]] = []
    for e in entries:
        args = e.args
        erased = any((e.tenant, kind, item) in gone for kind, item, _, _ in e.items)
        if erased:
            args = {k: (None if k in TEXT_ARGS else v) for k, v in args.items()}
        row = dict(e.scope)
        row.update(
            tenant=e.tenant,
            id=e.id,
            at_us=e.at_us,
            op=e.op,
            args=json.dumps(args, sort_keys=True, ensure_ascii=False),
            run=e.tag.get("run"),
            tag=json.dumps(e.tag, sort_keys=True, ensure_ascii=False),
            erased=int(erased),
        )
        reads_rows.append(row)
        item_rows.extend(
            {
                "tenant": e.tenant,
                "read_id": e.id,
                "pos": i,
                "kind": kind,
                "item_id": item,
                "score": score,
                "state": state,
                "erased": int((e.tenant, kind, item) in gone),
            }
            for i, (kind, item, score, state) in enumerate(e.items)
        )
    # the backend's bulk insert (SQLAlchemy built a parameter dict per row)
    backend = backends.of(conn)
    backend.insert_rows(conn, read_log, reads_rows)
    backend.insert_rows(conn, read_items, item_rows)


def flush_into(conn: Connection) -> None:
    """Write the pending entries of the store ``conn`` belongs to in its transaction.
    Not under ``_Pending.writing``: the erasing transaction already holds the
    database's write lock, which a batch being written waits for (and a batch
    written after the erase finds its erased items gone: ``_missing``)."""
    for p in list(_stores):
        if p.engine.backend.engine is conn.engine:
            taken = _take(p)
            if taken:
                _write(conn, taken)
                # an erase that rolls back leaves them pending again, not lost
                event.listen(conn, "rollback", functools.partial(_requeue, p, taken), once=True)


def _requeue(p: _Pending, taken: list[_Entry], conn: Connection) -> None:
    with p.lock:
        p.entries[:0] = taken


@atexit.register
def _flush_all() -> None:
    """At interpreter exit, write what the stores left open still hold."""
    for p in list(_stores):
        with contextlib.suppress(Exception):  # exiting: a store that cannot write loses it
            _flush(p)


# which of a batch's served ids are still stored (built once: it runs in every flush)
_PRESENT = {
    kind: select(table.c.id).where(
        table.c.tenant == bindparam("tenant"), table.c.id.in_(bindparam("ids", expanding=True))
    )
    for kind, table in (("v", versions), ("e", episodes_table))
}


def _missing(conn: Connection, entries: list[_Entry]) -> set[tuple[str, str, str]]:
    """The served (tenant, kind, id)s no longer in the store."""
    wanted: dict[tuple[str, str], set[str]] = {}
    for e in entries:
        for kind, item, _, _ in e.items:
            wanted.setdefault((e.tenant, kind), set()).add(item)
    gone: set[tuple[str, str, str]] = set()
    for (tenant, kind), ids in wanted.items():
        present: set[str] = set()
        for chunk in chunks(sorted(ids)):
            present.update(conn.execute(_PRESENT[kind], {"tenant": tenant, "ids": chunk}).scalars())
        gone.update((tenant, kind, i) for i in ids - present)
    return gone
