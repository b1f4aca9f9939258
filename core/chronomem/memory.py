"""``Memory``: the public face of the store."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, delete, func, select, update

from . import readlog, reads
from .arguments import collection, names
from .backends import Backend, open_backend
from .embedding import Embedder
from .errors import (
    InvalidInput,
    InvalidInterval,
    InvalidTimeSelector,
    InvalidType,
    NotFound,
    StoreClosed,
    TimeTravel,
)
from .identity import encodable, fold, fold_predicate, require_id, require_text
from .integrity import CheckReport
from .model import Episode, Fact, Provenance, Receipt, State, Stats, parse_states
from .ops import AssertOp, CorrectOp, EndOp, RetractOp, WriteOp
from .predicates import Cardinality, PredicateSpec, Volatility
from .registry import Registry
from .render import render as render_block
from .retrieval import Reranker, Retrieval, SearchResult
from .retrieval import search as run_search
from .schema import episodes as episodes_table
from .schema import migrate, sources, txclock, vectors, versions
from .schema import predicates as predicates_table
from .scope import Scope
from .statemachine import new_id
from .timeline import Timeline
from .timeutil import Clock, check_tx_clock, opt_us, system_clock, to_us
from .writer import InsertHook, Writer, content_hash, missing_fact, stamp

SourceLike = str | Episode
FactRef = str | Fact  # a fact id, the id of one of its versions, or a Fact
MAX_LIMIT = 2**62  # larger limits mean "all" (and would not fit a SQL BIGINT)
TimeArgs = tuple[int, int | None]


def _json_metadata(metadata: Mapping[str, Any] | None, name: str = "metadata") -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidType(f"{name} must be a mapping, not {type(metadata).__name__}")
    _check_json_keys(metadata, name)
    try:
        text = json.dumps(dict(metadata), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name} must be JSON-serialisable (no NaN/inf): {exc}") from None
    encodable(text, name)
    out: dict[str, Any] = json.loads(text)
    return out


def _check_json_keys(value: Any, name: str, path: frozenset[int] = frozenset()) -> None:
    """JSON object keys are strings; anything else would come back changed. A
    container that holds itself has no JSON form at all."""
    if isinstance(value, Mapping | list | tuple):
        if id(value) in path:
            raise InvalidInput(f"{name} contains itself (a reference cycle); JSON cannot hold it")
        path = path | {id(value)}
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidType(f"{name} keys must be str (JSON), not {type(k).__name__}: {k!r}")
            _check_json_keys(v, name, path)
    elif isinstance(value, list | tuple):
        for v in value:
            _check_json_keys(v, name, path)


def _ref_id(ref: object) -> str:
    """The id a fact reference gives: a ``Fact``'s fact id, or the id as passed."""
    if isinstance(ref, Fact):
        return require_id(ref.id, "fact_id")
    return require_id(ref, "fact_id")


def _source_ids(source: SourceLike | Iterable[SourceLike] | None) -> tuple[str, ...]:
    if source is None:
        return ()
    try:
        items = [source] if isinstance(source, str | Episode) else list(source)
    except TypeError:
        raise InvalidType(
            f"source must be an episode id, an Episode or a list of them, not {source!r}"
        ) from None
    out = []
    for s in items:
        if isinstance(s, Episode):
            out.append(s.id)
        elif isinstance(s, str):
            out.append(require_id(s, "episode_id"))
        else:
            raise InvalidType(f"source must be an episode id or Episode, not {type(s).__name__}")
    return tuple(dict.fromkeys(out))


