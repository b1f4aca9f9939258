"""``ChronomemStore``: a LangGraph ``BaseStore`` whose memory keeps two clocks."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import dataclasses
import functools
import math
import threading
import weakref
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.base import _ensure_refresh as ensure_refresh
from langgraph.store.base import _validate_namespace_labels as validate_labels

from chronomem import InvalidInput, InvalidTimeSelector, InvalidType, Memory, Receipt, State
from chronomem.model import ALL_STATES, FactRow
from chronomem.ops import AssertOp, PlannedOp
from chronomem.timeutil import Clock, from_us, opt_dt, read_instants, to_us
from chronomem_adapters import Semantic, TimeKeeping
from chronomem_adapters.readtags import tagged
from chronomem_adapters.semantics import VERSIONED
from chronomem_adapters.timeselect import parse_instant

from . import filters, keys, namespace_index, namespaces, pinning, scoring
from .coalescing import Coalescer
from .embedder import LangChainEmbedder
from .erasure import erase_subject
from .errors import ReadOnlyView
from .history import FieldVersion, field_versions
from .indexing import DEFAULT_FIELDS, resolve_paths
from .reading import Reader, to_item
from .records import Marker, Record, group, is_head, live_record
from .writes import PreparedPut, plan_document, plan_put, plan_refresh, prepare


@dataclass(frozen=True)
class Pin:
    """The instants a time-travel view reads at (``None`` valid: the clock's now;
    ``None`` known: everything recorded)."""

    valid_at: int | None
    known_at: int | None


POINT_READ_ITEMS = 8  # a batch with puts reads this many items as rows at most


class _ReadFloor:
    """The latest transaction time this store's writes committed at. Writes take
    effect at their transaction time (ordered by the database as they commit);
    the store reads at ``max(clock, floor)``, so it reads its own writes even
    when the clock is coarse, frozen or stepped back (shared by the store's views)."""

    def __init__(self) -> None:
        self.us = -(2**62)
        self.lock = threading.Lock()

    def note(self, receipt: Receipt) -> None:
        if receipt.recorded_at is not None:
            with self.lock:
                self.us = max(self.us, to_us(receipt.recorded_at, "recorded_at"))

    def at(self, now_us: int) -> int:
        return max(now_us, self.us)

    def at_time(self, now: datetime) -> datetime:
        """``at`` of a clock's datetime, as one: ``now`` itself unless the floor is later."""
        floor = self.us
        return from_us(floor) if to_us(now, "clock()") < floor else now


def _check_key(key: object) -> str:
    if not isinstance(key, str):
        raise InvalidType(f"key must be a str, not {type(key).__name__}")
    return key


def _check_ttl(ttl: object) -> float | None:
    if ttl is None:
        return None
    if not isinstance(ttl, int | float) or isinstance(ttl, bool) or not math.isfinite(ttl):
        raise InvalidType(f"ttl must be a number of minutes or None, not {ttl!r}")
    if ttl <= 0:
        raise InvalidInput(f"ttl must be > 0 minutes, got {ttl}")
    return float(ttl)


def _check_put_namespace(op: PutOp, valid: set[tuple[str, ...]]) -> None:
    """``validate_op_namespace(op)``, skipped for a namespace already in ``valid``
    (then added to it): what passed once passes again."""
    ns = op.namespace
    if type(ns) is not tuple:
        validate_op_namespace(op)
        return
    try:
        if ns in valid:
            return
    except TypeError:  # an unhashable label: validation refuses it
        pass
    validate_op_namespace(op)
    valid.add(ns)


def _check_value(value: object) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if type(value) is not dict and not isinstance(value, Mapping):
        raise InvalidType(f"value must be a dict (or None to delete), not {type(value).__name__}")
    for k in value:
        if type(k) is not str and not isinstance(k, str):  # the common case: no call
            raise InvalidType(f"value keys must be str, got {k!r}")
    return value


class ChronomemStore(BaseStore):
    """A LangGraph store backed by chronomem: every field of every item keeps its
    history on two clocks, so a graph can read what memory held at any instant.

    ``ChronomemStore()`` is in-memory SQLite, ``ChronomemStore("memory.db")`` a file,
    ``ChronomemStore("postgresql+psycopg://…")`` PostgreSQL, ``ChronomemStore(memory)``
    an existing (possibly scoped) ``chronomem.Memory``.

    Beyond ``BaseStore``: ``as_of(...)`` returns a read-only view at past instants,
    ``history(...)`` lists a field's values over time, ``erase(...)`` deletes an
    item physically.

    ``pin_reads="checkpoint"``: a run started from a past checkpoint
    (``checkpoint_id`` in its config: a replay or a fork) reads memory as of that
    checkpoint's creation time; its writes go to the present, tagged
    ``{"langgraph_fork": {"thread_id", "checkpoint_id"}}`` in their metadata. The
    checkpoint's time comes from ``checkpointer=`` or, if not given, the graph's
    own checkpointer. ``read_log=True`` logs every read the store serves
    (``memory.reads()``), tagged with the run, thread and checkpoint."""

    ADAPTER_NAME = "LangGraph store"
    SEMANTICS = VERSIONED | {Semantic.ERASURE}
    AS_OF = TimeKeeping.VIEW
    SEMANTICS_NOTES: ClassVar[dict[Semantic, str]] = {
        Semantic.PROVENANCE: "BaseStore items carry no sources and puts take none",
        Semantic.TIME_IN_OUTPUT: "Item carries created_at/updated_at only; use store.history()",
        Semantic.TRANSCRIPT: "a BaseStore is a document store, not a message log",
    }
    supports_ttl: bool = True
    # index["embed"] as LangChain ``Embeddings`` (None without one), as
    # InMemoryStore/SqliteStore expose it
    embeddings: Embeddings | None = None

    def __init__(
        self,
        memory: Memory | str | None = None,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        clock: Clock | None = None,
        tenant: str | None = None,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        pin_reads: str | None = None,
        checkpointer: Any = None,
        read_log: bool = False,
        score: str = "cosine",
    ) -> None:
        if score not in scoring.SCORE_MODES:
            raise InvalidInput(f"score must be one of {scoring.SCORE_MODES}, not {score!r}")
        pin_mode = pinning.check_mode(pin_reads)
        scope = {"tenant": tenant, "user": user, "agent": agent, "session": session}
        embed = (index or {}).get("embed")
        if isinstance(memory, Memory):
            if clock is not None:
                raise InvalidInput("clock= is the Memory's; pass it when opening the Memory")
            if embed is not None:
                raise InvalidInput(
                    'index["embed"] needs a store that owns its Memory: pass a URL, or open '
                    "Memory(url, embedder=LangChainEmbedder(embed, dims)) yourself"
                )
            self._memory = memory.scoped(**scope) if any(scope.values()) else memory
            self._owns = False
            if read_log:
                self._memory.read_log = True
        elif memory is None or isinstance(memory, str):
            embedder = None
            if embed is not None:
                embedder = LangChainEmbedder(embed, (index or {}).get("dims", 0))
                self.embeddings = embedder.embeddings
            self._memory = Memory(
                memory,
                clock=clock,
                embedder=embedder,
                tenant=tenant,
                user=user,
                agent=agent,
                session=session,
                read_log=read_log,
            )
            self._owns = True
        else:
            raise InvalidType(f"memory must be a Memory or a URL, not {type(memory).__name__}")
        self.index_config: IndexConfig | None = dict(index) if index else None  # type: ignore[assignment]
        # "text_fields" is the key LangGraph's SqliteStore reads (its IndexConfig's
        # "fields" is ignored there); a config written for it keeps its fields here
        conf: dict[str, Any] = dict(index or {})
        fields = conf.get("fields") or conf.get("text_fields") or list(DEFAULT_FIELDS)
        self._fields: tuple[str, ...] = tuple(fields)
        self.ttl_config = ttl
        self._pin: Pin | None = None
        self._floor = _ReadFloor()
        # pin_reads="checkpoint": a run started from a past checkpoint reads memory as
        # of that checkpoint (see pinning.py); checkpointer: where to look it up
        self.score_mode = score
        self.pin_reads = pin_mode
        self._checkpointer = checkpointer
        self._pins = pinning.PinCache()
        self._swept_us = -(2**62)  # sweep_ttl: the previous sweep's instant
        # whether this scope's namespace index is known built (shared with the views)
        self._index_built = [False]
        # abatch: concurrent async calls share a batch (one coalescer per event loop)
        self._coalescers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Coalescer] = (
            weakref.WeakKeyDictionary()
        )
        self._coalescers_lock = threading.Lock()

    @classmethod
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        **kwargs: Any,
    ) -> ChronomemStore:
        """A store on ``conn_string`` (usable directly or as a context manager, which
        closes it on exit, like LangGraph's ``PostgresStore.from_conn_string``)."""
        return cls(conn_string, index=index, ttl=ttl, **kwargs)

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def memory(self) -> Memory:
        return self._memory

    def setup(self) -> _Ready:
        """Nothing to do: chronomem migrates its schema when the store opens. The
        result may be ignored (``SqliteStore.setup()``) or awaited
        (``await AsyncSqliteStore.setup()``)."""
        return _Ready()

    def close(self) -> None:
        if self._owns:
            self._memory.close()

    def __enter__(self) -> ChronomemStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ChronomemStore:
        """``async with ChronomemStore.from_conn_string(url) as store:``, as with
        LangGraph's ``AsyncSqliteStore`` and ``AsyncPostgresStore``."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        pin = ""
        if self._pin is not None:
            pin = f", valid_at={opt_dt_iso(self._pin.valid_at)}, known_at={opt_dt_iso(self._pin.known_at)}"
        return f"{type(self).__name__}({self._memory.url!r}{pin})"

    # -- time travel -------------------------------------------------------------------
    def as_of(
        self,
        as_of: datetime | str | None = None,
        *,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
    ) -> ChronomemStore:
        """A read-only view with the same ``BaseStore`` API, reading the world at
        ``valid_at`` as the store believed it at ``known_at`` (``as_of`` sets both).
        Each is an aware ``datetime`` or an ISO-8601 string (``"2025-01-01T00:00:00Z"``).

        A graph compiled with the view replays what memory held then; a write to
        it raises ``ReadOnlyView``. TTL refreshes are not made through a view."""
        v, k = read_instants(
            parse_instant(valid_at, "valid_at"),
            parse_instant(known_at, "known_at"),
            parse_instant(as_of, "as_of"),
        )
        if v is None and k is None:
            raise InvalidTimeSelector("as_of() needs as_of, valid_at or known_at")
        view = copy.copy(self)
        view._owns = False
        view._pin = Pin(v, k)
        view._coalescers = weakref.WeakKeyDictionary()  # a view's batches read at its pin
        view._coalescers_lock = threading.Lock()
        return view

    @property
    def read_only(self) -> bool:
        return self._pin is not None

    def _check_writable(self, what: str) -> None:
        if self._pin is not None:
            raise ReadOnlyView(f"{what} on a time-travel view (as_of); write to the store itself")

    def _now(self) -> int:
        """The clock's now, but never before this store's last write."""
        return self._floor.at(to_us(self._memory.now(), "clock()"))

    def _reader(self, ctx: pinning.RunContext | None = None) -> Reader:
        """A reader at this batch's instants (a pinned run's: its checkpoint's)."""
        if self._pin is None and ctx is not None and ctx.pin_us is not None:
            return Reader(self._memory, ctx.pin_us, ctx.pin_us, self.score_mode)
        if self._pin is None:
            return Reader(self._memory, self._now(), None, self.score_mode)
        valid = self._pin.valid_at if self._pin.valid_at is not None else self._now()
        return Reader(self._memory, valid, self._pin.known_at, self.score_mode)

    # -- BaseStore ---------------------------------------------------------------------
    def _prepare(self, ops: list[Op]) -> dict[int, PreparedPut]:
        """Validate every op before any runs (all-or-nothing); encode the puts."""
        puts: dict[int, PreparedPut] = {}
        # the namespaces whose labels a put of this batch already passed: a batch
        # puts many items into few namespaces, each checked once
        valid: set[tuple[str, ...]] = set()
        for i, op in enumerate(ops):
            if isinstance(op, PutOp):
                _check_put_namespace(op, valid)
                value = _check_value(op.value)
                paths = resolve_paths(op.index, self._fields) if value is not None else ()
                # the common key (a str) and TTL (None) pass without a call
                key = op.key if type(op.key) is str else _check_key(op.key)
                ttl = None if op.ttl is None else _check_ttl(op.ttl)
                puts[i] = prepare(tuple(op.namespace), key, value, paths, ttl)
            elif isinstance(op, GetOp):
                validate_op_namespace(op)
                _check_key(op.key)
            elif isinstance(op, SearchOp):
                validate_op_namespace(op)
                filters.validate(op.filter)
                namespaces.check_page(op.limit, op.offset)
                if op.query is not None and not isinstance(op.query, str):
                    raise InvalidType(f"query must be a str, not {type(op.query).__name__}")
            elif isinstance(op, ListNamespacesOp):
                validate_op_namespace(op)
                namespaces.validate(op)
            else:
                raise InvalidInput(f"Unknown operation type: {type(op)}")
        if puts:
            self._check_writable("put/delete")
        return puts

    def _wants_context(self) -> bool:
        return self.pin_reads is not None or self._memory.read_log

    def _context(self) -> pinning.RunContext | None:
        """The running graph step's context (pinned when it should be), or None."""
        if not self._wants_context():
            return None
        ctx = pinning.run_context()
        if ctx is not None and self.pin_reads == "checkpoint" and self._pin is None:
            ctx = pinning.pinned(ctx, self._checkpointer, self._pins)
        return ctx

    async def _acontext(self) -> pinning.RunContext | None:
        if not self._wants_context():
            return None
        ctx = pinning.run_context()
        if ctx is not None and self.pin_reads == "checkpoint" and self._pin is None:
            ctx = await pinning.apinned(ctx, self._checkpointer, self._pins)
        return ctx

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` as LangGraph's ``InMemoryStore`` does: every read sees the
        store as it was before the batch, then the puts apply (the last put of a
        key wins) — here in one transaction with one transaction time."""
        return self._batch(list(ops), self._context())

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """``BaseStore.get``: its one ``GetOp`` run as ``batch`` runs it (``_item``,
        the labels checked once; no ``GetOp`` outside a run that needs its context)."""
        validate_labels(namespace)
        key = str(key)
        refresh = ensure_refresh(self.ttl_config, refresh_ttl)
        ctx = self._context()
        if ctx is not None:
            return self._batch([GetOp(namespace, key, refresh)], ctx)[0]  # type: ignore[return-value]
        return self._item(keys.subject(tuple(namespace), key), refresh, None)

    def _put(self, op: PutOp) -> None:
        """A batch of one put (what ``store.put`` sends), outside a run that needs its
        context: the same validation, read of the item, plan and write as the
        general path of ``_run``, without its bookkeeping. The item is read inside
        the write transaction, by the read that serves the writer too
        (``Memory.apply_planned``), and the put planned from it (``plan_put``, as
        ``_write`` plans it); a delete, or a put with the served-read log on
        (whose item read is logged), reads it first (``_write``)."""
        puts = self._prepare([op])  # checks and encodes it; a view raises ReadOnlyView
        put = puts[0]
        subject = put.subject
        if put.value is None or self._memory.read_log:
            self._write(puts, {subject: self._reader().item(subject)}, {})
            return
        at = self._now()  # what ``_write`` plans at: a TTL counts from it

        def plan(rows: list[FactRow]) -> list[PlannedOp]:
            return plan_document(put, live_record(rows, subject), at)

        then = namespace_index.entries({put.namespace: None})
        self._floor.note(
            self._memory.apply_planned((subject,), plan, valid_at=from_us(at), then=then)
        )

    def _batch(self, ops: list[Op], ctx: pinning.RunContext | None) -> list[Result]:
        # the graph's tag fills only what an enclosing memory.read_tag(...) left unset
        tag = tagged(self._memory, ctx.tag) if ctx is not None else contextlib.nullcontext()
        with tag:
            return self._run(ops, ctx)

    def _run(self, ops: list[Op], ctx: pinning.RunContext | None) -> list[Result]:
        if len(ops) == 1 and type(ops[0]) is GetOp:
            return [self._get(ops[0], ctx)]
        if len(ops) == 1 and type(ops[0]) is PutOp and ctx is None:  # what store.put sends
            self._put(ops[0])
            return [None]
        if len(ops) == 1 and type(ops[0]) is SearchOp:  # what store.search sends
            return [self._search(ops[0], ctx)]
        if len(ops) == 1 and type(ops[0]) is ListNamespacesOp:  # what list_namespaces sends
            self._prepare(ops)
            return [self._namespaces(ops[0], self._reader(ctx))]
        puts = self._prepare(ops)
        if len(puts) == len(ops) and ctx is None and self._plans_in_write(puts):
            self._put_all(puts)  # a batch of puts alone (a load)
            return [None] * len(ops)
        reader = self._reader(ctx)
        pinned = reader.known_at is not None and self._pin is None
        # every item the batch gets or puts, in one read (a pinned run's puts are
        # planned against the present, where they are written)
        put_subjects = [put.subject for put in puts.values()]
        get_subjects = [
            keys.subject(tuple(op.namespace), op.key)
            for op in ops
            if type(op) is not PutOp and isinstance(op, GetOp)
        ]
        # the items as rows (``Memory.rows``, a point read: all a get and a put plan
        # use), but a large batch with puts as facts (one query per 500 items, where
        # rows take one statement per few items)
        light = not puts or len(put_subjects) + len(get_subjects) <= POINT_READ_ITEMS
        items = reader.items(get_subjects + ([] if pinned else put_subjects), light=light)
        if pinned and put_subjects:
            items.update(
                self._reader().items(put_subjects, light=len(put_subjects) <= POINT_READ_ITEMS)
            )
        results: list[Result] = []
        touched: dict[str, Record] = {}
        for op in ops:
            if type(op) is PutOp:  # written below (``_write``)
                results.append(None)
            elif isinstance(op, GetOp):
                rec = items[keys.subject(tuple(op.namespace), op.key)]
                results.append(to_item(rec) if rec is not None else None)
                if rec is not None and op.refresh_ttl and not pinned:
                    touched[rec.subject] = rec
            elif isinstance(op, SearchOp):
                found, recs = reader.search(op)
                results.append(found)
                if op.refresh_ttl and not pinned:
                    touched.update((r.subject, r) for r in recs)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._namespaces(op, reader))
            else:
                results.append(None)
        if self._pin is None:
            self._refresh_and_write(reader, puts, items, touched, ctx)
        return results

    def _plans_in_write(self, puts: dict[int, PreparedPut]) -> bool:
        """Whether puts are planned from the write's own read (``_put_all``): not
        with a delete among them (whose plan retracts facts by id), nor with the
        served-read log on (whose item read is logged)."""
        if self._memory.read_log:
            return False
        return all(put.value is not None for put in puts.values())

    def _put_all(self, puts: dict[int, PreparedPut]) -> None:
        """A batch of puts alone, outside a run that needs its context: the
        items read inside the write transaction, by the read that serves the
        writer too, and planned from it (``Memory.apply_planned``, as the single
        put), the last put of a key winning; a plain put is a ``DocumentOp``,
        which the writer applies set-wise (one pass over the batch's new items
        and overwrites). The same checks, plans and rows as ``_run``'s general
        path (``tests/langgraph/test_planned_batch.py``)."""
        last: dict[str, PreparedPut] = {}
        for put in puts.values():  # in the batch's order: the last put of a key wins
            last[put.subject] = put
        at = self._now()  # what ``_write`` plans at

        def plan(rows: list[FactRow]) -> list[PlannedOp]:
            found = group(rows)
            out: list[PlannedOp] = []
            for subject, put in last.items():
                rec = found.get(subject)
                out += plan_document(put, rec if rec is not None and rec.alive else None, at)
            return out

        then = namespace_index.entries({put.namespace: None for put in last.values()})
        self._floor.note(
            self._memory.apply_planned(tuple(last), plan, valid_at=from_us(at), then=then)
        )

    def _search(self, op: SearchOp, ctx: pinning.RunContext | None) -> list[SearchItem]:
        """A batch of one search (what ``store.search`` sends): ``_run`` without the
        batch's bookkeeping, the TTL refresh of what it returned made as ``_run``
        makes it (not in a pinned read)."""
        self._prepare([op])
        reader = self._reader(ctx)
        found, recs = reader.search(op)
        if op.refresh_ttl and self._pin is None and reader.known_at is None:
            # (``_write`` writes nothing unless one of them has a TTL: not called then)
            for r in recs:
                if (m := r.marker) is not None and m.ttl is not None:
                    self._refresh_and_write(reader, {}, {}, {r.subject: r for r in recs}, ctx)
                    break
        return found

    def _get(self, op: GetOp, ctx: pinning.RunContext | None) -> Item | None:
        """A batch of one ``get`` (what ``store.get`` sends): ``_run`` without the
        batch's bookkeeping."""
        validate_op_namespace(op)
        subject = keys.subject(tuple(op.namespace), _check_key(op.key))
        return self._item(subject, op.refresh_ttl, ctx)

    def _item(self, subject: str, refresh: bool, ctx: pinning.RunContext | None) -> Item | None:
        """The item ``subject`` names, its TTL refreshed when ``refresh`` asks. In
        the present of the store itself (no pinned run, not a view) it is
        ``Reader.item`` at ``_now()`` without building the reader: one
        ``Memory.rows`` point read at that instant."""
        reader: Reader | None = None
        if ctx is None and self._pin is None:  # what Reader(memory, _now(), None).item reads
            now = self._floor.at_time(self._memory.now())  # ``_now()``, as a datetime
            rec = live_record(self._memory.rows((subject,), valid_at=now, exact=True), subject)
            pinned = False
        else:
            reader = self._reader(ctx)
            rec = reader.item(subject)
            pinned = reader.known_at is not None and self._pin is None
        if rec is None:
            return None
        item = to_item(rec)
        m = rec.marker
        if refresh and not pinned and self._pin is None and m is not None and m.ttl:
            self._refresh_and_write(
                reader or self._reader(), {}, {subject: rec}, {subject: rec}, ctx
            )
        return item

    def _refresh_and_write(
        self,
        reader: Reader,
        puts: dict[int, PreparedPut],
        items: dict[str, Record | None],
        touched: dict[str, Record],
        ctx: pinning.RunContext | None,
    ) -> None:
        # a TTL refresh re-asserts the item's document as read (rows suffice)
        self._write(puts, items, touched, ctx)

    def _write(
        self,
        puts: dict[int, PreparedPut],
        items: dict[str, Record | None],
        touched: dict[str, Record],
        ctx: pinning.RunContext | None = None,
    ) -> None:
        refresh = [r for r in touched.values() if (m := r.marker) is not None and m.ttl is not None]
        if not puts and not refresh:
            return
        # The writes take effect at the transaction time; a TTL counts from now (after
        # the batch's reads), a moment before it, as PostgresStore's now() + ttl.
        at = self._now()
        last: dict[str, PreparedPut] = {}
        for _, put in sorted(puts.items()):
            last[put.subject] = put
        write_ops = []
        for subject, put in last.items():
            write_ops += plan_put(put, touched.get(subject, items[subject]), at)
        for subject, rec in touched.items():
            if subject not in last:
                write_ops += plan_refresh(rec, at)
        if write_ops and ctx is not None and ctx.fork_of is not None:
            # a run started from a past checkpoint writes in the present, tagged with the fork
            fork = {"thread_id": ctx.thread, "checkpoint_id": ctx.fork_of}
            write_ops = [
                dataclasses.replace(op, metadata={**op.metadata, "langgraph_fork": fork})
                if isinstance(op, AssertOp)
                else op
                for op in write_ops
            ]
        if write_ops:
            # the namespace index (namespace_index.py): each namespace put into, in this write
            puts_in = {p.namespace: None for p in last.values() if p.value is not None}
            write_ops += namespace_index.entries(puts_in)
            self._floor.note(self._memory.apply(write_ops))

    def _namespaces(self, op: ListNamespacesOp, reader: Reader) -> list[tuple[str, ...]]:
        """``list_namespaces`` from the namespace index (built on the scope's first listing)."""
        if not self._index_built[0]:
            namespace_index.build(self._memory)
            self._index_built[0] = True
        return namespace_index.list_namespaces(self._memory, op, reader.valid_at, reader.known_at)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread (the database calls are blocking).

        Concurrent calls are coalesced, as LangGraph's async stores do: the calls
        that arrive while a batch runs are validated each on its own, then run
        together as the next batch (``coalescing.py``). A call made inside a graph
        step that needs its run's context (``pin_reads``, ``read_log``) runs alone."""
        ops = list(ops)
        ctx = await self._acontext()  # here: the worker thread does not see the run's config
        loop = asyncio.get_running_loop()
        if ctx is not None:
            return await loop.run_in_executor(None, functools.partial(self._batch, ops, ctx))
        self._prepare(ops)  # a bad call fails here, alone, before it joins a shared batch
        return await self._coalescer(loop).submit(ops)

    def _coalescer(self, loop: asyncio.AbstractEventLoop) -> Coalescer:
        with self._coalescers_lock:
            found = self._coalescers.get(loop)
            if found is None:
                found = Coalescer(functools.partial(self._batch, ctx=None), loop)
                self._coalescers[loop] = found
            return found

    # -- TTL sweeper (LangGraph's SqliteStore / PostgresStore API) --------------------------
    def start_ttl_sweeper(
        self, sweep_interval_minutes: int | None = None
    ) -> concurrent.futures.Future[None]:
        """What ``SqliteStore.start_ttl_sweeper`` returns (a future), already done:
        there is nothing to sweep. An expired item's fields ended in valid time
        at the instant it expired, inside the write that set the TTL, so it left
        every current read without a sweep (``sweep_ttl`` counts them; ``erase``
        deletes physically). Awaiting the result also works, for code written
        against ``AsyncSqliteStore``/``AsyncPostgresStore``, whose method is a
        coroutine returning a task."""
        return _DoneSweeper()

    def stop_ttl_sweeper(self, timeout: float | None = None) -> _Stopped:
        """``True`` (as upstream's when no sweeper runs), also when awaited."""
        return _Stopped(1)

    # -- beyond BaseStore ----------------------------------------------------------------
    def history(
        self,
        namespace: tuple[str, ...],
        key: str,
        field: str | None = None,
        *,
        known_at: datetime | str | None = None,
        include_retracted: bool = True,
    ) -> list[FieldVersion]:
        """Every value the item's fields (or one ``field``) had, in valid-time order:
        live, ended (changed, removed or expired) and, unless
        ``include_retracted=False``, retracted (deleted) ones. ``known_at`` (default:
        the view's, else latest) reads the history as it was believed then."""
        validate_labels(tuple(namespace))
        subject = keys.subject(tuple(namespace), _check_key(key))
        pin = self._pin
        known_at = parse_instant(known_at, "known_at")
        if known_at is None and pin is not None:
            known_at = opt_dt(pin.known_at)
        valid = from_us(
            pin.valid_at if pin is not None and pin.valid_at is not None else self._now()
        )
        states = ALL_STATES if include_retracted else ALL_STATES - {State.RETRACTED}
        facts = self._memory.facts(
            subject=subject, exact=True, valid_at=valid, known_at=known_at, states=states
        )
        return field_versions(facts, field)

    def erase(self, namespace: tuple[str, ...], key: str) -> dict[str, int]:
        """Physically delete the item: every version of every field, its index
        entries and vectors. Irreversible; returns counts (``versions`` …)."""
        self._check_writable("erase")
        validate_labels(tuple(namespace))
        return erase_subject(self._memory, keys.subject(tuple(namespace), _check_key(key)))

    def sweep_ttl(self) -> int:
        """The number of items whose TTL ran out since this store's previous sweep
        (the first sweep: every expired item), which is what LangGraph's stores'
        ``sweep_ttl`` deletes and returns. Nothing is deleted: an expired item's
        fields ended in valid time when it expired (they left every current read
        and stay in history); ``erase`` deletes physically. The mark of the
        previous sweep is this store object's (a new process counts afresh)."""
        now = self._now()
        markers = [
            f
            for pred in (keys.DOC, keys.MARKER)  # documents, and old-layout markers
            for f in self._memory.facts(
                predicate=pred, exact=True, valid_at=from_us(now), states=[State.LIVE, State.ENDED]
            )
            if is_head(f.predicate, f.object)
        ]
        live = {f.subject for f in markers if f.state is State.LIVE}
        expired: dict[str, int] = {}
        for f in markers:
            if f.state is not State.ENDED or f.subject in live or f.valid_to is None:
                continue
            if Marker.decode(f.object).ttl is None:
                continue  # ended some other way (not a TTL)
            end = to_us(f.valid_to, "valid_to")
            expired[f.subject] = max(expired.get(f.subject, end), end)
        swept = sum(1 for end in expired.values() if self._swept_us < end <= now)
        self._swept_us = now
        return swept


class _Ready:
    """What ``setup()`` returns: ignored by a sync caller, ``None`` when awaited."""

    def __await__(self) -> Generator[Any, None, None]:
        return None
        yield  # pragma: no cover  (makes this a generator)


class _DoneSweeper(concurrent.futures.Future[None]):
    """A finished sweeper: a done ``concurrent.futures.Future`` (``SqliteStore``'s
    type) that is also awaitable (``AsyncSqliteStore``'s method is a coroutine)."""

    def __init__(self) -> None:
        super().__init__()
        self.set_result(None)

    def __await__(self) -> Generator[Any, None, _DoneSweeper]:
        return self
        yield  # pragma: no cover  (makes this a generator)


class _Stopped(int):
    """``True`` for a sync caller (``SqliteStore.stop_ttl_sweeper`` returns a bool)
    and ``True`` when awaited (``AsyncSqliteStore``'s is a coroutine)."""

    def __await__(self) -> Generator[Any, None, bool]:
        return True
        yield  # pragma: no cover  (makes this a generator)

    def __repr__(self) -> str:
        return "True"


def opt_dt_iso(value: int | None) -> str | None:
    return None if value is None else from_us(value).isoformat()
