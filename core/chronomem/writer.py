"""Applies write operations: one transaction, one transaction time, slot locks,
the state machine, and the rows it yields. The only code that changes versions."""

from __future__ import annotations

import functools
import hashlib
import json
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

from sqlalchemy import Connection, bindparam, func, select

from . import keycodec
from .backends import of
from .batching import chunks
from .errors import (
    ChronomemError,
    InvalidInput,
    InvalidInterval,
    NotFound,
    ScopeError,
    StaleFact,
    TimeTravel,
)
from .identity import fold as fold_text
from .identity import fold_predicate, key_hash, require_text
from .model import CloseReason, FactRow, Receipt
from .ops import (
    AssertOp,
    CorrectOp,
    DocumentOp,
    EndOp,
    EndOthersOp,
    PlannedOp,
    PlannedWrite,
    RetractOp,
    WriteOp,
    expanded,
)
from .predicates import Cardinality
from .prepared import PreparedIn
from .reads import scope_visible, scope_within
from .registry import Registry
from .schema import episodes as episodes_table
from .schema import sources, versions
from .scope import Scope
from .slotkeys import scoped_slot_key, slot_key
from .statemachine import (
    NEW,
    SlotPlan,
    SlotVersion,
    new_id,
    new_id_pair,
    new_ids,
    trivial_assert,
)
from .timeutil import MAX_US, end_dt, from_us

# Called with the connection and the inserted version rows (to index them).
InsertHook = Callable[[Connection, list[dict[str, Any]]], None]

# Folding a name (Unicode normalisation, punctuation, legal suffixes) cost a
# batched write more than its statements did; a batch repeats its subjects,
# predicates and objects, so the pure functions are memoised for short text.
_MEMO_CHARS = 256
_fold_memo = functools.lru_cache(maxsize=1 << 15)(fold_text)


def fold(text: str) -> str:
    """``identity.fold``, memoised for short text."""
    if type(text) is str and len(text) <= _MEMO_CHARS:
        return _fold_memo(text)
    return fold_text(text)


# A batch asserts the same slots again and again (an adapter's index entries,
# re-put items): their keys (a join and a digest each) are memoised too.
_slot_memo = functools.lru_cache(maxsize=1 << 14)(scoped_slot_key)


def _slot_key(scope: Scope, subject_key: str, predicate: str, object_key: str | None) -> str:
    """``slot_key``, memoised for short keys."""
    if len(subject_key) + len(object_key or "") <= _MEMO_CHARS:
        return _slot_memo(scope.key, subject_key, predicate, object_key)
    return slot_key(scope, subject_key, predicate, object_key)


# A subject's hash (``key_hash``, a digest): a store's writes repeat its subjects
# from batch to batch, so short keys' hashes are memoised too.
_hash_memo = functools.lru_cache(maxsize=1 << 14)(key_hash)


def _subject_hash(subject_key: str) -> str:
    """``key_hash``, memoised for short keys."""
    if len(subject_key) <= _MEMO_CHARS:
        return _hash_memo(subject_key)
    return key_hash(subject_key)


def content_hash(*parts: object) -> str:
    """A digest of the parts (injective join: no two part lists share a raw form)."""
    raw = keycodec.join([str(p) for p in parts], keycodec.SEP_FIELD)
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()


def _version_hash(subject_key: str, predicate: str, object_key: str, valid_from: int) -> str:
    """``content_hash(subject_key, predicate, object_key, valid_from)``, a version's,
    without the general form's list (one per version written)."""
    raw = f"{subject_key}{_SEP}{predicate}{_SEP}{object_key}{_SEP}{valid_from}"
    if keycodec.ESC in raw or raw.count(_SEP) != 3:  # a part to escape: the general form
        return content_hash(subject_key, predicate, object_key, valid_from)
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()


_SEP = keycodec.SEP_FIELD


def stamp(conn: Connection, tenant: str, now_us: int, *, at: int | None = None) -> int:
    """The transaction time of this write: strictly after every earlier one of the tenant.

    The clock row is locked until commit, so stamps and commits happen in the
    same order and a read at ``known_at=t`` can never later gain a write
    stamped before ``t`` (exact replay)."""
    return stamp_row(conn, tenant, now_us, at=at)[0]


def stamp_row(
    conn: Connection, tenant: str, now_us: int, *, at: int | None = None
) -> tuple[int, int | None]:
    """``stamp``, and the clock row's ``registry_us`` (the predicate registry's
    version), which the backend reads with the same statements
    (``Backend.advance_clock``: one upsert on PostgreSQL)."""
    if at is not None and at > MAX_US:
        raise _calendar_end()
    value, registry_us = of(conn).advance_clock(conn, tenant, now_us, at)
    # a tenant already stamped at the calendar's end (by an older version) must
    # refuse, not store a transaction time no datetime can hold (the caller's
    # transaction rolls back, so an advanced clock is not kept)
    if value > MAX_US:
        raise _calendar_end()
    return value, registry_us


def stamp_later(
    conn: Connection, tenant: str, now_us: int, *, at: int | None = None
) -> Callable[[], tuple[int, int | None]] | None:
    """``stamp_row`` queued to go with the transaction's next statement
    (``Backend.advance_clock_later``): a call that returns what ``stamp_row``
    does; None where the backend does not queue it (call ``stamp_row``)."""
    if at is not None and at > MAX_US:
        raise _calendar_end()
    later = of(conn).advance_clock_later(conn, tenant, now_us, at)
    if later is None:
        return None

    def stamped() -> tuple[int, int | None]:
        value, registry_us = later()
        if value > MAX_US:  # as ``stamp_row``
            raise _calendar_end()
        return value, registry_us

    return stamped


def _calendar_end() -> InvalidInput:
    return InvalidInput(
        "this tenant's transaction clock has reached the end of the calendar "
        "(year 9999); nothing was written"
    )


@dataclass(slots=True)
class _Target:
    """An operation resolved to the slots it touches."""

    op: WriteOp
    # a tuple: a batch holds one per operation until it is written, and a tuple of
    # strings is one the garbage collector stops tracking (a list never is)
    slots: tuple[str, ...]
    subject_key: str = ""
    predicate: str = ""
    object_key: str | None = None
    new_slot: str = ""  # correct: where the replacement goes


# The target of an op that touches no slot (an end of the other facts of a subject
# that holds none: a new item's put), shared: a batch of new items holds one, not a
# ``_Target`` (an object the garbage collector tracks) per put. Nothing reads its op.
_NOTHING = _Target(EndOthersOp("", frozenset(), exact=True), ())

# An operation's target as a batch holds it until it is written: a ``_Target``, or
# for an exact assert (an adapter's: its names are its keys) only its slot key, a
# string the garbage collector does not track (``_full`` makes its ``_Target``
# where one is used). The targets of a batch are in the order of its operations.
Held = _Target | str


def _check_name(name: str) -> None:
    """A predicate name fits its column."""
    if len(name) > 255:
        raise InvalidInput(f"predicate names are at most 255 characters; got {len(name)}")


def _folded(op: AssertOp | EndOp, index: Any) -> tuple[str, bool, str, str | None]:
    """A folded op's predicate (its registered name when the registry ``index``
    knows it), whether it is MANY (the op's cardinality, else the registry's, else
    MANY), and its folded subject and object keys."""
    pkey = _pred_key(op.predicate)
    spec = index.get(pkey)
    card = op.cardinality or (spec.cardinality if spec else Cardinality.MANY)
    skey = fold(op.subject)
    okey = fold(op.obj) if op.obj is not None else None
    return (spec.name if spec else pkey), card is Cardinality.MANY, skey, okey


def _slots_of(t: Held) -> tuple[str, ...]:
    return (t,) if isinstance(t, str) else t.slots


