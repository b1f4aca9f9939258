"""``Memory``: the public face of the store."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import Any

from . import episodes as episode_store
from . import erasure, provenance, readlog, writes
from . import facts as fact_store
from .arguments import collection, names
from .backends import Backend
from .embedding import Embedder
from .engine import Engine
from .errors import InvalidInput, InvalidInterval, InvalidType, NotFound, TimeTravel
from .identity import encodable, fold, fold_predicate, require_id, require_text
from .integrity import CheckReport
from .model import (
    ALL_STATES,
    Episode,
    ExtractionReceipt,
    Fact,
    FactRow,
    Provenance,
    Receipt,
    State,
    Stats,
    parse_states,
)
from .ops import AssertOp, CorrectOp, EndOp, RetractOp, WriteOp
from .predicates import Cardinality, PredicateSpec, Volatility
from .render import render as render_block
from .retrieval import Reranker, Retrieval, SearchResult, attach
from .retrieval import search as run_search
from .scope import Scope
from .similarity import similarities as similarity
from .timeline import Timeline
from .timeutil import Clock, check_tx_clock, opt_us, system_clock, to_us

SourceLike = str | Episode
FactRef = str | Fact  # a fact id, the id of one of its versions, or a Fact


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
        _engine: Engine | None = None,
    ):
        if scope is not None and not isinstance(scope, Scope):
            raise InvalidType(f"scope must be a chronomem.Scope, not {type(scope).__name__}")
        base = scope or Scope()
        self.scope = base.child(tenant=tenant, user=user, agent=agent, session=session)
        if _engine is not None:
            self._engine = _engine
            return
        if clock is not None and not callable(clock):
            raise InvalidType("clock must be a callable returning an aware datetime")
        self._engine = Engine.open(url, clock or system_clock, read_log=bool(read_log))
        try:
            attach(self._engine, embedder, reembed=reembed).reranker = reranker
        except Exception:
            self._engine.close()
            raise

    # -- lifecycle -----------------------------------------------------------------
    @property
    def backend(self) -> Backend:
        self._check_open()
        return self._engine.backend

    @property
    def url(self) -> str:
        return str(self._engine.backend.engine.url.render_as_string(hide_password=True))

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
            _engine=self._engine,
        )

    def close(self) -> None:
        if not self._engine.closed:
            readlog.close(self)  # writes the served-read log's pending entries
        self._engine.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        self._engine.check_open()

    def now(self) -> datetime:
        return self._engine.now()

    # -- writing ---------------------------------------------------------------------
    def apply(self, ops: Sequence[WriteOp], *, recorded_at: datetime | None = None) -> Receipt:
        """Apply write operations in one transaction with one transaction time."""
        self._check_open()
        if not ops:
            return Receipt()
        at = opt_us(recorded_at, "recorded_at")
        if at is not None:
            check_tx_clock(at, "recorded_at is")
        return writes.apply(self._engine, self.scope, ops, at)

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
        at_us = to_us(at, "at") if at is not None else self._engine.now_us()
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
        if to_us(recorded_at, "recorded_at") > self._engine.now_us():
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
        self._engine.register_predicate(self.scope.tenant, spec)
        return spec

    def predicate(self, name: str) -> PredicateSpec:
        """The registry's spec for a predicate name or alias (unknown: MANY)."""
        self._check_open()
        return self._engine.resolve_predicate(self.scope.tenant, name)

    def predicate_known(self, name: str) -> bool:
        """Whether ``name`` is a built-in predicate or alias, or registered in this
        tenant (``predicate`` resolves an unknown name to ``MANY`` too)."""
        self._check_open()
        return self._engine.predicate_known(self.scope.tenant, require_text(name, "name"))

    def add(
        self,
        messages: object,
        *,
        extractor: Any = None,
        occurred_at: datetime | None = None,
        on_error: str = "report",
    ) -> ExtractionReceipt:
        """Store messages (a str, a list, OpenAI-style ``{"role", "content"}`` dicts,
        framework message objects) as episodes, extract facts from them (default:
        the offline rule extractor) and write the facts through the state machine.
        The ``ExtractionReceipt`` names the new ``episode_ids`` and counts
        ``extracted``, ``skipped`` (small talk), ``unextracted`` (kept, but nothing
        the extractor could read) and ``failed``."""
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
        return episode_store.insert(self._engine, self.scope, prepared)

    def get_episode(self, episode_id: str) -> Episode:
        self._check_open()
        require_id(episode_id, "episode_id")
        found = episode_store.get(self._engine, self.scope, episode_id)
        if found is None:
            raise NotFound(f"no episode {episode_id!r} in this scope")
        return found

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
        since_us = to_us(since, "since") if since is not None else None
        until_us = to_us(until, "until") if until is not None else None
        known_us = to_us(known_at, "known_at") if known_at is not None else None
        if role is not None and not isinstance(role, str):
            raise InvalidType("role must be a str")
        return episode_store.listing(
            self._engine,
            self.scope,
            since=since_us,
            until=until_us,
            known_at=known_us,
            role=role,
            limit=fact_store.check_limit(limit),
        )

    # -- reading -------------------------------------------------------------------------
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
        v, k = self._engine.times(valid_at, known_at, as_of)
        return fact_store.read(
            self._engine,
            self.scope,
            v,
            k,
            parse_states(states),
            subject=subject,
            predicate=predicate,
            obj=obj,
            limit=limit,
            subject_prefix=subject_prefix,
            exact=exact,
            subjects=subjects,
        )

    def rows(
        self,
        subjects: Sequence[str] | None = None,
        *,
        subject_prefix: str | None = None,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        exact: bool = False,
    ) -> list[FactRow]:
        """The live facts of a few subjects (and/or of the subjects starting with
        ``subject_prefix``) as lightweight ``FactRow`` values: a point read for
        callers that need a fact's slot, object and validity only (an adapter's
        ``get``). The same facts as ``facts(subjects=…, subject_prefix=…)`` at the
        same instants, each subject's rows together (by predicate, then valid
        from), without sources, metadata or scope: one prepared statement per 8
        subjects. With the served-read log on it is served (and logged) as that
        ``facts`` read."""
        self._check_open()
        if self._engine.read_log:
            found = self.facts(
                subjects=subjects,
                subject_prefix=subject_prefix,
                valid_at=valid_at,
                known_at=known_at,
                as_of=as_of,
                exact=exact,
            )
            return [FactRow.of(f) for f in found]
        v, k = self._engine.times(valid_at, known_at, as_of)
        return fact_store.rows(
            self._engine, self.scope, v, k, subjects, subject_prefix=subject_prefix, exact=exact
        )

    def history(
        self,
        subject: str,
        predicate: str | None = None,
        *,
        known_at: datetime | None = None,
        include_retracted: bool = False,
    ) -> list[Fact]:
        """Every value the subject's predicate had, as believed at ``known_at``, in valid-time order."""
        states = ALL_STATES if include_retracted else ALL_STATES - {State.RETRACTED}
        found = self.facts(subject=subject, predicate=predicate, known_at=known_at, states=states)
        return sorted(found, key=lambda f: (f.predicate, f.valid_from, f.recorded_at, f.version_id))

    def get(self, fact_id: FactRef, *, known_at: datetime | None = None) -> list[Fact]:
        """The versions of one fact known at ``known_at`` (default: now current).
        ``fact_id`` may also be the id of any of its versions, or a ``Fact``."""
        self._check_open()
        v, k = self._engine.times(None, known_at, None)
        return fact_store.versions_of(
            self._engine, self.scope, _ref_id(fact_id), v, k, is_fact_id=isinstance(fact_id, Fact)
        )

    def why(self, fact_id: FactRef) -> Provenance:
        """Where a fact came from: every version of it ever recorded, its source
        episodes, the extractors that wrote it, and what its writes superseded.
        ``fact_id`` may also be the id of any of its versions, or a ``Fact``."""
        self._check_open()
        return provenance.why(
            self._engine, self.scope, _ref_id(fact_id), is_fact_id=isinstance(fact_id, Fact)
        )

    def timeline(
        self, subject: str, predicate: str | None = None, *, exact: bool = False
    ) -> Timeline:
        """Every version of ``subject``'s facts ever recorded, on both clocks:
        ``.text()`` for a terminal, ``.plot()`` a matplotlib figure (``chronomem.timeline``)."""
        from .timeline import build

        self._check_open()
        return build(self._engine, self.scope, subject, predicate, exact=exact)

    def stats(self) -> Stats:
        self._check_open()
        return provenance.stats(self._engine, self.scope)

    # -- retrieval ----------------------------------------------------------------------
    @property
    def _retrieval(self) -> Retrieval:
        r = self._engine.retrieval
        assert r is not None, "retrieval.attach runs on open"
        return r

    @property
    def embedder(self) -> Embedder:
        return self._retrieval.embedder

    def similarities(self, query: str, version_ids: Iterable[str]) -> dict[str, float]:
        """The cosine similarity of ``query`` to each fact version's stored embedding,
        by version id (``chronomem.similarity``; versions without one are left out)."""
        return similarity(self._engine, self.scope.tenant, self.embedder, query, version_ids)

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
            self._engine,
            self.scope,
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
        return self._engine.read_log

    @read_log.setter
    def read_log(self, on: bool) -> None:
        self._engine.read_log = bool(on)

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

        self._check_open()
        return run_check(self._engine, repair=repair)

    def set_reranker(self, reranker: Reranker | None) -> None:
        self._retrieval.reranker = reranker

    # -- erasure -----------------------------------------------------------------------
    def erase(self, fact_id: FactRef) -> dict[str, int]:
        """Physically delete every version of a fact, its vectors and text index
        entries, and its source episodes that no surviving fact cites. Irreversible.
        ``fact_id`` may also be the id of any of its versions, or a ``Fact``."""
        ref = _ref_id(fact_id)
        self._check_open()
        return erasure.erase(self._engine, self.scope, fact_ref=ref)

    def erase_subject(
        self, subject: str, *, exact: bool = False, descendants: bool = True
    ) -> dict[str, int]:
        """``erase`` every fact about ``subject`` (every predicate, every belief state)
        in this scope and, unless ``descendants=False``, in every scope under it (from
        the tenant: every user's, agent's and session's facts about the subject)."""
        key = require_text(subject, "subject") if exact else fold(require_text(subject, "subject"))
        self._check_open()
        return erasure.erase(
            self._engine,
            self.scope,
            subject_key=key,
            subject=subject,
            descendants=bool(descendants),
        )

    def purge(self) -> dict[str, int]:
        """Physically delete everything in this scope and the scopes under it
        (a user's purge takes their sessions too; other users are untouched)."""
        self._check_open()
        return erasure.purge(self._engine, self.scope)
