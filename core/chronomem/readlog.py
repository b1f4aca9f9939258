"""The served-read log: what memory handed an agent, and what we believe about it now.

Opt-in per store: ``Memory(..., read_log=True)`` (every ``scoped()`` view of it
shares the switch). Each ``facts``, ``search`` and ``recall`` then records one
read (``cm_reads``) and the items it returned (``cm_read_items``): the read's
transaction-clock instant, its scope, its arguments with the valid instant
resolved (a read "now" is logged at the instant it ran), the returned version
(or episode) ids with their scores and states, and the caller tag in effect.

The caller tag is a context variable, so an adapter sets it around a framework
call without threading anything through the store::

    with memory.read_tag(run="r-17", thread="t-1", checkpoint="c-4"):
        memory.search("where does alice live")

Nested tags merge (inner keys win). ``run`` is indexed: ``memory.reads(run=...)``.

Replay: a read is a pure function of its arguments and its two instants,
because versions are immutable and every write is stamped after the instant
of any read it could have changed (``writer.stamp``). ``memory.replay(read_id)``
re-runs the read with its valid instant and ``known_at`` pinned to its
instant and returns what the original call returned. ``memory.served(run=...)``
answers "what did the agent know": each served item, its state then, and what
happened to it since (ended, corrected, retracted, erased).

Erasure reaches the log: the log never holds a fact's or an episode's text,
only ids; when ``erase``/``erase_subject``/``purge`` deletes a version or an
episode, the items naming it are marked erased and the text arguments of every
read that served it (its query, subject, object) are blanked. ``purge`` also
deletes the reads made in the purged scopes. Such a read cannot be replayed
(``ErasedRead``).

The instant is the tenant's last transaction time, read inside the read's own
transaction as it commits (an engine ``commit`` listener; no extra transaction
or connection). On SQLite that is the read's snapshot, so the instant is exact.
On PostgreSQL (read committed) it is read after the read's statements: a write
that commits in between is counted before the instant without having been
seen, so its replay would include it; with no concurrent writer (or a writer
serialised with the reads) replay is exact.

Batched writes: a logged read writes nothing. Its entry waits in the store's
pending batch (shared by every scoped view), written in one transaction every
``FLUSH_EVERY`` reads, at the first read ``FLUSH_AFTER_S`` after the oldest
pending one, and before anything that must see it: ``reads``, ``replay``,
``served`` (and ``get_read``), ``erase``/``erase_subject``/``purge`` (written in
the erasing transaction, so erasure reaches them; pending again if it rolls
back), ``close()`` (a store that cannot write them still closes, with a
``RuntimeWarning`` saying how many were lost), and interpreter exit. A batch written after another process erased something it served is
written as erasure leaves it (items marked, text arguments blanked).

Durability: a crash (of the process, or of a PostgreSQL server before the WAL
flush: the batch commits with ``synchronous_commit = off``) can lose the last
unwritten log entries, never a fact and never part of an entry. Another
process (or another ``Memory`` opened on the same database) sees a read once
its batch is written.

When the log is off, a read pays one attribute check; writes are untouched
(erasure always clears the log: it is rare and must reach reads logged by any
process). On: building the entry and one indexed clock lookup in the read's
transaction, plus a share of a batch insert (``benchmarks/readlog.py``).
See ``docs/design.md``."""

from __future__ import annotations

import atexit
import contextlib
import functools
import inspect
import json
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import Connection, bindparam, delete, event, select, update

from . import backends
from . import reads as reads_sql
from .batching import chunks
from .errors import ChronomemError, InvalidInput, NotFound
from .identity import require_id
from .model import CloseReason, Episode, Fact, State
from .prepared import Prepared
from .schema import episodes as episodes_table
from .schema import read_items, read_log, txclock, versions
from .scope import Scope
from .statemachine import new_id
from .timeutil import from_us, to_us
from .writer import stamp

if TYPE_CHECKING:
    from .engine import Engine
    from .memory import Memory

F = TypeVar("F", bound=Callable[..., Any])

TIME_ARGS = ("valid_at", "known_at", "as_of")
# arguments that may carry a fact's text: blanked when the read served something erased
TEXT_ARGS = ("query", "subject", "obj", "subject_prefix", "subjects")