def _touches(targets: Sequence[Held]) -> dict[str, int]:
    """How many of the targets touch each slot (keys in first-touched order)."""
    touches: dict[str, int] = {}
    get = touches.get
    for t in targets:
        if type(t) is str:
            touches[t] = get(t, 0) + 1
        else:
            for s in t.slots:  # type: ignore[union-attr]  # a ``_Target``
                touches[s] = get(s, 0) + 1
    return touches


def _full(op: WriteOp, t: Held) -> _Target:
    """The ``_Target`` of ``op`` held as ``t``."""
    if isinstance(t, str):
        assert isinstance(op, AssertOp) and op.exact
        return _Target(op, (t,), op.subject, op.predicate, op.obj)
    return t


# A slot's trivial plan: one new version (its ``cm_versions`` row), or the stored
# one left unchanged (its fact id and version id). A dict of strings and numbers
# and a tuple of strings are objects the garbage collector does not track; a batch
# holds one per slot until it is written.
_Direct = dict[str, Any] | tuple[str, str]


_EXTRA = (
    "user_id",
    "agent_id",
    "session_id",
    "slot",
    "subject",
    "subject_key",
    "subject_hash",
    "predicate",
    "extractor",
    "metadata",
    "index_text",
)


def _row_extra(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in _EXTRA}


# Without row locks (SQLite: ``BEGIN IMMEDIATE`` already holds the database) the
# writer's two reads of current versions run as statements compiled once
# (``prepared``: straight to the driver's cursor, rows as tuples). Through
# SQLAlchemy, building, caching and compiling each SELECT and a result row per
# version cost a single put more than SQLite's work, and a batch of puts a
# sixth of its time. Both select every column of ``cm_versions`` (``_slot_versions``).
_LIVE_ROWS = PreparedIn(
    lambda hashes: select(versions).where(
        versions.c.tenant == bindparam("tenant"),
        versions.c.user_id == bindparam("user_id"),
        versions.c.agent_id == bindparam("agent_id"),
        versions.c.session_id == bindparam("session_id"),
        versions.c.subject_hash.in_(hashes),
        versions.c.superseded_at.is_(None),
    ),
    "h",
)
_SLOT_ROWS = PreparedIn(
    lambda slots: select(versions).where(
        versions.c.tenant == bindparam("tenant"),
        versions.c.slot.in_(slots),
        versions.c.superseded_at.is_(None),
    ),
    "s",
)
_COL = {name: i for i, name in enumerate(_SLOT_ROWS.columns)}
_KEPT = ("id", "fact_id", "object_key", "valid_from", "valid_to")
_AT_EXTRA = tuple(_COL[k] for k in _EXTRA)
_AT_VERSION = tuple(
    _COL[k] for k in ("id", "fact_id", "object", "object_key", "valid_from", "valid_to")
)


# the types ``isinstance`` tests against, as tuples built once: a union written
# in the test (``A | B``) is a new object at every call, and these run per op
_ASSERT_OR_END = (AssertOp, EndOp)
_NAMING = (AssertOp, EndOp, EndOthersOp)
BY_ID = (RetractOp, CorrectOp)  # the operations that name a fact by its id

_EXTRA_OF = operator.itemgetter(*_AT_EXTRA)
_VERSION_OF = operator.itemgetter(*_AT_VERSION)
# what ``_kept`` compares of a loaded row: (id, fact id, object key, valid from, valid to)
_KEPT_OF = operator.itemgetter(*(_COL[k] for k in _KEPT))
# a planned write's rows (``_Found.rows_at``): their order, and a ``FactRow``'s columns
_ROW_ORDER_OF = operator.itemgetter(
    *(_COL[k] for k in ("subject_key", "predicate", "valid_from", "object_key", "id"))
)
_FACT_ROW_OF = operator.itemgetter(
    *(
        _COL[k]
        for k in (
            "id", "fact_id", "subject", "subject_key", "predicate", "object", "valid_from",
            "valid_to",
        )
    )
)  # fmt: skip

# A large batch's ensures (a LangGraph batch's namespace index entries: about one
# per item put) have their slots read narrowly, only the columns ``_kept`` compares
# (``_ENSURED_ROWS``), not whole with the live read: a slot that holds its entry
# (nearly every one) needs nothing more, and the few others are read whole then
# (``Writer._ensured``). Below ``NARROW_ENSURES`` subjects they stay in the live
# read, whose one statement costs less than a second one would save (a single
# put's three entries).
NARROW_ENSURES = 16
_ENSURED_ROWS = PreparedIn(
    lambda slots: select(*(versions.c[k] for k in ("slot", *_KEPT))).where(
        versions.c.tenant == bindparam("tenant"),
        versions.c.slot.in_(slots),
        versions.c.superseded_at.is_(None),
    ),
    "s",
)
_ENSURED_KEPT_OF = operator.itemgetter(*range(1, 1 + len(_KEPT)))


# A slot's current versions as the writer loaded them: ``SlotVersion``s, or the
# stored rows themselves (tuples in ``cm_versions``' column order, from the
# prepared reads), made ``SlotVersion``s only where they are used (``_versions_of``):
# a batch holds every loaded slot until it is written, and a tuple of strings and
# numbers is an object the garbage collector stops tracking.
Loaded = dict[str, Sequence[SlotVersion | tuple[Any, ...]]]


def _slot_versions(rows: Iterable[Any], out: Loaded) -> None:
    """Add current version rows (sequences in ``cm_versions``' column order) to
    ``out``, kept as tuples per slot."""
    at_slot = _COL["slot"]
    for r in rows:
        row = r if type(r) is tuple else tuple(r)
        slot = row[at_slot]
        had = out.get(slot)
        # a slot holds a version or a few: a tuple grown per row, no list per slot
        out[slot] = (row,) if had is None else (*had, row)


def _stored_version(r: tuple[Any, ...]) -> SlotVersion:
    """The ``SlotVersion`` of a stored row (``_slot_versions``)."""
    vid, fid, obj, key, vf, vt = _VERSION_OF(r)
    return SlotVersion(
        vid, fid, obj, key, vf, vt, extra=dict(zip(_EXTRA, _EXTRA_OF(r), strict=True))
    )


def _ensures(op: WriteOp) -> TypeGuard[AssertOp]:
    """Whether ``op`` is an exact assert of a ONE slot from a given instant forever,
    citing no source: its slot, when it already holds the same object over that
    whole time, is left unchanged (``_kept``), whatever else the slot holds."""
    return (
        type(op) is AssertOp
        and op.valid_from is not None
        and op.valid_to is None
        and op.bounded
        and op.valid_for is None
        and op.cardinality is Cardinality.ONE
        and not op.sources
    )


def _kept(
    loaded: Sequence[SlotVersion | Sequence[Any]],
    op: AssertOp,
    kept_of: Callable[[Any], tuple[Any, ...]] = _KEPT_OF,
) -> _Direct | None:
    """The stored version an ``_ensures`` assert leaves unchanged, as (fact id,
    version id): the earliest-starting (then least id) current version of the
    same object from the assert's start or before, forever, the one
    ``trivial_assert`` returns for it (``tests/test_write_paths_ensure.py``);
    None when there is none (the assert is then planned as any other). Rows
    that are no ``SlotVersion`` give (id, fact id, object key, valid from,
    valid to) by ``kept_of``: whole rows (``_SLOT_ROWS``' columns) by default."""
    key, vf = op.obj, op.valid_from
    assert vf is not None
    best: tuple[int, str, str] | None = None  # (valid_from, version id, fact id)
    for v in loaded:
        if not isinstance(v, SlotVersion):
            vid, fid, okey, start, end = kept_of(v)
        else:
            vid, fid, okey, start, end = v.id, v.fact_id, v.object_key, v.valid_from, v.valid_to
        if (
            okey == key
            and end is None
            and start <= vf
            and (best is None or (start, vid) < best[:2])
        ):
            best = (start, vid, fid)
    return None if best is None else (best[2], best[1])


