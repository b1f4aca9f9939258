"""``ChronomemStorage``: CrewAI's ``StorageBackend`` protocol over chronomem.

For users who keep CrewAI's own ``Memory`` (its LLM analysis, its RecallFlow)
and want its records kept bitemporally. Each ``MemoryRecord`` is one chronomem
fact ``(record id, crewai_record, content)`` in a single-valued slot, with the
record's scope, categories, importance, source, privacy and metadata in the
fact's metadata, indexed with the vector CrewAI computed for it:

- ``update`` (and ``save`` of an existing id) writes a new version; the old one
  stays in ``history``; ``delete``/``reset`` retract (recoverable in the audit
  view); ``end`` ends a record without deleting it; ``erase`` is irreversible.
- ``search`` is chronomem's vector search over those vectors, restricted to the
  current view (or the instant of an ``as_of`` view); scores are cosine in
  [0, 1] as CrewAI expects, a record updated scoring at least what its earlier
  (stale) versions score (``search``). CrewAI passes only the query embedding, so no
  lexical or temporal search runs here: use ``ChronomemMemory`` for that.
- scopes are path-aware (``/a`` never matches ``/ab``); ``created_at`` is naive UTC.

``read_log=True`` opens the store with its served-read log on; each ``search``
is tagged with the kickoff's execution id and the task's id
(``crewai_chronomem.readtags``).

Thread-safe (one lock per store handle): CrewAI saves from a background pool."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from crewai.memory.types import MemoryRecord, ScopeInfo

from chronomem import (
    Cardinality,
    EndOp,
    Fact,
    InvalidInput,
    InvalidType,
    RetractOp,
    State,
)
from chronomem import (
    Memory as Store,
)
from chronomem.retrieval import lift_records
from chronomem.timeutil import instant
from chronomem_adapters.declaration import declare
from chronomem_adapters.embedders import CallableEmbedder
from chronomem_adapters.readtags import tagged
from chronomem_adapters.semantics import VERSIONED, Semantic, TimeKeeping
from chronomem_adapters.timeselect import TimeSelection, select_time

from . import paths, scopes
from .bridge import QUERY, VectorBridge
from .embedders import as_embedder
from .errors import ReadOnlyView
from .handle import Handle
from .ranking import unreached
from .readtags import crewai_tag

PREDICATE = "crewai_record"
MAX_LIMIT = 10_000  # clamps, never refuses: CrewAI's own Memory picks these limits


def _iso(d: datetime) -> str:
    """A naive (UTC) or aware datetime as an aware ISO string."""
    if d.tzinfo is None:
        d = d.replace(tzinfo=timezone.utc)
    return d.astimezone(timezone.utc).isoformat()


def _naive(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    d = instant(value, "a record time", naive="utc")
    return None if d is None else d.replace(tzinfo=None)


def _int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidType(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise InvalidInput(f"{name} must not be negative")
    return min(value, MAX_LIMIT)


def _ids(value: object, name: str = "record_ids") -> list[str]:
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple | set | frozenset):
        raise InvalidType(f"{name} must be a list of str, not {type(value).__name__}")
    out = list(value)
    if not all(isinstance(v, str) and v for v in out):
        raise InvalidType(f"{name} must hold non-empty str ids")
    return out


def _meta_of(record: MemoryRecord) -> dict[str, Any]:
    return {
        "scope": paths.normalize(record.scope),
        "categories": list(record.categories),
        "metadata": dict(record.metadata),
        "importance": float(record.importance),
        "created_at": _iso(record.created_at),
        "last_accessed": _iso(record.last_accessed),
        "source": record.source,
        "private": bool(record.private),
    }


def _kept(
    r: MemoryRecord,
    scope_prefix: str | None,
    categories: list[str] | None,
    metadata_filter: dict[str, Any] | None,
) -> bool:
    """Whether ``search``'s filters keep the record."""
    if scope_prefix is not None and not paths.within(r.scope, scope_prefix):
        return False
    if categories and not set(categories) & set(r.categories):
        return False
    return not (metadata_filter and any(r.metadata.get(k) != v for k, v in metadata_filter.items()))


def _created(fact: Fact) -> datetime:
    """The record's ``created_at`` (naive UTC): its own, else when it was recorded."""
    return _naive(fact.metadata.get("created_at")) or fact.recorded_at.replace(tzinfo=None)