_tag: ContextVar[Mapping[str, str] | None] = ContextVar("chronomem_read_tag", default=None)
# set while a logged read runs the reads it is made of (recall runs search and facts):
# the inner reads add their items to the outer read instead of logging themselves
_collect: ContextVar[list[tuple[str, str, float | None, str | None]] | None] = ContextVar(
    "chronomem_read_collect", default=None
)
# set while a logged read runs: its tenant, and the clock readings its transactions took
_clock: ContextVar[tuple[str, list[int]] | None] = ContextVar("chronomem_read_clock", default=None)


class ErasedRead(ChronomemError, LookupError):
    """The read served something since erased: it can no longer be replayed."""


@dataclass(frozen=True)
class ReadItem:
    """One thing a read handed out: a fact version (``kind='v'``) or an episode (``'e'``)."""

    kind: str
    id: str
    score: float | None
    state: str | None  # the version's state as served (None for an episode)
    erased: bool


@dataclass(frozen=True)
class Read:
    """One logged read."""

    id: str
    at: datetime  # its transaction-clock instant
    op: str  # facts | search | recall
    scope: dict[str, str]
    args: dict[str, Any]  # as called, with the valid instant resolved
    items: list[ReadItem]
    tag: dict[str, str]
    erased: bool  # it served something later erased; its text arguments are blanked


@dataclass(frozen=True)
class ServedItem:
    """One item a read served, then and now."""

    read_id: str
    at: datetime
    kind: str
    id: str
    score: float | None
    then: Fact | Episode | None  # as served (None: erased since)
    state_then: str | None
    change: str  # unchanged | ended | corrected | retracted | erased
    now: Fact | None = None  # the fact's value believed now, when it changed (corrected)