def _versions_of(loaded: Sequence[SlotVersion | tuple[Any, ...]]) -> list[SlotVersion]:
    """A slot's loaded current versions as ``SlotVersion``s."""
    return [v if isinstance(v, SlotVersion) else _stored_version(v) for v in loaded]


def _ensured_slots(
    ops: Sequence[WriteOp], targets: Sequence[Held], touches: dict[str, int], covered: set[str]
) -> dict[str, AssertOp]:
    """The slots of ``_ensures`` asserts, each touched by its assert alone, that the
    live read did not cover, with their asserts: when they are ``NARROW_ENSURES``
    or more, to be read narrowly (``Writer._ensured``); else none."""
    out: dict[str, AssertOp] = {}
    for op, held in zip(ops, targets, strict=True):
        if type(held) is str and held not in covered and touches[held] == 1 and _ensures(op):
            out[held] = op
    return out if len(out) >= NARROW_ENSURES else {}


def _reads_live(op: WriteOp) -> bool:
    """Whether ``op``'s slots follow from its subject's live slots (``_Found.live``):
    an end of a subject's other facts, or of every value of a predicate."""
    return isinstance(op, EndOthersOp) or (isinstance(op, EndOp) and op.obj is None)


class _Found:
    """What resolving a batch's operations needs from the database, read up front
    in a few set-wise queries (not one per operation): the live (slot, predicate)
    pairs of every subject whose values an operation ends wholesale, and the rows
    of every fact an operation names by id. Nothing is written before the targets
    are resolved, so reading it all first sees exactly what one-by-one reads did."""

    def __init__(self, conn: Connection, scope: Scope, *, whole: bool = False) -> None:
        self.conn = conn
        self.scope = scope
        self.live: dict[str, list[tuple[str, str]]] = {}
        self.by_fact: dict[str, list[Any]] = {}
        # ``whole``: the live read takes whole rows (``_LIVE_ROWS``), kept here as
        # each slot's current versions; every slot of a subject in ``subjects``
        # (in the writer's own scope) then needs no read of its own (``covers``)
        self.whole = whole
        self.subjects: set[str] = set()
        self.current: Loaded = {}

    @classmethod
    def load(
        cls,
        conn: Connection,
        scope: Scope,
        ops: Sequence[WriteOp],
        *,
        whole: bool = False,
        planned: Sequence[str] = (),
    ) -> _Found:
        """``planned``: subjects (exact keys) a planned write reads, whole, with
        the rest, before its plan's ops exist (``Writer.apply(planned=…)``)."""
        found = cls(conn, scope, whole=whole)
        subjects: set[str] = set(planned)
        facts: set[str] = set()
        exact_asserts: set[str] = set()
        ensured: set[str] = set()  # subjects of ``_ensures`` asserts
        ends_others = False
        for op in ops:
            if type(op) is AssertOp:  # the common op first: a folded assert reads nothing
                if op.exact:
                    (ensured if _ensures(op) else exact_asserts).add(op.subject)
                continue
            if isinstance(op, EndOthersOp):
                subjects.add(op.subject if op.exact else fold(op.subject))
                ends_others = True
            elif isinstance(op, EndOp) and op.obj is None:
                # only a MANY predicate's "every value" needs them; reading a few
                # more subjects than needed is harmless
                subjects.add(op.subject if op.exact else fold(op.subject))
            elif isinstance(op, BY_ID):
                facts.add(op.fact_id)
            elif isinstance(op, AssertOp) and op.exact:
                (ensured if _ensures(op) else exact_asserts).add(op.subject)
        if whole and (ends_others or planned):
            # A batch that ends an item's other facts (an item store's put: its
            # document, its namespace entries) reads its exact asserts' subjects
            # whole in the same statement: their slots are then covered and take
            # no read of their own (a single put: one read of current versions,
            # not two). Such subjects hold an item's few facts. Many ensures'
            # subjects are left out: their slots are read narrowly
            # (``Writer._ensured``).
            subjects |= exact_asserts
            if len(ensured - subjects) < NARROW_ENSURES:
                subjects |= ensured
        found._load_live(sorted(subjects))
        found._load_facts(sorted(facts))
        return found

    def rows_at(self, subjects: Sequence[str], valid_at: int) -> list[FactRow]:
        """The live facts of ``subjects`` (read whole) at ``valid_at``, as
        ``Memory.rows`` gives them: in the order of ``reads.subject_rows``
        (subject key, predicate, valid from, object key, version id)."""
        wanted = set(subjects)
        at_key, at_vf, at_vt = _COL["subject_key"], _COL["valid_from"], _COL["valid_to"]
        live = [
            r
            for rows in self.current.values()
            for r in rows
            if type(r) is tuple
            and r[at_key] in wanted
            and r[at_vf] <= valid_at
            and (r[at_vt] is None or r[at_vt] > valid_at)
        ]
        live.sort(key=_ROW_ORDER_OF)
        return [
            FactRow(fid, vid, subj, skey, pred, obj, from_us(vf), end_dt(vt))
            for vid, fid, subj, skey, pred, obj, vf, vt in map(_FACT_ROW_OF, live)
        ]

    def covers(self, op: WriteOp, target: Held) -> bool:
        """Whether the live read already holds every current version of the
        target's slots: an assert's or end's slot is keyed by the writer's scope
        and the subject key (``slot_key``), so all its current versions are rows
        of that subject in that scope, which the live read took whole."""
        if not self.whole:
            return False
        if isinstance(op, EndOthersOp):
            return True  # its slots are live slots of a subject read whole
        if isinstance(target, str):  # an exact assert: its subject is its key
            return isinstance(op, AssertOp) and op.subject in self.subjects
        return isinstance(op, _ASSERT_OR_END) and target.subject_key in self.subjects

    def covered(self, ops: Sequence[WriteOp], targets: Sequence[Held]) -> set[str]:
        """The slots of the targets the live read ``covers`` (one pass; an exact
        assert's target is its slot key, and its subject its subject key)."""
        out: set[str] = set()
        subjects = self.subjects
        # no subject read whole (no end of a subject's values in the batch): nothing
        # is covered, not even an ``EndOthersOp``'s slots (its subject is read)
        if not self.whole or not subjects:
            return out
        for op, t in zip(ops, targets, strict=True):
            if isinstance(t, str):  # an exact assert's (``_full``)
                if op.subject in subjects:  # type: ignore[union-attr]
                    out.add(t)
            elif self.covers(op, t):
                out.update(t.slots)
        return out

    def take_live(self, subjects: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """The live read's answer read elsewhere (``Backend.begin_write``): rows of
        (subject key, slot, predicate) of ``subjects``' hashes."""
        wanted = set(subjects)
        for key, slot, pred in rows:
            if key in wanted:
                self.live.setdefault(key, []).append((slot, pred))

    def _load_live(self, subjects: list[str]) -> None:
        if not subjects:
            return
        if self.whole:
            wanted = set(subjects)
            hashes = [_subject_hash(k) for k in subjects]  # memoised: the rows' too
            at_key, at_slot, at_pred = _COL["subject_key"], _COL["slot"], _COL["predicate"]
            whole = [
                r
                for r in _LIVE_ROWS.rows(self.conn, self.scope.columns(), hashes)
                if r[at_key] in wanted
            ]
            for r in whole:
                self.live.setdefault(r[at_key], []).append((r[at_slot], r[at_pred]))
            _slot_versions(whole, self.current)
            self.subjects = wanted
            return
        own = self.scope.columns()
        for chunk in chunks(subjects):
            wanted = set(chunk)
            rows = self.conn.execute(
                select(versions.c.subject_key, versions.c.slot, versions.c.predicate).where(
                    *(versions.c[k] == v for k, v in own.items()),
                    of(self.conn).one_of(versions.c.subject_hash, [key_hash(k) for k in chunk]),
                    versions.c.superseded_at.is_(None),
                )
            )
            for r in rows:
                if r.subject_key in wanted:
                    self.live.setdefault(r.subject_key, []).append((r.slot, r.predicate))

    def _load_facts(self, fact_ids: list[str]) -> None:
        for chunk in chunks(fact_ids):
            rows = self.conn.execute(
                select(versions).where(
                    scope_within(versions, self.scope),
                    versions.c.fact_id.in_(chunk),
                )
            ).mappings()
            for r in rows:
                self.by_fact.setdefault(r["fact_id"], []).append(r)

    def missing(self, fact_id: str) -> ChronomemError:
        return missing_fact(self.conn, self.scope, fact_id)


class Writer:
    """Applies write operations inside the caller's transaction: the only code that
    changes ``cm_versions`` (docs/design.md §3). ``on_insert`` runs on every batch
    of inserted version rows (retrieval's indexer) in the same transaction."""

    def __init__(self, registry: Registry, on_insert: InsertHook | None = None):
        self.registry = registry
        self.on_insert = on_insert

    def apply(
        self,
        conn: Connection,
        scope: Scope,
        ops: Sequence[WriteOp],
        now_us: int,
        *,
        lock: Callable[[Connection, str, Sequence[str]], None],
        for_update: bool,
        recorded_at: int | None = None,
        planned: PlannedWrite | None = None,
    ) -> Receipt:
        """Apply ``ops`` as ``scope``'s write at one transaction time and return what
        changed. In order: stamp the tenant's clock row (``now_us``, or the import's
        ``recorded_at``, which must not go back in a touched slot's history:
        ``TimeTravel``); resolve each op to its slots (canonical predicate, folded
        keys; ops by id and ops without an object read their slots); ``lock`` the
        slots and load their current versions (``FOR UPDATE`` when ``for_update``);
        feed each op to its slot's ``SlotPlan``; then close, insert, index and cite
        (``_flush``). Any error leaves the caller's transaction to roll back.

        ``planned`` (without row locks, in a scope that reads no enclosing one:
        ``writes.apply_planned``): its subjects are read whole by the live read,
        after the stamp, and its plan's operations, made from their rows, come
        before ``ops``: one read serves the plan and the writer."""
        tenant = scope.tenant
        db = of(conn)
        ensures: dict[str, AssertOp] = {}
        kept_by_slot: dict[str, _Direct] = {}
        # new versions of slots holding none, their rows made together (``_fresh``)
        fresh: list[_Fresh] = []
        # a planned write's document puts applied set-wise (``_documents``): their
        # slots, and for each overwrite the close of the running version and its piece
        doc_slots: list[str] | None = None
        cut: dict[str, _Cut] = {}
        early = self._early(conn, scope, ops) if db.sends_together() and not planned else None
        if early is not None:
            tx, targets, slots, current = self._begin_together(
                conn, scope, ops, now_us, recorded_at, early, lock, for_update
            )
        else:
            # The tenant's transaction clock is locked first and held until commit: the
            # writers of a tenant then resolve their targets (which slots an end of every
            # value or a document put touches) in commit order, and their stamps follow
            # commit order too (exact replay).
            # Where statements are queued (PostgreSQL) the stamp goes to the server
            # with the first of the reads below, which run behind it (the clock row).
            later = stamp_later(conn, tenant, now_us, at=recorded_at)
            if later is None:
                tx, registry_version = stamp_row(conn, tenant, now_us, at=recorded_at)
            # without row locks the live read takes whole rows, and the slots it
            # covers are not read again (``_Found.covers``)
            docs: list[DocumentOp] = []
            if planned is None:
                found = _Found.load(conn, scope, ops, whole=not for_update)
            else:
                assert not for_update, "a planned write's plan reads the live read's rows"
                found = _Found.load(conn, scope, planned.then, whole=True, planned=planned.subjects)
                rows = found.rows_at(planned.subjects, planned.valid_at)
                plan = [*checked_plan(planned, rows), *planned.then]
                ops, docs = _split_documents(plan, ops)
            if later is not None:
                tx, registry_version = later()
            if docs:
                # a plan of document puts alone: set-wise when each is simple
                doc_slots = _documents(docs, found, scope, tx, fresh, cut)
                if doc_slots is None:
                    ops = [*expanded(docs), *ops]
            index = self.registry.load(conn, tenant, version=registry_version)
            targets = [self._target(scope, op, index, found) for op in ops]
            touches = _touches(targets)
            # the slots the operations touch, and those of set-wise document puts
            # (planned already: ``_documents``)
            general = sorted(touches)
            slots = sorted([*general, *doc_slots]) if doc_slots else general
            lock(conn, tenant, slots)
            covered = found.covered(ops, targets)
            # without row locks, many ensures' slots are read narrowly (``_ensured``)
            ensures = {} if for_update else _ensured_slots(ops, targets, touches, covered)
            current = self._load(
                conn,
                tenant,
                [s for s in general if s not in covered and s not in ensures],
                for_update,
            )
            for s in covered:
                if s in found.current:
                    current[s] = found.current[s]
            if ensures:
                kept_by_slot = self._ensured(conn, tenant, ensures, current)
        if recorded_at is not None:
            self._refuse_time_travel(conn, tenant, slots, recorded_at)
        # A slot touched by one assert alone, holding no version or already holding
        # the asserted value, has a trivial plan (``statemachine.trivial_assert``):
        # it is written directly, without a ``SlotPlan``. Any other slot is planned.
        if early is not None:
            touches = _touches(targets)
        plans: dict[str, SlotPlan] = {}
        direct: dict[str, _Direct] = {}
        new_sources: list[dict[str, Any]] = []
        for op, held in zip(ops, targets, strict=True):
            if isinstance(held, str):  # an exact assert, held as its slot key (``_full``)
                if touches[held] == 1:
                    if held in ensures:
                        # read narrowly (``_ensured``): its slot holds it, or was read whole
                        kept = kept_by_slot.get(held)
                    elif _ensures(op):
                        # an assert that only ensures a fact (an adapter's index entry):
                        # when the slot already holds it, the stored version is left
                        # unchanged, as ``_direct`` would decide, without a
                        # ``SlotVersion`` or a plan
                        kept = _kept(current.get(held, ()), op)
                    else:
                        kept = None
                    if kept is not None:
                        direct[held] = kept
                        continue
                    assert isinstance(op, AssertOp)
                    loaded = current.get(held)
                    if not loaded and _fresh(op, tx, held, op.subject, op.predicate, op.obj, fresh):
                        if op.sources:
                            _cite(op, fresh[-1][7], tx, new_sources)
                        continue
                    done = self._direct(
                        op, held, op.subject, op.predicate, op.obj,
                        _versions_of(loaded or ()), scope, tx, new_sources,
                    )  # fmt: skip
                    if done is not None:
                        direct[held] = done
                        continue
                t = _full(op, held)
            else:
                t = held
                if not t.slots:  # nothing to plan: an end of what a subject does not hold
                    continue
                if isinstance(op, AssertOp) and touches[t.slots[0]] == 1:
                    slot = t.slots[0]
                    loaded = current.get(slot)
                    if not loaded and _fresh(
                        op, tx, slot, t.subject_key, t.predicate, t.object_key or "", fresh
                    ):
                        if op.sources:
                            _cite(op, fresh[-1][7], tx, new_sources)
                        continue
                    done = self._direct(
                        op, slot, t.subject_key, t.predicate, t.object_key or "",
                        _versions_of(loaded or ()), scope, tx, new_sources,
                    )  # fmt: skip
                    if done is not None:
                        direct[slot] = done
                        continue
            for s in t.slots:
                if s not in plans:
                    plans[s] = SlotPlan(_versions_of(current.get(s, ())))
            self._plan(t, plans, scope, tx, new_sources)
        if fresh:
            _fresh_rows(fresh, scope, tx, direct)
        return self._flush(conn, scope, slots, plans, direct, tx, new_sources, cut)

    def _ensured(
        self, conn: Connection, tenant: str, ensures: dict[str, AssertOp], current: Loaded
    ) -> dict[str, _Direct]:
        """What ``_kept`` finds for each ensure's slot (a slot not in the answer has
        none), read narrowly (``_ENSURED_ROWS``): only the columns it compares. A
        slot that holds versions but not the ensured one (an entry ended or
        overwritten) is read whole into ``current`` (it is planned); an empty one
        needs nothing more."""
        narrow: dict[str, tuple[Sequence[Any], ...]] = {}
        for row in _ENSURED_ROWS.rows(conn, {"tenant": tenant}, sorted(ensures)):
            slot = row[0]
            had = narrow.get(slot)
            narrow[slot] = (row,) if had is None else (*had, row)
        out: dict[str, _Direct] = {}
        again: list[str] = []
        for slot, rows in narrow.items():
            kept = _kept(rows, ensures[slot], _ENSURED_KEPT_OF)
            if kept is None:
                again.append(slot)
            else:
                out[slot] = kept
        if again:
            current.update(self._load(conn, tenant, sorted(again), False))
        return out

    # -- stamping, locking and loading in one round trip --------------------------
    def _early(
        self, conn: Connection, scope: Scope, ops: Sequence[WriteOp]
    ) -> tuple[dict[str, Any] | None, list[Held | None], list[str]] | None:
        """The targets of ``ops`` resolved before the stamp, with the registry index
        they used (None: no op needs one) and the subjects whose live slots the
        rest need, when that needs no read but theirs: every op is an assert or an
        end naming its object (its slots follow from its names), an end of every
        value or an end of a subject's other facts (their slots follow from the
        subject's live slots, read with the stamp: their targets are None here);
        and the tenant's registry index is cached unless no op needs it. None
        otherwise (a write by id), or when resolving fails (the ordinary path
        then raises the same error, after the stamp as before)."""
        exact = True
        subjects: dict[str, None] = {}
        for op in ops:
            if isinstance(op, EndOthersOp) or (isinstance(op, EndOp) and op.obj is None):
                subjects[op.subject if op.exact else fold(op.subject)] = None
            elif not isinstance(op, _ASSERT_OR_END):
                return None
            exact = exact and (op.exact or isinstance(op, EndOthersOp))
        index = None if exact else self.registry.peek(scope.tenant)
        if index is None and not exact:
            return None
        try:
            no_reads = _Found(conn, scope)
            targets: list[Held | None] = [
                None if _reads_live(op) else self._target(scope, op, index or {}, no_reads)
                for op in ops
            ]
        except Exception:
            return None
        return index, targets, list(subjects)

    def _begin_together(
        self,
        conn: Connection,
        scope: Scope,
        ops: Sequence[WriteOp],
        now_us: int,
        recorded_at: int | None,
        early: tuple[dict[str, Any] | None, list[Held | None], list[str]],
        lock: Callable[[Connection, str, Sequence[str]], None],
        for_update: bool,
    ) -> tuple[int, list[Held], list[str], Loaded]:
        """The stamp, the slot locks, the slots' load and the live read of the
        subjects whose slots follow from it, in one round trip
        (``Backend.begin_write``), for targets resolved before the stamp
        (``_early``): clock row, then locks, then load, then live read, each
        statement run after the one before it returned (its snapshot taken
        behind the clock row and the locks). The targets that needed the live
        read are resolved then; slots they touch beyond those locked are locked
        and loaded then (an end of values the write does not assert: one round
        trip more). The clock row is locked from the stamp on, so the registry
        cannot change after it: when the index the targets used is not the
        stamped version's, they are resolved again, and slots they gained are
        locked and loaded then (a registration since this process last read the
        registry)."""
        tenant = scope.tenant
        if recorded_at is not None and recorded_at > MAX_US:
            raise _calendar_end()
        index, early_targets, subjects = early
        slots = sorted({s for t in early_targets if t is not None for s in _slots_of(t)})
        own = {k: v for k, v in scope.columns().items() if k != "tenant"}
        live = (own, [key_hash(k) for k in subjects]) if subjects else None
        began = of(conn).begin_write(conn, tenant, now_us, recorded_at, slots, live)
        assert began is not None  # sends_together() said so
        tx, registry_version, rows, live_rows = began
        if tx > MAX_US:
            raise _calendar_end()
        current: Loaded = {**self._versions(rows)}
        found = _Found(conn, scope)
        found.take_live(subjects, live_rows)
        fresh = index
        if index is not None:
            fresh = self.registry.load(conn, tenant, version=registry_version)
        if fresh is not index or subjects:
            targets = [
                self._target(scope, op, fresh or {}, found) if t is None or fresh is not index
                else t
                for op, t in zip(ops, early_targets, strict=True)
            ]  # fmt: skip
        else:
            targets = [t for t in early_targets if t is not None]
        moved = sorted({s for t in targets for s in _slots_of(t)})
        gained = sorted(set(moved) - set(slots))
        if gained:
            lock(conn, tenant, gained)
            current.update(self._load(conn, tenant, gained, for_update))
        return tx, targets, moved, current

    # -- resolving ------------------------------------------------------------
    def _target(self, scope: Scope, op: WriteOp, index: Any, found: _Found) -> Held:
        if type(op) is AssertOp:
            if op.exact:  # an adapter's assert: its names are its keys
                _check_name(op.predicate)
                many = op.cardinality is not Cardinality.ONE
                return _slot_key(scope, op.subject, op.predicate, op.obj if many else None)
            # a folded assert (``Memory.assertion``'s), what the general branch below
            # makes of it without its type tests: one slot, keyed by its folded names
            name, many, skey, okey = _folded(op, index)
            _check_name(name)
            return _Target(
                op, (_slot_key(scope, skey, name, okey if many else None),), skey, name, okey
            )
        if isinstance(op, EndOthersOp):
            skey = op.subject if op.exact else fold(op.subject)
            pairs = found.live.get(skey)
            if not pairs:  # a subject holding nothing (a new item's put): nothing to end
                return _NOTHING
            keep = set(op.keep) if op.exact else {_pred_key(p) for p in op.keep}
            return _Target(
                op, tuple(sorted({slot for slot, pred in pairs if pred not in keep})), skey
            )
        if isinstance(op, _ASSERT_OR_END):
            if op.exact:
                name, skey = op.predicate, op.subject
                okey = op.obj
                many = op.cardinality is not Cardinality.ONE
            else:
                name, many, skey, okey = _folded(op, index)
            _check_name(name)
            if isinstance(op, EndOp) and many and okey is None:
                # every value of a MANY predicate, in the writer's own scope
                live = found.live.get(skey, ())
                slots = tuple(sorted({slot for slot, pred in live if pred == name}))
            else:
                slots = (_slot_key(scope, skey, name, okey if many else None),)
            return _Target(op, slots, skey, name, okey)
        rows = found.by_fact.get(op.fact_id, [])
        if not rows:
            raise found.missing(op.fact_id)
        current = tuple(sorted({r["slot"] for r in rows if r["superseded_at"] is None}))
        if isinstance(op, RetractOp):
            return _Target(op, current)  # retracting what is gone already: nothing to do
        if not current:
            raise StaleFact(f"fact {op.fact_id!r} has no current version (retracted or corrected)")
        # correct: the replacement lives in the slot of the new object (MANY) or the same slot (ONE)
        r = rows[0]
        okey = op.obj if op.exact else fold(op.obj)
        row_scope = Scope(
            r["tenant"], r["user_id"] or None, r["agent_id"] or None, r["session_id"] or None
        )
        one_slot = slot_key(row_scope, r["subject_key"], r["predicate"], None)
        many = r["slot"] != one_slot  # the slot's shape tells its cardinality
        new_slot = slot_key(row_scope, r["subject_key"], r["predicate"], okey) if many else one_slot
        return _Target(
            op,
            (*current, new_slot) if new_slot not in current else current,
            r["subject_key"],
            r["predicate"],
            okey,
            new_slot=new_slot,
        )

    def _load(self, conn: Connection, tenant: str, slots: list[str], for_update: bool) -> Loaded:
        """The current versions of ``slots`` (``FOR UPDATE`` when ``for_update``): in
        one statement where the backend reads any number of slots at once
        (``Backend.slot_rows``), else in parts of a bounded ``IN`` list."""
        out: Loaded = {}
        if not slots:
            return out
        rows = of(conn).slot_rows(conn, tenant, slots, for_update)
        if rows is None and not for_update:
            rows = _SLOT_ROWS.rows(conn, {"tenant": tenant}, slots)
        if rows is not None:
            _slot_versions(rows, out)
            return out
        for chunk in chunks(slots):
            q = (
                select(versions)
                .where(
                    versions.c.tenant == tenant,
                    of(conn).one_of(versions.c.slot, chunk),
                    versions.c.superseded_at.is_(None),
                )
                .with_for_update()
            )
            for slot, found in self._versions(conn.execute(q).mappings()).items():
                out[slot] = [*out.get(slot, ()), *found]
        return out

    @staticmethod
    def _versions(rows: Iterable[Any]) -> dict[str, list[SlotVersion]]:
        """Current version rows as each slot's ``SlotVersion``s."""
        out: dict[str, list[SlotVersion]] = {}
        for r in rows:
            row = dict(r)
            out.setdefault(row["slot"], []).append(
                SlotVersion(
                    row["id"],
                    row["fact_id"],
                    row["object"],
                    row["object_key"],
                    row["valid_from"],
                    row["valid_to"],
                    extra=_row_extra(row),
                )
            )
        return out

    def _refuse_time_travel(self, conn: Connection, tenant: str, slots: list[str], at: int) -> None:
        if not slots:
            return
        latest = conn.execute(
            select(func.max(func.coalesce(versions.c.superseded_at, versions.c.recorded_at))).where(
                versions.c.tenant == tenant, versions.c.slot.in_(slots)
            )
        ).scalar()
        last_recorded = conn.execute(
            select(func.max(versions.c.recorded_at)).where(
                versions.c.tenant == tenant, versions.c.slot.in_(slots)
            )
        ).scalar()
        newest = max(x for x in (latest, last_recorded, -(2**62)) if x is not None)
        if at <= newest:
            raise TimeTravel(
                f"recorded_at {from_us(at).isoformat()} is not after this slot's last belief "
                f"change ({from_us(newest).isoformat()}); imports must move forward in time"
            )

    # -- planning ---------------------------------------------------------------
    def _direct(
        self,
        op: AssertOp,
        slot: str,
        subject_key: str,
        predicate: str,
        key: str,
        current: list[SlotVersion],
        scope: Scope,
        tx: int,
        new_sources: list[dict[str, Any]],
    ) -> _Direct | None:
        """An assert's outcome in ``slot`` (its target's slot, subject key, predicate
        and object key: an exact assert's are its own names, no ``_Target`` made)
        when the slot's plan is trivial (``trivial_assert``), without a
        ``SlotPlan``; None when the slot needs one."""
        op, vf = _interval(op, tx)
        found = trivial_assert(
            current, key, vf, op.valid_to, bounded=op.bounded,
            explicit_start=op.valid_from is not None,
        )  # fmt: skip
        if found is None:
            return None
        if found is NEW:
            fid = new_id()
            # the version's row straight away (what ``_version_row`` makes of the
            # ``SlotVersion`` a plan would insert, without the version or its extra)
            done: _Direct = _new_row(
                op, slot, subject_key, predicate, scope, new_id(), fid, key, vf,
                op.valid_to if op.bounded else None, tx,
            )  # fmt: skip
        else:
            assert isinstance(found, SlotVersion)
            fid = found.fact_id
            done = (fid, found.id)
        _cite(op, fid, tx, new_sources)
        return done

    def _plan(
        self,
        t: _Target,
        plans: dict[str, SlotPlan],
        scope: Scope,
        tx: int,
        new_sources: list[dict[str, Any]],
    ) -> None:
        op = t.op
        if isinstance(op, AssertOp):
            op, vf = _interval(op, tx)
            extra = _assert_extra(t, op, scope)
            plan = plans[t.slots[0]]
            version = plan.assert_(
                op.obj,
                t.object_key or "",
                vf,
                op.valid_to,
                bounded=op.bounded,
                explicit_start=op.valid_from is not None,
                extra=extra,
            )
            fid = version.fact_id if version else plan.outcome.fact_ids[-1]
            new_sources += [
                {"fact_id": fid, "episode_id": e, "recorded_at": tx, "extractor": op.extractor}
                for e in op.sources
            ]
        elif isinstance(op, EndOp):
            for s in t.slots:
                plans[s].end(op.at if op.at is not None else tx, t.object_key)
        elif isinstance(op, EndOthersOp):
            for s in t.slots:
                plans[s].end(op.at if op.at is not None else tx, None)
        elif isinstance(op, RetractOp):
            for s in t.slots:
                plans[s].retract(op.fact_id)
        elif isinstance(op, CorrectOp):
            gone = [v for s in t.slots for v in plans[s].retract(op.fact_id)]
            target = plans[t.new_slot]
            for v in gone:
                extra = {**v.extra, "slot": t.new_slot}
                if op.extractor:
                    extra["extractor"] = op.extractor
                target.assert_(
                    op.obj,
                    t.object_key or "",
                    v.valid_from,
                    v.valid_to,
                    bounded=True,
                    explicit_start=True,
                    extra=extra,
                )

    # -- writing ------------------------------------------------------------------
    def _flush(
        self,
        conn: Connection,
        scope: Scope,
        slots: list[str],
        plans: dict[str, SlotPlan],
        direct: dict[str, _Direct],
        tx: int,
        new_sources: list[dict[str, Any]],
        cut: dict[str, _Cut],
    ) -> Receipt:
        tenant = scope.tenant
        receipt = Receipt(recorded_at=from_us(tx))
        closes: list[dict[str, Any]] = []
        inserts: list[dict[str, Any]] = []
        merges: list[tuple[str, str]] = []
        fact_ids: dict[str, None] = {}  # in first-seen order, without a quadratic scan
        stored: set[str] = set()  # fact ids of stored versions the plans loaded
        for slot in slots:  # in slot order, planned or not
            if cut and slot in cut:  # an overwritten document's running version (``_documents``)
                close, piece = cut[slot]
                closes.append(close)
                inserts.append(piece)
                receipt.superseded.append(close["vid"])
            d = direct.get(slot)
            if d is not None:
                if type(d) is dict:  # a new version's row
                    inserts.append(d)
                    receipt.added.append(d["id"])
                    fact_ids[d["fact_id"]] = None
                else:  # the stored version, unchanged
                    fid, unchanged = d
                    receipt.unchanged.append(unchanged)
                    stored.add(fid)
                    fact_ids[fid] = None
                continue
            plan = plans.get(slot)
            if plan is None:
                continue
            stored |= plan.stored_fact_ids
            for vid, (reason, by) in plan.closes.items():
                closes.append({"vid": vid, "by": by, "reason": reason})
            for v in plan.inserts.values():
                inserts.append(_version_row(tenant, v, tx))
            o = plan.outcome
            receipt.added += o.added
            receipt.unchanged += o.unchanged
            receipt.ended += o.ended
            receipt.retracted += o.retracted
            receipt.superseded += o.superseded
            fact_ids.update(dict.fromkeys(o.fact_ids))
            merges += o.merges
        # a fact born and dropped within this write was never stored: not in the receipt
        kept = {i["fact_id"] for i in inserts} | stored
        receipt.fact_ids = [f for f in fact_ids if f in kept]
        receipt.superseded_count = len(closes)
        # close before insert: the I1 exclusion constraint checks every row
        # PostgreSQL queues these (``Backend.deferring``): they go to the server
        # with the next statement or the COMMIT, in one round trip
        db = of(conn)
        with db.deferring(conn):
            db.close_versions(conn, tenant, tx, closes)
            if inserts:
                db.insert_rows(conn, versions, inserts)
                if self.on_insert is not None:
                    self.on_insert(conn, inserts)
        if inserts:
            db.after_insert_versions(conn, len(inserts))
        if new_sources:
            self._check_episodes(conn, scope, {s["episode_id"] for s in new_sources})
            db.insert_ignore(conn, sources, [{"tenant": tenant, **s} for s in new_sources])
        for gone, into in merges:  # a merged fact's provenance moves to the survivor
            moved = conn.execute(
                select(sources.c.episode_id, sources.c.extractor).where(
                    sources.c.tenant == tenant, sources.c.fact_id == gone
                )
            ).all()
            db.insert_ignore(
                conn,
                sources,
                [
                    {
                        "tenant": tenant,
                        "fact_id": into,
                        "episode_id": e,
                        "recorded_at": tx,
                        "extractor": x,
                    }
                    for e, x in moved
                ],
            )
        return receipt

    @staticmethod
    def _check_episodes(conn: Connection, scope: Scope, ids: set[str]) -> None:
        """A fact may cite only episodes its writer can see."""
        found = set(
            conn.execute(
                select(episodes_table.c.id).where(
                    scope_visible(episodes_table, scope), episodes_table.c.id.in_(list(ids))
                )
            ).scalars()
        )
        missing = ids - found
        if missing:
            raise NotFound(f"source episode(s) not found: {sorted(missing)}")


# An assert into a slot that holds no version, one operation alone touching it
# (``_fresh``): (slot, op, subject key, predicate, object key, valid from, valid to,
# fact id, version id), its row made by ``_fresh_rows``.
_Fresh = tuple[str, AssertOp | DocumentOp, str, str, str, int, int | None, str, str]

# An overwritten document's running version (``_documents``): its close (as
# ``_flush`` closes a plan's) and the row of its piece before the new version.
_Cut = tuple[dict[str, Any], dict[str, Any]]


def _split_documents(
    planned: list[PlannedOp], ops: Sequence[WriteOp]
) -> tuple[list[WriteOp], list[DocumentOp]]:
    """A planned write's operations (the plan's, then its ``then``) and ``ops``:
    when the plan returned document puts alone, of distinct subjects no other
    operation names, the other operations and those puts (``_documents`` may
    apply them set-wise); else every operation, the puts as their ``ops()``."""
    docs = [op for op in planned if type(op) is DocumentOp]
    rest = [op for op in planned if type(op) is not DocumentOp]
    if not docs:
        return [*rest, *ops], []  # type: ignore[list-item]  # no DocumentOp in rest
    subjects = {d.subject for d in docs}
    alone = (
        len(subjects) == len(docs)
        and all(_named_subject(op) not in subjects for op in (*rest, *ops))
        and all(type(op) is not DocumentOp for op in planned[len(docs) :])
    )
    if not alone:
        return [*expanded(planned), *ops], []
    return [*rest, *ops], docs  # type: ignore[list-item]  # no DocumentOp in rest


def _named_subject(op: PlannedOp) -> str | None:
    """The subject key an operation's slots belong to (None: it names a fact)."""
    if isinstance(op, _NAMING):
        return op.subject if op.exact else fold(op.subject)
    return None


def _documents(
    docs: list[DocumentOp],
    found: _Found,
    scope: Scope,
    tx: int,
    fresh: list[_Fresh],
    cut: dict[str, _Cut],
) -> list[str] | None:
    """Document puts of subjects read whole (``found``) applied set-wise: the
    slots they write, their new versions added to ``fresh`` and each overwritten
    version to ``cut``; or None, nothing added, when one is not simple. Simple:
    the put's slot holds no version of its object, and at most one version
    running at ``tx`` (valid to none or later), which starts before ``tx``; and
    when the put ends the subject's other values, none of them runs at ``tx``.
    Then ``SlotPlan.assert_`` inserts the new version after closing that running
    one and re-inserting its part before ``tx`` (an earlier re-put's closed-off
    piece, ended by ``tx``, stays as it is), and the end of the other values
    changes no row (``tests/test_document_puts.py`` holds both to the same rows).
    Ids are drawn in the order that path draws them."""
    picked: list[tuple[str, DocumentOp, tuple[Any, ...] | None]] = []
    current, live = found.current, found.live
    for d in docs:
        _check_name(d.predicate)
        slot = _slot_key(scope, d.subject, d.predicate, None)
        running: tuple[Any, ...] | None = None
        if live.get(d.subject):
            if d.end_others and _runs_beside(d, slot, found, tx):
                return None
            for row in current.get(slot, ()):
                if type(row) is not tuple:
                    return None
                _, _, okey, start, end = _KEPT_OF(row)
                if okey == d.obj:
                    return None  # a same object: unchanged or merged (planned)
                if end is None or end > tx:  # the new version cuts it
                    if running is not None or start >= tx:
                        return None
                    running = row
        picked.append((slot, d, running))
    tenant = scope.tenant
    # the ids in the order the general path draws them: the fact's, then (an
    # overwrite) the piece's, then the new version's
    ids = iter(new_ids(2 * len(picked) + sum(running is not None for _, _, running in picked)))
    for slot, d, running in picked:
        fid = next(ids)
        if running is None:
            vid = next(ids)
        else:
            piece = _stored_version(running)  # its part before ``tx``
            closed = piece.id
            piece.id = next(ids)
            piece.valid_to = tx
            vid = next(ids)
            close = {"vid": closed, "by": vid, "reason": CloseReason.SUPERSEDED}
            cut[slot] = (close, _version_row(tenant, piece, tx))
        fresh.append((slot, d, d.subject, d.predicate, d.obj, tx, None, fid, vid))
    return [slot for slot, _, _ in picked]


def _runs_beside(d: DocumentOp, slot: str, found: _Found, tx: int) -> bool:
    """Whether a value of ``d``'s subject in another slot than ``d``'s runs at
    ``tx`` (an end at ``tx`` would cut it: ``SlotPlan.end``)."""
    for other, _ in found.live.get(d.subject, ()):
        if other == slot:
            continue
        for row in found.current.get(other, ()):
            if type(row) is not tuple:
                return True
            _, _, _, start, end = _KEPT_OF(row)
            if start < tx and (end is None or end > tx):
                return True
    return False


def _fresh(
    op: AssertOp, tx: int, slot: str, skey: str, pred: str, key: str, out: list[_Fresh]
) -> bool:
    """Whether ``op``, the one assert into ``slot``, which holds no version, is a
    plain new version (no ``valid_for`` to resolve, a valid interval): then it is
    added to ``out`` with its fact and version ids, drawn as ``_direct`` draws them
    (``trivial_assert`` is ``NEW`` for an empty slot). Otherwise ``_direct`` takes
    it (and raises what ``_interval`` raises)."""
    if op.valid_for is not None:
        return False
    vf = op.valid_from if op.valid_from is not None else tx
    vt = op.valid_to if op.bounded else None
    if vt is not None and vt <= vf:
        return False
    fid, vid = new_id_pair()
    out.append((slot, op, skey, pred, key, vf, vt, fid, vid))
    return True


def _cite(op: AssertOp, fid: str, tx: int, new_sources: list[dict[str, Any]]) -> None:
    """The citations of an assert's new fact (as ``_direct`` lists them)."""
    if op.sources:
        new_sources += [
            {"fact_id": fid, "episode_id": e, "recorded_at": tx, "extractor": op.extractor}
            for e in op.sources
        ]


def _fresh_rows(fresh: list[_Fresh], scope: Scope, tx: int, direct: dict[str, _Direct]) -> None:
    """The ``cm_versions`` rows of ``_fresh`` asserts into ``direct``, in one loop:
    what ``_new_row`` makes of each (the same keys in the same order), the scope's
    columns and each subject key's hash computed once per batch."""
    tenant = scope.tenant
    user, agent, session = scope.user or "", scope.agent or "", scope.session or ""
    hashes: dict[str, str] = {}
    version_hash = _version_hash
    for slot, op, skey, pred, key, vf, vt, fid, vid in fresh:
        sh = hashes.get(skey)
        if sh is None:
            sh = hashes[skey] = _subject_hash(skey)
        md = op.metadata
        direct[slot] = {
            "tenant": tenant,
            "id": vid,
            "fact_id": fid,
            "user_id": user,
            "agent_id": agent,
            "session_id": session,
            "slot": slot,
            "subject": op.subject,
            "subject_key": skey,
            "subject_hash": sh,
            "predicate": pred,
            "object": op.obj,
            "object_key": key,
            "valid_from": vf,
            "valid_to": vt,
            "recorded_at": tx,
            "superseded_at": None,
            "superseded_by": None,
            "closed_reason": None,
            "extractor": op.extractor,
            "metadata": "{}" if type(md) is dict and not md else _metadata_json(md),
            "index_text": op.index_text,
            "content_hash": version_hash(skey, pred, key, vf),
        }


def _interval(op: AssertOp, tx: int) -> tuple[AssertOp, int]:
    """The assert with ``valid_for`` resolved to a bounded ``valid_to``, and its
    ``valid_from`` (the transaction time when not given); a bad interval raises."""
    vf = op.valid_from if op.valid_from is not None else tx
    if op.valid_for is not None:
        if op.valid_from is not None or op.valid_to is not None or op.valid_for <= 0:
            raise InvalidInterval("valid_for is a positive length from the transaction time, alone")
        op = replace(op, valid_to=tx + op.valid_for, bounded=True)
    if op.bounded and op.valid_to is not None and op.valid_to <= vf:
        raise InvalidInterval(
            f"valid_to {from_us(op.valid_to).isoformat()} is not after valid_from "
            f"{from_us(vf).isoformat()}"
        )
    return op, vf


def _assert_extra(t: _Target, op: AssertOp, scope: Scope) -> dict[str, Any]:
    """The row data an asserted version carries (and the pieces cut from it)."""
    c = scope.columns()
    return {
        "user_id": c["user_id"],
        "agent_id": c["agent_id"],
        "session_id": c["session_id"],
        "slot": t.slots[0],
        "subject": op.subject,
        "subject_key": t.subject_key,
        "subject_hash": key_hash(t.subject_key),
        "predicate": t.predicate,
        "extractor": op.extractor,
        "metadata": _metadata_json(op.metadata),
        "index_text": op.index_text,
    }


def _new_row(
    op: AssertOp,
    slot: str,
    skey: str,
    pred: str,
    scope: Scope,
    vid: str,
    fid: str,
    key: str,
    vf: int,
    vt: int | None,
    tx: int,
) -> dict[str, Any]:
    """The ``cm_versions`` row of an assert's new version in an empty slot: what
    ``_version_row`` gives for the ``SlotVersion`` a plan inserts there (the
    assert's ``_assert_extra``), in the same key order."""
    return {
        "tenant": scope.tenant,
        "id": vid,
        "fact_id": fid,
        "user_id": scope.user or "",
        "agent_id": scope.agent or "",
        "session_id": scope.session or "",
        "slot": slot,
        "subject": op.subject,
        "subject_key": skey,
        "subject_hash": key_hash(skey),
        "predicate": pred,
        "object": op.obj,
        "object_key": key,
        "valid_from": vf,
        "valid_to": vt,
        "recorded_at": tx,
        "superseded_at": None,
        "superseded_by": None,
        "closed_reason": None,
        "extractor": op.extractor,
        "metadata": _metadata_json(op.metadata),
        "index_text": op.index_text,
        "content_hash": _version_hash(skey, pred, key, vf),
    }


def _version_row(tenant: str, v: SlotVersion, tx: int) -> dict[str, Any]:
    """The ``cm_versions`` row of a planned version, recorded at ``tx``."""
    x = v.extra
    return {
        "tenant": tenant,
        "id": v.id,
        "fact_id": v.fact_id,
        "user_id": x["user_id"],
        "agent_id": x["agent_id"],
        "session_id": x["session_id"],
        "slot": x["slot"],
        "subject": x["subject"],
        "subject_key": x["subject_key"],
        "subject_hash": x["subject_hash"],
        "predicate": x["predicate"],
        "object": v.object,
        "object_key": v.object_key,
        "valid_from": v.valid_from,
        "valid_to": v.valid_to,
        "recorded_at": tx,
        "superseded_at": None,
        "superseded_by": None,
        "closed_reason": None,
        "extractor": x["extractor"],
        "metadata": x["metadata"],
        "index_text": x.get("index_text"),
        "content_hash": _version_hash(x["subject_key"], x["predicate"], v.object_key, v.valid_from),
    }


def planned_ops(planned: PlannedWrite, rows: list[FactRow]) -> list[WriteOp]:
    """The plan's operations for ``rows`` (``checked_plan``), each ``DocumentOp``
    as its ``ops()``, then ``planned.then``."""
    return [*expanded(checked_plan(planned, rows)), *planned.then]


def checked_plan(planned: PlannedWrite, rows: list[FactRow]) -> list[PlannedOp]:
    """The plan's operations for ``rows``, checked: asserts, document puts of
    subjects it read, and ends whose slots the read covers."""
    ops = list(planned.plan(rows))
    read = set(planned.subjects)
    for op in ops:
        kind = type(op)
        if kind is AssertOp or (kind is EndOp and op.obj is not None):  # type: ignore[union-attr]
            continue
        if kind in (EndOthersOp, EndOp, DocumentOp) and op.exact and op.subject in read:  # type: ignore[union-attr]
            continue
        raise InvalidInput(
            "a planned write's plan returns asserts, ends and document puts; an end of a "
            f"subject's values must name a subject it read exactly, not {op!r}"
        )
    return ops


def missing_fact(conn: Connection, scope: Scope, fact_id: str) -> ChronomemError:
    """NotFound, or ScopeError when the fact is visible but owned by an enclosing scope."""
    shared = conn.execute(
        select(versions.c.id)
        .where(scope_visible(versions, scope), versions.c.fact_id == fact_id)
        .limit(1)
    ).first()
    if shared is not None:
        return ScopeError(
            f"fact {fact_id!r} belongs to an enclosing scope (shared memory); "
            "change it through the scope that owns it"
        )
    return NotFound(f"no fact {fact_id!r} in this scope")


def _metadata_json(metadata: Any) -> str:
    """The stored form of a fact's metadata (most writes have none: ``{}``)."""
    if isinstance(metadata, dict) and not metadata:
        return "{}"
    return json.dumps(metadata, sort_keys=True, ensure_ascii=False)


@functools.lru_cache(maxsize=4096)
def _pred_key_memo(name: str) -> str:
    return fold_predicate(require_text(name, "predicate"))


def _pred_key(name: str) -> str:
    if type(name) is str and len(name) <= _MEMO_CHARS:
        return _pred_key_memo(name)
    return fold_predicate(require_text(name, "predicate"))