class _Shared:
    """What every scoped view of one store shares: the database, the registry, the index."""

    def __init__(self, backend: Backend, clock: Clock):
        self.backend = backend
        self.clock = clock
        self.registry = Registry()
        self.closed = False
        self.hooks: list[InsertHook] = []
        self.episode_hooks: list[InsertHook] = []
        self.extensions: dict[str, Any] = {}
        self.read_log = False  # chronomem.readlog: log every served read

    def on_insert(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        for hook in self.hooks:
            hook(conn, rows)


class Memory:
    """Bitemporal memory. ``Memory()`` is in-memory SQLite, ``Memory("memory.db")`` a
    file, ``Memory("postgresql+psycopg://…")`` PostgreSQL.

    Every fact lives on two clocks: valid time (when it was true in the world,
    set by the caller) and transaction time (when the store believed it, set by
    the store's ``clock``). Nothing is overwritten."""

    def __init__(
        self,
        url: str | None = None,
        *,
        scope: Scope | None = None,
        clock: Clock | None = None,
        tenant: str | None = None,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        embedder: Any = None,
        reembed: bool = False,
        reranker: Any = None,
        read_log: bool = False,
        _shared: _Shared | None = None,
    ):
        if scope is not None and not isinstance(scope, Scope):
            raise InvalidType(f"scope must be a chronomem.Scope, not {type(scope).__name__}")
        base = scope or Scope()
        self.scope = base.child(tenant=tenant, user=user, agent=agent, session=session)
        if _shared is not None:
            self._shared = _shared
            return
        if clock is not None and not callable(clock):
            raise InvalidType("clock must be a callable returning an aware datetime")
        backend = open_backend(url)
        self._shared = _Shared(backend, clock or system_clock)
        self._shared.read_log = bool(read_log)
        try:
            with backend.write() as conn:
                migrate(conn)
            from .retrieval import attach

            attach(self, embedder, reembed=reembed).reranker = reranker
        except Exception:
            backend.dispose()
            raise

    # -- lifecycle -----------------------------------------------------------------
    @property
    def backend(self) -> Backend:
        self._check_open()
        return self._shared.backend

    @property
    def url(self) -> str:
        return str(self._shared.backend.engine.url.render_as_string(hide_password=True))

    def scoped(
        self,
        *,
        tenant: str | None = None,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
    ) -> Memory:
        """The same store seen from a narrower scope (or another tenant)."""
        self._check_open()
        return Memory(
            scope=self.scope.child(tenant=tenant, user=user, agent=agent, session=session),
            _shared=self._shared,
        )

    def close(self) -> None:
        if not self._shared.closed:
            readlog.close(self)  # writes the served-read log's pending entries
            self._shared.closed = True
            self._shared.backend.dispose()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._shared.closed:
            raise StoreClosed("this chronomem store is closed")

    def now(self) -> datetime:
        value = self._shared.clock()
        to_us(value, "clock()")  # the clock must give aware datetimes too
        return value

    def _now_us(self) -> int:
        return to_us(self._shared.clock(), "clock()")

    def _tx_us(self) -> int:
        """The clock's reading for a write: it becomes a transaction time, so one in
        the calendar's last year is refused (``InvalidInput``) before anything is
        stamped — a store stamped at 9999-12-31 could never write again."""
        return check_tx_clock(self._now_us())

    # -- facts by id -------------------------------------------------------------
    def _fact_id(self, conn: Connection, ref: object) -> str:
        """The fact a reference names. ``Receipt.added`` and ``Fact.version_id`` are
        version ids; a version belongs to exactly one fact, so its id names that fact
        as well as the fact id does. A ``Fact`` names its ``id``."""
        if isinstance(ref, Fact):
            return _ref_id(ref)
        rid = _ref_id(ref)
        t = self.scope.tenant
        # two indexed lookups (fact index, then primary key): an OR of the two
        # columns makes SQLite walk every row of the tenant
        if conn.execute(
            select(versions.c.id).where(versions.c.tenant == t, versions.c.fact_id == rid).limit(1)
        ).first():
            return rid
        found = conn.execute(
            select(versions.c.fact_id).where(versions.c.tenant == t, versions.c.id == rid)
        ).scalar()
        return str(found) if found is not None else rid

    def _own_fact(self, conn: Connection, ref: object) -> str:
        """The fact id a write by id (retract, correct, erase) may change, or
        NotFound (quoting the reference as given, never another scope's fact id) /
        ScopeError (the fact is an enclosing scope's shared memory).

        A write by id reaches exactly this scope's facts: a read by id (``get``,
        ``why``) sees this scope and its ancestors, so everything a write by id can
        change, a read by id can see; an ancestor's fact is readable but owned
        elsewhere (ScopeError), and a narrower scope's fact (a user's, seen from the
        tenant) is NotFound for both. Erasure by subject and ``purge`` are the
        administrative sweeps that do take narrower scopes."""
        fid = self._fact_id(conn, ref)
        owned = conn.execute(
            select(versions.c.id)
            .where(reads.scope_is(versions, self.scope), versions.c.fact_id == fid)
            .limit(1)
        ).first()
        if owned is None:
            err = missing_fact(conn, self.scope, fid)
            if isinstance(err, NotFound):
                raise NotFound(f"no fact {_ref_id(ref)!r} in this scope")
            raise err
        return fid

    def _resolve_ids(self, conn: Connection, ops: Sequence[WriteOp]) -> Sequence[WriteOp]:
        """Writes by id name a fact by any of its ids: resolved to the fact id."""
        if not any(isinstance(op, RetractOp | CorrectOp) for op in ops):
            return ops
        return [
            replace(op, fact_id=self._own_fact(conn, op.fact_id))
            if isinstance(op, RetractOp | CorrectOp)
            else op
            for op in ops
        ]

    # -- writing ---------------------------------------------------------------------
    def apply(self, ops: Sequence[WriteOp], *, recorded_at: datetime | None = None) -> Receipt:
        """Apply write operations in one transaction with one transaction time."""
        self._check_open()
        if not ops:
            return Receipt()
        at = opt_us(recorded_at, "recorded_at")
        if at is not None:
            check_tx_clock(at, "recorded_at is")
        sh = self._shared
        writer = Writer(sh.registry, sh.on_insert if sh.hooks else None)
        with sh.backend.write() as conn:
            return writer.apply(
                conn,
                self.scope,
                self._resolve_ids(conn, ops),
                self._tx_us(),
                lock=sh.backend.lock_slots,
                for_update=sh.backend.for_update,
                recorded_at=at,
            )

    def assertion(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        source: SourceLike | Iterable[SourceLike] | None = None,
        metadata: Mapping[str, Any] | None = None,
        extractor: str | None = None,
        exact: bool = False,
        cardinality: Cardinality | str | None = None,
        index_text: str | None = None,
        valid_for: timedelta | None = None,
    ) -> AssertOp:
        """Validate one fact and return it as an operation (for batched ``apply``).

        ``exact=True`` keys subject/predicate/object as given (no folding, no alias
        resolution); ``cardinality`` fixes the slot's cardinality for this write;
        ``index_text`` is what search indexes ("" = not indexed); ``valid_for`` (a
        TTL) makes the fact hold from the transaction time for that long."""
        require_text(subject, "subject")
        require_text(predicate, "predicate")
        require_text(obj, "obj")
        vf = opt_us(valid_from, "valid_from")
        vt = opt_us(valid_to, "valid_to")
        if vf is not None and vt is not None and vt <= vf:
            raise InvalidInterval("valid_to must be after valid_from")
        if extractor is not None:
            require_text(extractor, "extractor")
        for_us = None
        if valid_for is not None:
            if not isinstance(valid_for, timedelta):
                raise InvalidType("valid_for must be a timedelta")
            for_us = valid_for // timedelta(microseconds=1)
            if for_us <= 0 or valid_from is not None or valid_to is not None:
                raise InvalidInterval("valid_for must be positive and excludes valid_from/valid_to")
        return AssertOp(
            subject,
            predicate,
            obj,
            vf,
            vt,
            bounded=valid_to is not None,
            metadata=_json_metadata(metadata),
            sources=_source_ids(source),
            extractor=extractor,
            exact=bool(exact),
            cardinality=Cardinality(cardinality) if cardinality is not None else None,
            index_text=index_text,
            valid_for=for_us,
        )

    def remember(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        source: SourceLike | Iterable[SourceLike] | None = None,
        metadata: Mapping[str, Any] | None = None,
        extractor: str | None = None,
    ) -> Receipt:
        """Assert that ``subject predicate obj`` holds from ``valid_from`` (default:
        now) until ``valid_to`` (default: the next known change)."""
        op = self.assertion(
            subject,
            predicate,
            obj,
            valid_from=valid_from,
            valid_to=valid_to,
            source=source,
            metadata=metadata,
            extractor=extractor,
        )
        return self.apply([op])

    def remember_many(self, facts: Iterable[AssertOp | Mapping[str, Any]]) -> Receipt:
        """Batched ingest: many facts, one transaction, one transaction time."""
        ops: list[WriteOp] = []
        for f in collection(facts, "remember_many", of="facts (mappings or AssertOps)"):
            if isinstance(f, AssertOp):
                ops.append(f)
            elif isinstance(f, Mapping):
                kw = dict(f)
                try:
                    subject, predicate, obj = kw.pop("subject"), kw.pop("predicate"), kw.pop("obj")
                except KeyError as exc:
                    raise InvalidInput(f"remember_many: a fact lacks {exc.args[0]!r}") from None
                ops.append(self.assertion(subject, predicate, obj, **kw))
            else:
                raise InvalidType(
                    f"remember_many: each fact is a mapping or an AssertOp, not {type(f).__name__}"
                )
        return self.apply(ops)

    def end(
        self, subject: str, predicate: str, obj: str | None = None, *, at: datetime | None = None
    ) -> Receipt:
        """The world changed with no successor ("I left Acme"): the value stops at ``at``."""
        require_text(subject, "subject")
        require_text(predicate, "predicate")
        if obj is not None:
            require_text(obj, "obj")
        at_us = to_us(at, "at") if at is not None else self._now_us()
        return self.apply([EndOp(subject, predicate, obj, at_us)])

    def retract(self, fact_id: FactRef) -> Receipt:
        """The record was wrong ("we misheard"): the fact's current versions are closed
        as retracted; their valid time is untouched. ``fact_id`` may also be the id of
        any version of the fact (``Receipt.added``) or a ``Fact``."""
        return self.apply([RetractOp(_ref_id(fact_id))])

    def correct(self, fact_id: FactRef, obj: str) -> Receipt:
        """Retract ``fact_id`` and assert ``obj`` over the same interval, as one write
        (a version id or a ``Fact`` names its fact too)."""
        return self.apply([CorrectOp(_ref_id(fact_id), require_text(obj, "obj"))])

    def import_fact(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        recorded_at: datetime,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        source: SourceLike | Iterable[SourceLike] | None = None,
        metadata: Mapping[str, Any] | None = None,
        extractor: str | None = None,
    ) -> Receipt:
        """Import history with an explicit belief time (a mem0 history, a store dump).
        Refuses a write that would go back in time for its slot (``TimeTravel``: not
        after the slot's last belief change) or ahead of the clock.

        Back-dated imports win over exact replay. An import into a slot with no
        later history may stamp an instant before the store's latest transaction
        time; a read at ``known_at=t`` with ``t >= recorded_at`` then answers
        differently after the import than it did before: the imported belief shows
        as held since ``recorded_at``, which is what importing history means. Reads
        at a ``known_at`` before the import's ``recorded_at`` keep their answers. To
        keep every past answer fixed, import before serving reads (or into a fresh
        tenant), or record at the current time (``remember``)."""
        if to_us(recorded_at, "recorded_at") > self._now_us():
            raise TimeTravel(
                "recorded_at is after the store's clock: an import records the past, and would "
                "otherwise drag every later write's transaction time forward"
            )
        op = self.assertion(
            subject,
            predicate,
            obj,
            valid_from=valid_from if valid_from is not None else recorded_at,
            valid_to=valid_to,
            source=source,
            metadata=metadata,
            extractor=extractor,
        )
        return self.apply([op], recorded_at=recorded_at)

    def register_predicate(
        self,
        name: str,
        *,
        cardinality: Cardinality | str = Cardinality.MANY,
        volatility: Volatility | str = Volatility.SLOW,
        aliases: Sequence[str] = (),
    ) -> PredicateSpec:
        """Persist a predicate (and its aliases) in this tenant's registry."""
        self._check_open()
        alias_names = names(aliases, "aliases")
        try:
            spec = PredicateSpec(
                fold_predicate(require_text(name, "name")),
                Cardinality(cardinality),
                Volatility(volatility),
                alias_names,
            )
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        sh = self._shared
        with sh.backend.write() as conn:
            # The tenant's clock row first: registrations of one tenant then run one
            # after another (concurrent ones used to insert the same name at once
            # and fail on PostgreSQL), and the alias check sees every earlier one.
            tx = stamp(conn, self.scope.tenant, self._tx_us())
            index = sh.registry.load(conn, self.scope.tenant)
            Registry.save(conn, Registry.rows_for(self.scope.tenant, spec, index))
            conn.execute(
                update(txclock).where(txclock.c.tenant == self.scope.tenant).values(registry_us=tx)
            )
        sh.registry.invalidate(self.scope.tenant)
        return spec

    def predicate(self, name: str) -> PredicateSpec:
        """The registry's spec for a predicate name or alias (unknown: MANY)."""
        self._check_open()
        with self._shared.backend.read() as conn:
            return self._shared.registry.resolve(conn, self.scope.tenant, name)

    def add(
        self,
        messages: object,
        *,
        extractor: Any = None,
        occurred_at: datetime | None = None,
        on_error: str = "report",
    ) -> Receipt:
        """Store messages (a str, a list, OpenAI-style ``{"role", "content"}`` dicts,
        framework message objects) as episodes, extract facts from them (default:
        the offline rule extractor) and write the facts through the state machine.
        The receipt counts ``extracted``, ``skipped`` (small talk) and
        ``unextracted`` (kept, but nothing the extractor could read)."""
        from .extraction import add_messages

        return add_messages(
            self,
            messages,
            extractor=extractor,
            occurred_at=occurred_at,
            on_error=on_error,  # type: ignore[arg-type]
        )

    # -- episodes ----------------------------------------------------------------------
    def add_episode(
        self,
        text: str,
        *,
        role: str | None = None,
        occurred_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Episode:
        """Store a raw record (a message, a task output, a document)."""
        return self.add_episodes(
            [{"text": text, "role": role, "occurred_at": occurred_at, "metadata": metadata}]
        )[0]

    def add_episodes(self, items: Iterable[Mapping[str, Any]]) -> list[Episode]:
        """Store several episodes in one transaction (same transaction time)."""
        self._check_open()
        prepared = []
        for item in collection(items, "add_episodes", of="episodes (mappings)"):
            if not isinstance(item, Mapping):
                raise InvalidType(
                    f"add_episodes: each episode is a mapping, not {type(item).__name__}"
                )
            text = item.get("text")
            if not isinstance(text, str):
                raise InvalidType(f"episode text must be a str, not {type(text).__name__}")
            encodable(text, "episode text")
            role = item.get("role")
            if role is not None:
                if not isinstance(role, str):
                    raise InvalidType("role must be a str")
                encodable(role, "role")
            prepared.append(
                (
                    text,
                    role,
                    opt_us(item.get("occurred_at"), "occurred_at"),
                    _json_metadata(item.get("metadata")),
                )
            )
        if not prepared:
            return []
        sh = self._shared
        rows = []
        with sh.backend.write() as conn:
            tx = stamp(conn, self.scope.tenant, self._tx_us())
            for text, role, occurred, meta in prepared:
                rows.append(
                    {
                        **self.scope.columns(),
                        "id": new_id(),
                        "role": role,
                        "text": text,
                        "occurred_at": occurred if occurred is not None else tx,
                        "recorded_at": tx,
                        "metadata": json.dumps(meta, sort_keys=True, ensure_ascii=False),
                        "content_hash": content_hash(role or "", text),
                    }
                )
            conn.execute(episodes_table.insert(), rows)
            for hook in sh.episode_hooks:
                hook(conn, rows)
        return [reads.to_episode(r) for r in rows]

    def get_episode(self, episode_id: str) -> Episode:
        self._check_open()
        require_id(episode_id, "episode_id")
        with self._shared.backend.read() as conn:
            row = (
                conn.execute(
                    reads.episodes_query(self.scope).where(episodes_table.c.id == episode_id)
                )
                .mappings()
                .first()
            )
        if row is None:
            raise NotFound(f"no episode {episode_id!r} in this scope")
        return reads.to_episode(row)

    def episodes(
        self,
        *,
        limit: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        known_at: datetime | None = None,
        role: str | None = None,
    ) -> list[Episode]:
        """Episodes in this scope, in the order they occurred (then recorded)."""
        self._check_open()
        q = reads.episodes_query(self.scope)
        c = episodes_table.c
        if since is not None:
            q = q.where(c.occurred_at >= to_us(since, "since"))
        if until is not None:
            q = q.where(c.occurred_at < to_us(until, "until"))
        if known_at is not None:
            q = q.where(c.recorded_at <= to_us(known_at, "known_at"))
        if role is not None:
            if not isinstance(role, str):
                raise InvalidType("role must be a str")
            q = q.where(c.role == role)
        q = q.order_by(c.occurred_at, c.recorded_at, c.id)
        if limit is not None:
            if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
                raise InvalidInput("limit must be a non-negative int")
            limit = min(limit, MAX_LIMIT)
            q = (
                q.order_by(None)
                .order_by(c.occurred_at.desc(), c.recorded_at.desc(), c.id.desc())
                .limit(limit)
            )
        with self._shared.backend.read() as conn:
            rows = [reads.to_episode(r) for r in conn.execute(q).mappings()]
        if limit is not None:
            rows.reverse()
        return rows

    # -- reading -------------------------------------------------------------------------
    def _times(
        self, valid_at: datetime | None, known_at: datetime | None, as_of: datetime | None
    ) -> TimeArgs:
        if as_of is not None:
            if valid_at is not None or known_at is not None:
                raise InvalidTimeSelector(
                    "as_of means both valid_at and known_at; do not combine them"
                )
            t = to_us(as_of, "as_of")
            return t, t
        v = to_us(valid_at, "valid_at") if valid_at is not None else self._now_us()
        return v, opt_us(known_at, "known_at")

    @readlog.logged("facts")
    def facts(
        self,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        obj: str | None = None,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        states: Iterable[State | str] | State | str | None = None,
        limit: int | None = None,
        subject_prefix: str | None = None,
        exact: bool = False,
        subjects: Sequence[str] | None = None,
    ) -> list[Fact]:
        """Facts in this scope at a valid instant (default now) as believed at a belief
        instant (default: everything recorded so far). ``states`` default: live.

        ``exact=True`` matches subject/predicate/object as given, without folding
        (for adapters that write with ``exact`` keys); ``subject_prefix`` matches
        stored subject keys that start with it, character for character;
        ``subjects`` reads many subjects in one query."""
        self._check_open()
        v, k = self._times(valid_at, known_at, as_of)
        wanted = parse_states(states)
        sh = self._shared
        with sh.backend.read() as conn:
            preds = None
            key = (
                (lambda s, n: require_text(s, n))
                if exact
                else (lambda s, n: fold(require_text(s, n)))
            )
            if predicate is not None:
                preds = [
                    require_text(predicate, "predicate")
                    if exact
                    else sh.registry.resolve(conn, self.scope.tenant, predicate).name
                ]
            if subject_prefix is not None and not isinstance(subject_prefix, str):
                raise InvalidType("subject_prefix must be a str")
            q = reads.facts_query(
                self.scope,
                valid_at=v,
                known_at=k,
                states=wanted,
                subject_key=key(subject, "subject") if subject is not None else None,
                predicates=preds,
                object_key=key(obj, "obj") if obj is not None else None,
                subject_prefix=subject_prefix,
                subject_keys=[key(x, "subjects") for x in names(subjects, "subjects")]
                if subjects is not None
                else None,
            )
            if limit is not None:
                if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
                    raise InvalidInput("limit must be a non-negative int")
                q = q.limit(min(limit, MAX_LIMIT))
            rows = conn.execute(q).mappings().all()
            src = reads.sources_of(conn, self.scope.tenant, (r["fact_id"] for r in rows))
        return [
            reads.to_fact(r, v, src.get(r["fact_id"], ()), retracted_row=bool(r["_r"]))
            for r in rows
        ]

    def history(
        self,
        subject: str,
        predicate: str | None = None,
        *,
        known_at: datetime | None = None,
        include_retracted: bool = False,
    ) -> list[Fact]:
        """Every value the subject's predicate had, as believed at ``known_at``, in valid-time order."""
        states = {State.LIVE, State.ENDED, State.SCHEDULED}
        if include_retracted:
            states.add(State.RETRACTED)
        found = self.facts(subject=subject, predicate=predicate, known_at=known_at, states=states)
        return sorted(found, key=lambda f: (f.predicate, f.valid_from, f.recorded_at, f.version_id))

    def get(self, fact_id: FactRef, *, known_at: datetime | None = None) -> list[Fact]:
        """The versions of one fact known at ``known_at`` (default: now current).
        ``fact_id`` may also be the id of any of its versions, or a ``Fact``."""
        self._check_open()
        v, k = self._times(None, known_at, None)
        with self._shared.backend.read() as conn:
            fact_id = self._fact_id(conn, fact_id)
            rows = (
                conn.execute(
                    reads.facts_query(
                        self.scope,
                        valid_at=v,
                        known_at=k,
                        states=frozenset(
                            {State.LIVE, State.ENDED, State.SCHEDULED, State.RETRACTED}
                        ),
                        fact_ids=[fact_id],
                    )
                )
                .mappings()
                .all()
            )
            src = reads.sources_of(conn, self.scope.tenant, [fact_id])
        return [
            reads.to_fact(r, v, src.get(fact_id, ()), retracted_row=bool(r["_r"])) for r in rows
        ]

    def why(self, fact_id: FactRef) -> Provenance:
        """Where a fact came from: every version of it ever recorded, its source
        episodes, the extractors that wrote it, and what its writes superseded.
        ``fact_id`` may also be the id of any of its versions, or a ``Fact``."""
        self._check_open()
        ref = _ref_id(fact_id)
        v = self._now_us()
        with self._shared.backend.read() as conn:
            fact_id = self._fact_id(conn, fact_id)
            rows = (
                conn.execute(
                    select(versions)
                    .where(reads.scope_visible(versions, self.scope), versions.c.fact_id == fact_id)
                    .order_by(versions.c.recorded_at, versions.c.valid_from)
                )
                .mappings()
                .all()
            )
            if not rows:
                raise NotFound(f"no fact {ref!r} in this scope")
            ids = [r["id"] for r in rows]
            src = reads.sources_of(conn, self.scope.tenant, [fact_id]).get(fact_id, [])
            cited_by = set(
                conn.execute(
                    select(sources.c.extractor).where(
                        sources.c.tenant == self.scope.tenant,
                        sources.c.fact_id == fact_id,
                        sources.c.extractor.is_not(None),
                    )
                ).scalars()
            )
            eps = (
                conn.execute(
                    reads.episodes_query(self.scope)
                    .where(episodes_table.c.id.in_(src))
                    .order_by(episodes_table.c.occurred_at)
                )
                .mappings()
                .all()
                if src
                else []
            )
            replaced = (
                conn.execute(
                    select(versions).where(
                        versions.c.tenant == self.scope.tenant,
                        versions.c.superseded_by.in_(ids),
                        versions.c.fact_id != fact_id,
                    )
                )
                .mappings()
                .all()
            )
        facts = [reads.to_fact(r, v, src) for r in rows]
        return Provenance(
            fact_id=fact_id,
            versions=facts,
            episodes=[reads.to_episode(e) for e in eps],
            extractors=sorted({r["extractor"] for r in rows if r["extractor"]} | cited_by),
            superseded=[reads.to_fact(r, v) for r in replaced],
        )

    def timeline(
        self, subject: str, predicate: str | None = None, *, exact: bool = False
    ) -> Timeline:
        """Every version of ``subject``'s facts ever recorded, on both clocks:
        ``.text()`` for a terminal, ``.plot()`` a matplotlib figure (``chronomem.timeline``)."""
        from .timeline import build

        return build(self, subject, predicate, exact=exact)

    def stats(self) -> Stats:
        self._check_open()
        v = self._now_us()
        vis = reads.scope_visible(versions, self.scope)
        with self._shared.backend.read() as conn:
            n_versions = conn.execute(select(func.count()).where(vis)).scalar_one()
            n_current = conn.execute(
                select(func.count()).where(vis, versions.c.superseded_at.is_(None))
            ).scalar_one()
            n_facts = conn.execute(
                select(func.count(versions.c.fact_id.distinct())).where(vis)
            ).scalar_one()
            n_live = conn.execute(
                select(func.count(versions.c.fact_id.distinct())).where(
                    vis, reads.known(None), reads.in_states({State.LIVE}, v)
                )
            ).scalar_one()
            n_eps = conn.execute(
                select(func.count()).where(reads.scope_visible(episodes_table, self.scope))
            ).scalar_one()
            n_preds = conn.execute(
                select(func.count(versions.c.predicate.distinct())).where(vis)
            ).scalar_one()
            last = conn.execute(select(func.max(versions.c.recorded_at)).where(vis)).scalar()
        from .timeutil import opt_dt

        return Stats(n_facts, n_live, n_versions, n_current, n_eps, n_preds, opt_dt(last))

    # -- retrieval ----------------------------------------------------------------------
    @property
    def _retrieval(self) -> Retrieval:
        r: Retrieval = self._shared.extensions["retrieval"]
        return r

    @property
    def embedder(self) -> Embedder:
        return self._retrieval.embedder

    @readlog.logged("search")
    def search(
        self,
        query: str,
        *,
        k: int = 10,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        states: Iterable[State | str] | State | str | None = None,
        include_episodes: bool = False,
        min_score: float = 0.0,
        subject: str | None = None,
        subject_prefix: str | None = None,
        predicates: Sequence[str] | None = None,
        exact: bool = False,
    ) -> SearchResult:
        """Hybrid search: fact lexical, fact vector and entity-graph legs (plus the
        episode legs with ``include_episodes``), the temporal predicate applied inside
        each leg, fused by reciprocal rank. Each hit carries ``explain``; a failing
        leg is reported in ``result.failed_legs`` (``result.degraded``)."""
        return run_search(
            self,
            self._retrieval,
            query,
            k=k,
            valid_at=valid_at,
            known_at=known_at,
            as_of=as_of,
            states=states,
            include_episodes=include_episodes,
            min_score=min_score,
            subject=subject,
            subject_prefix=subject_prefix,
            predicates=names(predicates, "predicates") if predicates is not None else None,
            exact=exact,
        )

    @readlog.logged("recall")
    def recall(
        self,
        query: str,
        *,
        k: int = 8,
        include_history: bool = False,
        include_episodes: bool = False,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> str:
        """A prompt-ready block of the live facts relevant to ``query`` (with their
        validity), framed as reference data. ``include_history`` adds the ended
        values of the surfaced slots under their own header; retracted values are
        never rendered."""
        hits = self.search(
            query,
            k=k,
            valid_at=valid_at,
            known_at=known_at,
            as_of=as_of,
            include_episodes=include_episodes,
        )
        live = [h.fact for h in hits if h.fact is not None]
        eps = [h.episode for h in hits if h.episode is not None]
        history: list[Fact] = []
        if include_history:
            seen: set[tuple[str, str]] = set()
            for f in live:
                if (f.subject_key, f.predicate) in seen:
                    continue
                seen.add((f.subject_key, f.predicate))
                history += self.facts(
                    subject=f.subject_key,
                    predicate=f.predicate,
                    states=[State.ENDED],
                    valid_at=valid_at,
                    known_at=known_at,
                    as_of=as_of,
                    exact=True,
                )
        return render_block(live, history, eps)

    # -- the served-read log (chronomem.readlog) ------------------------------------------
    @property
    def read_log(self) -> bool:
        """Whether this store logs every ``facts``/``search``/``recall`` it serves."""
        return self._shared.read_log

    @read_log.setter
    def read_log(self, on: bool) -> None:
        self._shared.read_log = bool(on)

    @staticmethod
    def read_tag(**tag: str | None) -> AbstractContextManager[None]:
        """Tag the reads logged inside a ``with`` block: ``run``, ``thread``, ``checkpoint``…"""
        return readlog.read_tag(**tag)

    def reads(
        self,
        *,
        run: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        op: str | None = None,
        tag: Mapping[str, str] | None = None,
        limit: int | None = None,
    ) -> list[readlog.Read]:
        """The logged reads of this scope (and the scopes under it), oldest first."""
        return readlog.reads(self, run=run, since=since, until=until, op=op, tag=tag, limit=limit)

    def replay(self, read_id: str | readlog.Read, *, rerun: bool = False) -> Any:
        """What a logged read returned, as of its instant (``chronomem.readlog.replay``)."""
        return readlog.replay(self, read_id, rerun=rerun)

    def served(
        self,
        *,
        run: str | None = None,
        read_ids: Sequence[str] | None = None,
        since: datetime | None = None,
        tag: Mapping[str, str] | None = None,
    ) -> readlog.Served:
        """What the agent knew: each item served, its state then, what changed since."""
        return readlog.served(self, run=run, read_ids=read_ids, since=since, tag=tag)

    def check(self, *, repair: bool = False) -> CheckReport:
        """Check the whole database (every tenant) for damage: the text indexes,
        invariant I1, orphan source links and vectors; with ``repair=True`` also
        rebuild damaged text indexes and delete orphans (see ``chronomem.integrity``)."""
        from .integrity import check as run_check

        return run_check(self, repair=repair)

    def set_reranker(self, reranker: Reranker | None) -> None:
        self._retrieval.reranker = reranker

    # -- erasure -----------------------------------------------------------------------
    def erase(self, fact_id: FactRef) -> dict[str, int]:
        """Physically delete every version of a fact, its vectors and text index
        entries, and its source episodes that no surviving fact cites. Irreversible.
        ``fact_id`` may also be the id of any of its versions, or a ``Fact``."""
        return self._erase(None, fact_ref=_ref_id(fact_id))

    def erase_subject(
        self, subject: str, *, exact: bool = False, descendants: bool = True
    ) -> dict[str, int]:
        """``erase`` every fact about ``subject`` (every predicate, every belief state)
        in this scope and, unless ``descendants=False``, in every scope under it (from
        the tenant: every user's, agent's and session's facts about the subject)."""
        key = require_text(subject, "subject") if exact else fold(require_text(subject, "subject"))
        return self._erase(reads.subject_is(key), subject=subject, descendants=bool(descendants))

    def _erase(
        self,
        which: Any,
        *,
        fact_ref: str | None = None,
        subject: str | None = None,
        descendants: bool = True,
    ) -> dict[str, int]:
        """Erase the facts ``which`` selects in this scope and (``descendants``) the
        scopes under it, or the one fact ``fact_ref`` names, which must be this
        scope's own. Never an enclosing scope's shared memory: that is erased
        through its own scope."""
        self._check_open()
        sh = self._shared
        with sh.backend.write() as conn:
            if fact_ref is not None:
                fids = [self._own_fact(conn, fact_ref)]
            else:
                where = reads.scope_within if descendants else reads.scope_is
                fids = list(
                    conn.execute(
                        select(versions.c.fact_id)
                        .where(where(versions, self.scope), which)
                        .distinct()
                    ).scalars()
                )
            if not fids:
                raise NotFound(f"no facts about {subject!r} in this scope")
            counts = {"versions": 0, "episodes": 0, "vectors": 0, "sources": 0}
            for i in range(0, len(fids), 500):
                self._erase_facts(conn, fids[i : i + 500], counts)
            self._mark_erased(conn)
            sh.backend.after_erase(conn)
        sh.backend.maintenance_after_erase()
        self._invalidate_index()
        return counts

    def _erase_facts(self, conn: Connection, fids: list[str], counts: dict[str, int]) -> None:
        t = self.scope.tenant
        ids = list(
            conn.execute(
                select(versions.c.id).where(versions.c.tenant == t, versions.c.fact_id.in_(fids))
            ).scalars()
        )
        eps = set(
            conn.execute(
                select(sources.c.episode_id).where(
                    sources.c.tenant == t, sources.c.fact_id.in_(fids)
                )
            ).scalars()
        )
        counts["sources"] += conn.execute(
            delete(sources).where(sources.c.tenant == t, sources.c.fact_id.in_(fids))
        ).rowcount
        counts["vectors"] += self._delete_vectors(conn, "v", ids)
        counts["versions"] += conn.execute(
            delete(versions).where(versions.c.tenant == t, versions.c.fact_id.in_(fids))
        ).rowcount
        # only this scope's (and its descendants') episodes: never an enclosing scope's
        eps = set(
            conn.execute(
                select(episodes_table.c.id).where(
                    reads.scope_within(episodes_table, self.scope),
                    episodes_table.c.id.in_(list(eps)),
                )
            ).scalars()
        )
        still_cited = set(
            conn.execute(
                select(sources.c.episode_id).where(
                    sources.c.tenant == t, sources.c.episode_id.in_(list(eps))
                )
            ).scalars()
        )
        orphans = sorted(eps - still_cited)
        if orphans:
            counts["vectors"] += self._delete_vectors(conn, "e", orphans)
            counts["episodes"] += conn.execute(
                delete(episodes_table).where(
                    episodes_table.c.tenant == t, episodes_table.c.id.in_(orphans)
                )
            ).rowcount
        readlog.forget(conn, t, version_ids=ids, episode_ids=orphans)

    def purge(self) -> dict[str, int]:
        """Physically delete everything in this scope and the scopes under it
        (a user's purge takes their sessions too; other users are untouched)."""
        self._check_open()
        sh = self._shared
        t = self.scope.tenant
        with sh.backend.write() as conn:
            vis = reads.scope_within(versions, self.scope)
            vids = list(conn.execute(select(versions.c.id).where(vis)).scalars())
            fids = list(conn.execute(select(versions.c.fact_id).where(vis).distinct()).scalars())
            eids = list(
                conn.execute(
                    select(episodes_table.c.id).where(
                        reads.scope_within(episodes_table, self.scope)
                    )
                ).scalars()
            )
            counts = {"versions": 0, "episodes": 0, "vectors": 0, "sources": 0}
            for i in range(0, len(fids), 500):
                counts["sources"] += conn.execute(
                    delete(sources).where(
                        sources.c.tenant == t, sources.c.fact_id.in_(fids[i : i + 500])
                    )
                ).rowcount
            counts["vectors"] = self._delete_vectors(conn, "v", vids) + self._delete_vectors(
                conn, "e", eids
            )
            counts["versions"] = conn.execute(delete(versions).where(vis)).rowcount
            counts["episodes"] = conn.execute(
                delete(episodes_table).where(reads.scope_within(episodes_table, self.scope))
            ).rowcount
            readlog.forget(conn, t, version_ids=vids, episode_ids=eids)
            readlog.forget_scope(conn, self.scope)
            if self.scope.user is None and self.scope.agent is None and self.scope.session is None:
                conn.execute(delete(predicates_table).where(predicates_table.c.tenant == t))
                sh.registry.invalidate(t)
            if self.scope.user is None and self.scope.agent is None and self.scope.session is None:
                # nothing of the tenant is left, not even its name in the clock table
                conn.execute(delete(txclock).where(txclock.c.tenant == t))
            else:
                self._mark_erased(conn)
            sh.backend.after_erase(conn)
        sh.backend.maintenance_after_erase()
        self._invalidate_index()
        return counts

    def _mark_erased(self, conn: Connection) -> None:
        """Tell every process's search mirror of this tenant to reload."""
        tx = stamp(conn, self.scope.tenant, self._tx_us())
        conn.execute(
            update(txclock).where(txclock.c.tenant == self.scope.tenant).values(erased_us=tx)
        )

    def _delete_vectors(self, conn: Connection, kind: str, ids: Sequence[str]) -> int:
        n = 0
        for i in range(0, len(ids), 500):
            n += conn.execute(
                delete(vectors).where(
                    vectors.c.tenant == self.scope.tenant,
                    vectors.c.kind == kind,
                    vectors.c.item_id.in_(list(ids[i : i + 500])),
                )
            ).rowcount
        return n

    def _invalidate_index(self) -> None:
        index = self._shared.extensions.get("vector_cache")
        if index is not None:
            index.clear()
        retrieval = self._shared.extensions.get("retrieval")
        if retrieval is not None:  # erased text must not linger in the embedding cache
            retrieval.indexer.clear()