@dataclass
class Served:
    """What the agent knew: every item served to the selected reads."""

    reads: list[Read]
    items: list[ServedItem] = field(default_factory=list)

    def changed(self) -> list[ServedItem]:
        return [i for i in self.items if i.change != "unchanged"]

    def text(self) -> str:
        lines = []
        for it in self.items:
            when = it.at.isoformat()
            if it.then is None:
                what = f"[{it.kind} {it.id}] (erased)"
            elif isinstance(it.then, Fact):
                f = it.then
                what = f"{f.subject} {f.predicate} {f.object} ({it.state_then})"
            else:
                what = f"episode {it.then.id}: {it.then.text}"
            note = it.change
            if it.now is not None and it.change == "corrected":
                note = f"corrected to {it.now.object!r}"
            lines.append(f"{when} read {it.read_id}: {what} -> {note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


# -- the caller tag ---------------------------------------------------------------------------
@contextmanager
def read_tag(**tag: str | None) -> Iterator[None]:
    """Tag every read logged inside the block (``run``, ``thread``, ``checkpoint``, ...)."""
    merged = dict(_tag.get() or {})
    for key, value in tag.items():
        if value is None:
            merged.pop(key, None)
        elif not isinstance(value, str):
            raise InvalidInput(f"read tag {key!r} must be a str, not {type(value).__name__}")
        else:
            merged[key] = value
    token = _tag.set(merged)
    try:
        yield
    finally:
        _tag.reset(token)


def current_tag() -> dict[str, str]:
    return dict(_tag.get() or {})


# -- logging the three reads ------------------------------------------------------------------
def logged(op: str) -> Callable[[F], F]:
    """Decorate ``Memory.facts``/``search``/``recall``: with the log off, one check."""

    def deco(fn: F) -> F:
        sig = _Signature(inspect.signature(fn))

        @functools.wraps(fn)
        def wrapper(self: Memory, *args: Any, **kwargs: Any) -> Any:
            if not self._engine.read_log:
                return fn(self, *args, **kwargs)
            return _serve(self, op, fn, sig, args, kwargs)

        return cast(F, wrapper)

    return deco


def _items(op: str, out: Any) -> list[tuple[str, str, float | None, str | None]]:
    if op == "facts":
        return [("v", f.version_id, None, f.state.value) for f in out]
    found: list[tuple[str, str, float | None, str | None]] = []
    for h in out:
        if h.fact is not None:
            found.append(("v", h.fact.version_id, float(h.score), h.fact.state.value))
        elif h.episode is not None:
            found.append(("e", h.episode.id, float(h.score), None))
    return found


class _Signature:
    """A read's signature, with what binding a call needs worked out once:
    ``inspect.Signature.bind`` cost a fifth of a logged point read."""

    def __init__(self, sig: inspect.Signature):
        self.sig = sig
        params = list(sig.parameters.values())[1:]  # after self
        self.positional = tuple(
            p.name
            for p in params
            if p.kind
            in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        )
        self.names = frozenset(p.name for p in params)
        self.defaults = {p.name: p.default for p in params if p.default is not p.empty}
        self.simple = all(
            p.kind is not p.VAR_POSITIONAL and p.kind is not p.VAR_KEYWORD for p in params
        )

    def arguments(
        self, mem: Memory, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Every argument of the call by name, defaults included (None: the call
        does not bind, and raises its own error)."""
        if self.simple and len(args) <= len(self.positional):
            given = dict(zip(self.positional, args, strict=False))
            if not (given.keys() & kwargs.keys()) and kwargs.keys() <= self.names:
                call = {**self.defaults, **given, **kwargs}
                if len(call) == len(self.names):  # every parameter without a default given
                    return call
        try:
            bound = self.sig.bind(mem, *args, **kwargs)
        except TypeError:
            return None
        bound.apply_defaults()
        out = dict(bound.arguments)
        out.pop("self", None)
        return out


def _serve(
    mem: Memory,
    op: str,
    fn: Callable[..., Any],
    sig: _Signature,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    outer = _collect.get()
    if outer is not None:  # part of a logged read (recall): it records the items
        out = fn(mem, *args, **kwargs)
        if op != "recall":
            outer.extend(_items(op, out))
        return out
    call = sig.arguments(mem, args, kwargs)
    if call is None:
        return fn(mem, *args, **kwargs)  # the call's own error
    if call.get("valid_at") is None and call.get("as_of") is None:
        call["valid_at"] = mem.now()  # what the read would use: logged, so replay pins it
    collected: list[tuple[str, str, float | None, str | None]] = []
    instants: list[int] = []
    _pending(mem._engine)  # the clock listener is on the engine before the read begins
    token = _collect.set(collected)
    clock = _clock.set((mem.scope.tenant, instants))
    try:
        out = fn(mem, **call)
    finally:
        _clock.reset(clock)
        _collect.reset(token)
    items = collected if op == "recall" else _items(op, out)
    at = max(instants) if instants else _read_instant(mem)
    _record(mem, op, _encode(call), items, at)
    return out


def _encode(call: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in call.items():
        if key in TIME_ARGS:
            out[key] = None if value is None else to_us(value, key)
        elif key == "states":
            out[key] = None if value is None else sorted(_state_names(value))
        elif isinstance(value, tuple | list):
            out[key] = list(value)
        else:
            out[key] = value
    return out


def _state_names(value: Any) -> list[str]:
    from .model import parse_states

    return [s.value for s in parse_states(value)]


def _decode(args: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(args)
    for key in TIME_ARGS:
        if out.get(key) is not None:
            out[key] = from_us(out[key])
    return out


# The tenant's clock: compiled once per dialect and run on the driver's cursor
# (``chronomem.prepared``). It runs in every logged read, where SQLAlchemy's
# execution path cost as much as a point read's own statement.
_INSTANT = Prepared(select(txclock.c.last_us).where(txclock.c.tenant == bindparam("tenant")))


def _instant(conn: Connection, tenant: str, now: int) -> int:
    """A tenant that never wrote has no clock row: it gets one here (once), so every
    later write is stamped after this read's instant."""
    at = _INSTANT.scalar(conn, {"tenant": tenant})
    if at is None:
        return stamp(conn, tenant, now)
    return int(at)


def instant_hook(conn: Connection) -> None:
    """The read's transaction-clock instant: the tenant's last transaction time,
    read in the read's own snapshot as it ends — an engine ``commit`` listener,
    and ``Backend.point_read``'s ``on_end`` for a point read whose snapshot
    SQLAlchemy does not see (the latest of the read's snapshots counts). Every
    write the read saw is stamped at or before it; every later write is stamped
    after it (``writer.stamp``: strictly after the last). On SQLite the read's
    snapshot holds the clock too, so the instant is exactly the read's; on
    PostgreSQL (read committed) it is read after the read's statements. The clock
    is not ticked (the search mirrors, which follow the clock, do not resync after
    a read) and the read writes nothing."""
    want = _clock.get()
    if want is not None:
        at = _INSTANT.scalar(conn, {"tenant": want[0]})
        if at is not None:
            want[1].append(int(at))


def _read_instant(mem: Memory) -> int:
    """The instant of a read whose transactions did not give one (a tenant that
    never wrote has no clock row yet: it gets one, once)."""
    t = mem.scope.tenant
    backend = mem._engine.backend
    with backend.read() as conn:
        at = _INSTANT.scalar(conn, {"tenant": t})
    if at is not None:
        return int(at)
    with backend.write() as conn:
        return _instant(conn, t, mem._engine.tx_us())


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


def _pending(engine: Engine) -> _Pending:
    p = engine.read_log_pending
    if p is None:
        with _setup:
            p = engine.read_log_pending
            if p is None:
                event.listen(engine.backend.engine, "commit", instant_hook)
                p = engine.read_log_pending = _Pending(engine)
                _stores.add(p)
    return cast(_Pending, p)


def _record(
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
    p = _pending(mem._engine)
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


def _flush_into(conn: Connection) -> None:
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


# -- reading the log --------------------------------------------------------------------------
def reads(
    mem: Memory,
    *,
    run: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    op: str | None = None,
    tag: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> list[Read]:
    """The reads made in this scope and the scopes under it, oldest first."""
    mem._engine.check_open()
    flush(mem)
    t = mem.scope.tenant
    q = select(read_log).where(reads_sql.scope_within(read_log, mem.scope))
    if run is not None:
        q = q.where(read_log.c.run == run)
    if since is not None:
        q = q.where(read_log.c.at_us >= to_us(since, "since"))
    if until is not None:
        q = q.where(read_log.c.at_us <= to_us(until, "until"))
    if op is not None:
        q = q.where(read_log.c.op == op)
    q = q.order_by(read_log.c.at_us, read_log.c.id)
    with mem._engine.backend.read() as conn:
        rows = conn.execute(q).mappings().all()
        wanted = dict(tag or {})
        rows = [r for r in rows if _tag_matches(r["tag"], wanted)]
        if limit is not None:
            rows = rows[:limit]
        items = _items_of(conn, t, [r["id"] for r in rows])
    return [_to_read(r, items.get(r["id"], [])) for r in rows]


def _tag_matches(raw: str, wanted: Mapping[str, str]) -> bool:
    if not wanted:
        return True
    have = json.loads(raw)
    return all(have.get(k) == v for k, v in wanted.items())


def _items_of(conn: Connection, tenant: str, ids: Sequence[str]) -> dict[str, list[ReadItem]]:
    out: dict[str, list[ReadItem]] = {}
    for chunk in chunks(ids):
        rows = conn.execute(
            select(read_items)
            .where(read_items.c.tenant == tenant, read_items.c.read_id.in_(chunk))
            .order_by(read_items.c.read_id, read_items.c.pos)
        ).mappings()
        for r in rows:
            out.setdefault(r["read_id"], []).append(
                ReadItem(r["kind"], r["item_id"], r["score"], r["state"], bool(r["erased"]))
            )
    return out


def _to_read(row: Mapping[Any, Any], items: list[ReadItem]) -> Read:
    scope = reads_sql.scope_of(row)
    return Read(
        id=row["id"],
        at=from_us(row["at_us"]),
        op=row["op"],
        scope=scope,
        args=_decode(json.loads(row["args"])),
        items=items,
        tag=json.loads(row["tag"]),
        erased=bool(row["erased"]),
    )


def get_read(mem: Memory, read_id: str) -> Read:
    mem._engine.check_open()
    flush(mem)
    rid = require_id(read_id, "read_id")
    with mem._engine.backend.read() as conn:
        row = (
            conn.execute(
                select(read_log).where(
                    reads_sql.scope_within(read_log, mem.scope), read_log.c.id == rid
                )
            )
            .mappings()
            .first()
        )
        if row is None:
            raise NotFound(f"no read {rid!r} in this scope")
        items = _items_of(conn, mem.scope.tenant, [rid])
    return _to_read(row, items.get(rid, []))


# -- replay -----------------------------------------------------------------------------------
def replay(mem: Memory, read_id: str | Read, *, rerun: bool = False) -> Any:
    """What a logged read returned, as of its instant: the same facts, hits or block.

    A ``facts`` read is re-run with its valid instant and ``known_at`` pinned to
    its instant (a pure function of both: exact). A ``search`` or ``recall``
    is rebuilt from what it served: each served version (immutable) is read
    back by id, checked to be visible at the read's instants, and returned
    with its logged score, in the logged order (``recall`` renders its block
    again). ``rerun=True`` re-executes the query as of the instant instead:
    the same temporal filter, but lexical ranking statistics (SQLite FTS5's
    bm25) count texts written later, so ranks and scores may differ."""
    entry = read_id if isinstance(read_id, Read) else get_read(mem, read_id)
    if entry.erased:
        raise ErasedRead(f"read {entry.id} served something since erased: it cannot be replayed")
    view = type(mem)(
        scope=Scope(
            entry.scope["tenant"],
            entry.scope.get("user"),
            entry.scope.get("agent"),
            entry.scope.get("session"),
        ),
        _engine=mem._engine,
    )
    call = dict(entry.args)
    if call.get("as_of") is None and call.get("known_at") is None:
        call["known_at"] = entry.at
    if entry.op != "facts" and not rerun:
        return _rebuild(view, entry, call)
    fn = getattr(type(view), entry.op).__wrapped__
    token = _collect.set([])  # the replay is not itself a served read
    try:
        return fn(view, **call)
    finally:
        _collect.reset(token)


def _rebuild(view: Memory, entry: Read, call: Mapping[str, Any]) -> Any:
    from dataclasses import replace

    from .render import render as render_block
    from .retrieval import SearchResult
    from .retrieval.search import Hit

    v = to_us(call["valid_at"] if call.get("valid_at") is not None else call["as_of"], "at")
    k = to_us(call["known_at"] if call.get("known_at") is not None else call["as_of"], "at")
    t = view.scope.tenant
    with view._engine.backend.read() as conn:
        rows = _by_id(conn, t, versions, {i.id for i in entry.items if i.kind == "v"})
        eps = _by_id(conn, t, episodes_table, {i.id for i in entry.items if i.kind == "e"})
        src = reads_sql.sources_of(conn, t, (r["fact_id"] for r in rows.values()))
    hits: list[Hit] = []
    for it in entry.items:
        if it.kind == "e":
            ep = eps.get(it.id)
            if ep is None or ep["recorded_at"] > k:
                raise ErasedRead(f"read {entry.id}: episode {it.id} is not in the store as served")
            hits.append(Hit(None, reads_sql.to_episode(ep), it.score or 0.0, {"replayed": True}))
            continue
        row = rows.get(it.id)
        if row is None or row["recorded_at"] > k:
            raise ErasedRead(f"read {entry.id}: version {it.id} is not in the store as served")
        fact = reads_sql.to_fact(row, v, src.get(row["fact_id"], ()))
        if it.state:
            fact = replace(fact, state=State(it.state))
        hits.append(Hit(fact, None, it.score or 0.0, {"replayed": True}))
    if entry.op == "search":
        return SearchResult(hits)
    # recall: its search's hits (live facts, episodes), then the history it added (ended)
    live = [h.fact for h in hits if h.fact is not None and h.fact.state is State.LIVE]
    history = [h.fact for h in hits if h.fact is not None and h.fact.state is not State.LIVE]
    return render_block(live, history, [h.episode for h in hits if h.episode is not None])


# -- what the agent knew ----------------------------------------------------------------------
def served(
    mem: Memory,
    *,
    run: str | None = None,
    read_ids: Sequence[str] | None = None,
    since: datetime | None = None,
    tag: Mapping[str, str] | None = None,
) -> Served:
    """Each item served to the selected reads, its state then and what changed since."""
    if read_ids is not None:
        entries = [get_read(mem, r) for r in read_ids]
    else:
        entries = reads(mem, run=run, since=since, tag=tag)
    report = Served(entries)
    now = mem._engine.now_us()
    t = mem.scope.tenant
    vids = {i.id for e in entries for i in e.items if i.kind == "v" and not i.erased}
    eids = {i.id for e in entries for i in e.items if i.kind == "e" and not i.erased}
    with mem._engine.backend.read() as conn:
        rows = _by_id(conn, t, versions, vids)
        successors = _by_id(
            conn, t, versions, {r["superseded_by"] for r in rows.values() if r["superseded_by"]}
        )
        eps = _by_id(conn, t, episodes_table, eids)
        replacements = {
            vid: _correction_of(conn, t, r)
            for vid, r in rows.items()
            if r["closed_reason"] == CloseReason.RETRACTED
        }
    for e in entries:
        v_then = to_us(e.args["valid_at"] if e.args.get("valid_at") else e.args["as_of"], "at")
        for it in e.items:
            if it.kind == "e":
                ep = eps.get(it.id)
                report.items.append(
                    ServedItem(
                        e.id,
                        e.at,
                        "e",
                        it.id,
                        it.score,
                        reads_sql.to_episode(ep) if ep is not None else None,
                        None,
                        "unchanged" if ep is not None else "erased",
                    )
                )
                continue
            row = rows.get(it.id)
            if row is None:
                report.items.append(
                    ServedItem(e.id, e.at, "v", it.id, it.score, None, it.state, "erased")
                )
                continue
            then = reads_sql.to_fact(row, v_then)
            then = _as_served(then, it.state)
            change, current = _change(row, successors, now, it.state)
            if change == "retracted" and replacements.get(it.id) is not None:
                change, current = "corrected", reads_sql.to_fact(replacements[it.id], now)
            report.items.append(
                ServedItem(e.id, e.at, "v", it.id, it.score, then, it.state, change, current)
            )
    return report


def _as_served(f: Fact, state: str | None) -> Fact:
    from dataclasses import replace

    return replace(f, state=State(state)) if state else f


def _change(
    row: Mapping[str, Any], successors: Mapping[str, Any], now: int, state_then: str | None
) -> tuple[str, Fact | None]:
    if row["superseded_at"] is not None:
        reason = row["closed_reason"]
        if reason == CloseReason.RETRACTED:
            return "retracted", None
        nxt = successors.get(row["superseded_by"] or "")
        if reason == CloseReason.ENDED:
            return "ended", reads_sql.to_fact(nxt, now) if nxt is not None else None
        current = reads_sql.to_fact(nxt, now) if nxt is not None else None
        if current is not None and current.object_key == row["object_key"]:
            # the same value rewritten (a changed validity): ended if it no longer holds
            return ("ended" if current.state != State.LIVE else "unchanged"), current
        return "corrected", current
    if state_then == State.LIVE.value and reads_sql.state_of(row, now) == State.ENDED:
        return "ended", None
    return "unchanged", None


def _correction_of(conn: Connection, tenant: str, row: Mapping[str, Any]) -> Any:
    """``correct`` retracts a version and writes the right value over the same valid
    interval in the same transaction: that version, if this retraction was one."""
    return (
        conn.execute(
            select(versions).where(
                versions.c.tenant == tenant,
                versions.c.subject_hash == row["subject_hash"],
                versions.c.predicate == row["predicate"],
                versions.c.recorded_at == row["superseded_at"],
                versions.c.valid_from == row["valid_from"],
                versions.c.id != row["id"],
            )
        )
        .mappings()
        .first()
    )


def _by_id(
    conn: Connection, tenant: str, table: Any, ids: set[str], *, columns: Sequence[Any] = ()
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    ordered = sorted(ids)
    for chunk in chunks(ordered):
        for r in conn.execute(
            select(*(columns or (table,))).where(table.c.tenant == tenant, table.c.id.in_(chunk))
        ).mappings():
            out[r["id"]] = r
    return out


# -- erasure ----------------------------------------------------------------------------------
def forget(
    conn: Connection,
    tenant: str,
    *,
    version_ids: Sequence[str] = (),
    episode_ids: Sequence[str] = (),
) -> None:
    """Erasure reaches the log: mark the items naming erased versions/episodes
    erased, and blank the text arguments of every read that served one. The
    store's pending entries are written first, in the erasing transaction."""
    _flush_into(conn)
    touched: set[str] = set()
    for kind, ids in (("v", list(version_ids)), ("e", list(episode_ids))):
        for chunk in chunks(ids):
            where = (
                read_items.c.tenant == tenant,
                read_items.c.kind == kind,
                read_items.c.item_id.in_(chunk),
            )
            touched.update(conn.execute(select(read_items.c.read_id).where(*where)).scalars())
            conn.execute(update(read_items).where(*where).values(erased=1))
    ordered = sorted(touched)
    for chunk in chunks(ordered):
        rows = conn.execute(
            select(read_log.c.id, read_log.c.args).where(
                read_log.c.tenant == tenant, read_log.c.id.in_(chunk)
            )
        ).all()
        for rid, raw in rows:
            args = json.loads(raw)
            for key in TEXT_ARGS:
                if args.get(key) is not None:
                    args[key] = None
            conn.execute(
                update(read_log)
                .where(read_log.c.tenant == tenant, read_log.c.id == rid)
                .values(erased=1, args=json.dumps(args, sort_keys=True))
            )


def forget_scope(conn: Connection, scope: Scope) -> None:
    """``purge``: the reads made in this scope and the scopes under it go too."""
    _flush_into(conn)
    ids = list(
        conn.execute(select(read_log.c.id).where(reads_sql.scope_within(read_log, scope))).scalars()
    )
    for chunk in chunks(ids):
        conn.execute(
            delete(read_items).where(
                read_items.c.tenant == scope.tenant, read_items.c.read_id.in_(chunk)
            )
        )
        conn.execute(
            delete(read_log).where(read_log.c.tenant == scope.tenant, read_log.c.id.in_(chunk))
        )