def _scope(metadata: Mapping[str, Any]) -> str:
    """The record's scope, from its fact's metadata."""
    return paths.normalize(metadata.get("scope"))


def to_record(fact: Fact) -> MemoryRecord:
    """A stored fact version back as the ``MemoryRecord`` CrewAI saved."""
    m = fact.metadata
    created = _created(fact)
    return MemoryRecord(
        id=fact.subject,
        content=fact.object,
        scope=_scope(m),
        categories=list(m.get("categories") or []),
        metadata=dict(m.get("metadata") or {}),
        importance=float(m.get("importance", 0.5)),
        created_at=created,
        last_accessed=_naive(m.get("last_accessed")) or created,
        source=m.get("source"),
        private=bool(m.get("private", False)),
    )


@dataclass(frozen=True)
class RecordVersion:
    """One version of a record in ``history``: the record, its state and validity."""

    record: MemoryRecord
    state: State
    valid_from: datetime
    valid_to: datetime | None


@declare(
    VERSIONED | {Semantic.ERASURE},
    as_of=TimeKeeping.VIEW,
    name="CrewAI storage",
    notes={
        Semantic.TIME_IN_OUTPUT: "a MemoryRecord has no validity field; use ChronomemMemory",
        Semantic.PROVENANCE: "CrewAI saves records, not the texts they came from",
        Semantic.TRANSCRIPT: "a storage backend holds records, not messages",
    },
)
class ChronomemStorage:
    """CrewAI ``StorageBackend`` over a chronomem store (see the module docstring).

    ``ChronomemStorage(url)`` or ``ChronomemStorage(memory=mem)``; ``embedder``: the
    embedder CrewAI's ``Memory`` uses (an embedder object or a callable
    ``list[str] -> vectors``), used when a record arrives without a vector and to
    fix the dimension; or give ``dim`` alone to index only the vectors CrewAI sends."""

    def __init__(
        self,
        url: str | None = None,
        *,
        embedder: object = None,
        dim: int | None = None,
        tenant: str | None = None,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        clock: Any = None,
        read_log: bool = False,
        _handle: Handle | None = None,
        _bridge: VectorBridge | None = None,
        _time: TimeSelection | None = None,
    ):
        self._time = _time or TimeSelection()
        if _handle is not None and _bridge is not None:
            self._handle, self._bridge = _handle, _bridge
            return
        if url is not None and not isinstance(url, str):
            raise InvalidType("url must be a str")
        fallback: CallableEmbedder | None = as_embedder(embedder) if embedder is not None else None
        if dim is None:
            if fallback is None:
                raise InvalidInput(
                    "ChronomemStorage needs the embedding dimension: pass embedder= "
                    "(the embedder your CrewAI Memory uses) or dim="
                )
            dim = fallback.dim
        self._bridge = VectorBridge(dim, fallback=fallback)
        if not isinstance(read_log, bool):
            raise InvalidType(f"read_log must be a bool, not {type(read_log).__name__}")
        root = Store(url, embedder=self._bridge, clock=clock, read_log=read_log)
        try:
            store = root.scoped(tenant=tenant, user=user, agent=agent, session=session)
            store.register_predicate(PREDICATE, cardinality=Cardinality.ONE)
        except Exception:
            root.close()
            raise
        self._handle = Handle(store, owned=True)

    def scoped(
        self,
        *,
        tenant: str | None = None,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
    ) -> ChronomemStorage:
        """The same database seen from another chronomem scope (another user, tenant,
        session): isolated from this one's records."""
        store = self.chronomem.scoped(tenant=tenant, user=user, agent=agent, session=session)
        store.register_predicate(PREDICATE, cardinality=Cardinality.ONE)
        return ChronomemStorage(_handle=Handle(store), _bridge=self._bridge, _time=self._time)

    # -- plumbing ------------------------------------------------------------------------
    @property
    def chronomem(self) -> Store:
        return self._handle.memory

    def __deepcopy__(self, memo: dict[int, Any]) -> ChronomemStorage:
        return self  # one store, however many copies of the Memory hold it

    def as_of(
        self, t: object = None, *, valid_at: object = None, known_at: object = None
    ) -> ChronomemStorage:
        """A read-only view of the records at a past instant; writes raise ``ReadOnlyView``."""
        sel = select_time(valid_at, known_at, t)
        if sel.is_present:
            raise InvalidInput("as_of() needs an instant (as_of, valid_at or known_at)")
        return ChronomemStorage(_handle=self._handle, _bridge=self._bridge, _time=sel)

    def _writable(self, what: str) -> None:
        if not self._time.is_present:
            raise ReadOnlyView(f"{what} on an as_of view of a ChronomemStorage")

    def _current(
        self, states: set[State] | None = None, ids: list[str] | None = None
    ) -> list[Fact]:
        """The record facts at this storage's instant (only those of ``ids`` if given)."""
        if ids is not None:
            return [f for rid in dict.fromkeys(ids) for f in self._current_of(rid, states)]
        return self._current_of(None, states)

    def _current_of(self, subject: str | None, states: set[State] | None) -> list[Fact]:
        return [
            f
            for f in self.chronomem.facts(
                subject=subject,
                predicate=PREDICATE,
                exact=True,
                states=states,
                valid_at=self._time.valid_at,
                known_at=self._time.known_at,
                as_of=self._time.as_of,
            )
            if f.predicate == PREDICATE
        ]

    def _select(self, scope_prefix: str | None) -> list[MemoryRecord]:
        return [to_record(f) for f in self._newest_created(scope_prefix)]

    def _under(self, scope_prefix: str | None) -> list[Fact]:
        """The current record facts (under ``scope_prefix``, matched on their metadata)."""
        with self._handle.lock:
            facts = self._current()
        if scope_prefix is None:
            return facts
        return [f for f in facts if paths.within(_scope(f.metadata), scope_prefix)]

    def _newest_created(self, scope_prefix: str | None) -> list[Fact]:
        """``_under``'s facts, their records' newest ``created_at`` first (ties: the
        record id, descending). Every current record is read and sorted here: what
        ``list_records`` falls back to where ``Memory.newest_by_instant`` cannot serve
        it, and what ``scopes.scope_info`` walks."""
        facts = self._under(scope_prefix)
        facts.sort(key=lambda f: (_created(f), f.subject), reverse=True)
        return facts

    # -- writing -------------------------------------------------------------------------
    def save(self, records: list[MemoryRecord]) -> None:
        self._writable("save")
        if not isinstance(records, list) or not all(isinstance(r, MemoryRecord) for r in records):
            raise InvalidType("records must be a list of MemoryRecord")
        if not records:
            return
        store = self.chronomem
        vectors = {r.content: r.embedding for r in records if r.embedding}
        with self._handle.lock, self._bridge.documents(vectors):
            existing = {f.subject: f for f in self._current(ids=[r.id for r in records])}
            ops: list[Any] = []
            for r in records:
                meta = _meta_of(r)
                old = existing.get(r.id)
                if old is not None and old.object == r.content and old.metadata != meta:
                    # same text, new metadata: end the old version so a new one is written
                    ops.append(EndOp(r.id, PREDICATE, None, None, exact=True))
                indexed = bool(r.embedding) or self._bridge.fallback is not None
                ops.append(
                    store.assertion(
                        r.id, PREDICATE, r.content, exact=True, metadata=meta,
                        cardinality=Cardinality.ONE, index_text=r.content if indexed else "",
                    )
                )  # fmt: skip
            store.apply(ops)

    def update(self, record: MemoryRecord) -> None:
        """A new version of the record (same id): the old one stays in ``history``."""
        self.save([record])

    def end(self, record_ids: list[str]) -> int:
        """The records stopped holding (not a deletion): past in history, not retracted."""
        self._writable("end")
        ids = _ids(record_ids)
        with self._handle.lock:
            live = {f.subject for f in self._current(ids=ids)}
            if live:
                self.chronomem.apply(
                    [EndOp(rid, PREDICATE, None, None, exact=True) for rid in sorted(live)]
                )
            return len(live)

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """Retract the matching records (they stay in the audit view)."""
        self._writable("delete")
        if older_than is not None and not isinstance(older_than, datetime):
            raise InvalidType("older_than must be a datetime")
        cutoff = (
            older_than.astimezone(timezone.utc).replace(tzinfo=None)
            if older_than is not None and older_than.tzinfo
            else older_than
        )
        ids = set(_ids(record_ids)) if record_ids is not None else None
        with self._handle.lock:
            chosen = []
            for f in self._current(ids=sorted(ids) if ids is not None else None):
                r = to_record(f)
                if scope_prefix is not None and not paths.within(r.scope, scope_prefix):
                    continue
                if ids is not None and r.id not in ids:
                    continue
                if categories and not set(categories) & set(r.categories):
                    continue
                if cutoff is not None and not r.created_at < cutoff:
                    continue
                if metadata_filter and any(
                    r.metadata.get(k) != v for k, v in metadata_filter.items()
                ):
                    continue
                chosen.append(f)
            if chosen:
                self.chronomem.apply([RetractOp(f.id) for f in chosen])
            return len(chosen)

    def reset(self, scope_prefix: str | None = None) -> None:
        """Retract every record in scope (recoverable; ``erase`` is irreversible)."""
        self.delete(scope_prefix=scope_prefix)

    def erase(self, record_ids: list[str] | None = None, scope_prefix: str | None = None) -> int:
        """Irreversibly delete records, every version, from every past read too."""
        self._writable("erase")
        ids = set(_ids(record_ids)) if record_ids is not None else None
        with self._handle.lock:
            every = {State.LIVE, State.ENDED, State.RETRACTED, State.SCHEDULED}
            facts = self._current(every, ids=sorted(ids) if ids is not None else None)
            chosen = [
                f
                for f in facts
                if (ids is None or f.subject in ids)
                and (scope_prefix is None or paths.within(to_record(f).scope, scope_prefix))
            ]
            for fid in sorted({f.id for f in chosen}):
                self.chronomem.erase(fid)
            return len({f.subject for f in chosen})  # records, not versions

    def touch_records(self, record_ids: list[str]) -> None:
        """Access times are not versioned (a recall would otherwise write a version
        per hit): a no-op."""

    # -- reading -------------------------------------------------------------------------
    def get_record(self, record_id: str) -> MemoryRecord | None:
        if not isinstance(record_id, str):
            raise InvalidType("record_id must be a str")
        with self._handle.lock:
            facts = self._current(ids=[record_id])
        return to_record(facts[-1]) if facts else None

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """Vector search over the records current at this storage's instant.

        A record written again (``update``, ``save`` of its id) keeps its earlier
        versions, stale at this instant; the search reaches them too and a record
        scores at least what its stale versions score (``chronomem.retrieval.
        lift_records``, the rule core applies to a stale message): the
        current record answers a question its earlier text matched. Only current
        records are returned."""
        n = _int(limit, "limit")
        if not isinstance(min_score, int | float) or min_score != min_score:
            raise InvalidInput("min_score must be a number")
        if n == 0 or not query_embedding:
            return []
        k = min(MAX_LIMIT, n * 5 + 50)
        with (
            self._handle.lock,
            self._bridge.query(query_embedding),
            tagged(self.chronomem, crewai_tag),
        ):
            hits = self.chronomem.search(
                QUERY,
                k=k,
                predicates=[PREDICATE],
                exact=True,
                states=[State.LIVE, State.ENDED],
                valid_at=self._time.valid_at,
                known_at=self._time.known_at,
                as_of=self._time.as_of,
            )
            live: dict[str, Fact] = {}
            scored: list[tuple[str, float, bool]] = []
            for hit in hits:
                f = hit.fact
                if f is None or f.predicate != PREDICATE:
                    continue
                leg = (hit.explain or {}).get("legs", {}).get("fact_vector") or {}
                scored.append((f.subject, float(leg.get("score", 0.0)), f.state is State.ENDED))
                if f.state is State.LIVE:
                    live[f.subject] = f
            ranked = lift_records(scored)
            missing = [rid for rid in ranked if rid not in live]
            if missing:  # reached through a stale version only: its current record
                live.update((f.subject, f) for f in self._current(ids=missing))
            scores = {rid: max(0.0, min(1.0, rs.score)) for rid, rs in ranked.items()}
            out: list[tuple[MemoryRecord, float]] = []
            for rid, score in scores.items():
                fact = live.get(rid)
                if fact is None:  # ended or deleted: no current record
                    continue
                if score < min_score:
                    continue
                r = to_record(fact)
                if _kept(r, scope_prefix, categories, metadata_filter):
                    out.append((r, score))
            out.sort(key=lambda p: -p[1])  # stable: equal scores keep their order
            if len(hits) < k and min_score <= 0.0 and len(out) < n:
                # every record the vectors reached is hit: the rest (cosine <= 0,
                # score 0) follow, as CrewAI's own storage returns the nearest records
                # whatever their similarity; read as many as the page still needs
                rest = unreached(
                    self._newest,
                    live,
                    n - len(out),
                    lambda f: _kept(to_record(f), scope_prefix, categories, metadata_filter),
                )
                out.extend((to_record(f), 0.0) for f in rest)
        return out[:n]

    def _newest(self, limit: int, offset: int) -> list[Fact]:
        """A page of the current record facts, newest version first."""
        return [
            f
            for f in self.chronomem.newest_facts(
                PREDICATE,
                limit=limit,
                offset=offset,
                exact=True,
                valid_at=self._time.valid_at,
                known_at=self._time.known_at,
                as_of=self._time.as_of,
            )
            if f.predicate == PREDICATE
        ]

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        """A page of the current records, newest ``created_at`` first (ties: the
        record id, descending), a ``MemoryRecord`` built for the page's records only.
        Read through the store's index of the records by ``created_at``
        (``Memory.newest_by_instant``; an ``as_of`` view merges it with the index of
        the closed versions): the rows read follow the page (and, under
        ``scope_prefix``, the records outside it walked past; in a past view, the
        versions not believed or not valid then), not the store. A store holding a
        record believed at this view's instant whose ``created_at`` this storage did
        not write reads and sorts every current record (``_newest_created``)."""
        start, n = _int(offset, "offset"), _int(limit, "limit")
        page = self._newest_page(scope_prefix, start, n)
        if page is None:
            page = self._newest_created(scope_prefix)[start : start + n]
        return [to_record(f) for f in page]

    def _newest_page(self, scope_prefix: str | None, start: int, n: int) -> list[Fact] | None:
        """``_newest_created(scope_prefix)[start : start + n]`` through the index (a
        past view: through it and the closed versions' one), or None when it cannot
        serve it (see ``Memory.newest_by_instant``)."""

        def under(meta: Mapping[str, Any]) -> bool:
            return paths.within(_scope(meta), scope_prefix)

        keep = None if scope_prefix is None else under
        with self._handle.lock:
            return self.chronomem.newest_by_instant(
                PREDICATE, "created_at", limit=n, offset=start, where=keep,
                valid_at=self._time.valid_at, known_at=self._time.known_at,
                as_of=self._time.as_of,
            )  # fmt: skip

    def count(self, scope_prefix: str | None = None) -> int:
        """The current records (under ``scope_prefix``): every one (no prefix, or the
        root) counted in SQL (``Memory.count_facts``); a prefix is record metadata,
        matched on the records read."""
        if scope_prefix is None or scope_prefix in ("", paths.ROOT):
            with self._handle.lock:
                return self.chronomem.count_facts(
                    PREDICATE,
                    exact=True,
                    valid_at=self._time.valid_at,
                    known_at=self._time.known_at,
                    as_of=self._time.as_of,
                )
        return len(self._under(scope_prefix))

    def get_scope_info(self, scope: str) -> ScopeInfo:
        return scopes.scope_info(self._select, scope)

    def list_scopes(self, parent: str = "/") -> list[str]:
        return scopes.child_scopes(self._select, parent)

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        return scopes.category_counts(self._select(scope_prefix))

    def history(self, record_id: str, *, include_retracted: bool = False) -> list[RecordVersion]:
        """Every version of a record, oldest first (retracted ones with ``include_retracted``)."""
        states = {State.LIVE, State.ENDED}
        if include_retracted:
            states.add(State.RETRACTED)
        with self._handle.lock:
            facts = self.chronomem.facts(
                subject=record_id, predicate=PREDICATE, exact=True, states=states,
                valid_at=self._time.valid_at, known_at=self._time.known_at, as_of=self._time.as_of,
            )  # fmt: skip
        facts.sort(key=lambda f: (f.valid_from, f.recorded_at))
        return [RecordVersion(to_record(f), f.state, f.valid_from, f.valid_to) for f in facts]

    def close(self) -> None:
        """Drain and release connections; the storage stays usable (as CrewAI's
        backends do after ``Memory.close``)."""
        self._handle.close()

    def is_open(self) -> bool:
        """False once its chronomem store was closed for good (directly)."""
        return self._handle.is_open()

    # -- async twins ---------------------------------------------------------------------
    async def asave(self, records: list[MemoryRecord]) -> None:
        await asyncio.to_thread(self.save, records)

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        return await asyncio.to_thread(
            self.search, query_embedding, scope_prefix, categories, metadata_filter, limit,
            min_score,
        )  # fmt: skip

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        return await asyncio.to_thread(
            self.delete, scope_prefix, categories, record_ids, older_than, metadata_filter
        )
