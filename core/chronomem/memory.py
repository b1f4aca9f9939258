"""``Memory``: the public face of the store. Its arguments are checked in ``arguments``,
its reads are values (``queries``) run by ``reading``. The episode (and ``add``),
predicate, read-log, erasure and prefix-probe methods are mixins (``memory_*.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from . import facts as fact_store
from . import instant_order, provenance, reading, readlog, reads, writes
from .arguments import FactRef, SourceLike, assert_op, assert_ops, ref_id
from .backends import Backend
from .embedding import Embedder
from .engine import Engine
from .errors import InvalidType, TimeTravel
from .identity import require_text
from .integrity import CheckReport
from .memory_episodes import EpisodeMethods
from .memory_erasure import ErasureMethods
from .memory_log import ReadLogMethods
from .memory_predicates import PredicateMethods
from .memory_prefixes import PrefixMethods
from .model import ALL_STATES, Fact, FactRow, Held, Provenance, Receipt, ScopeCounts, State, Stats
from .ops import AssertOp, CorrectOp, EndOp, PlannedOp, PlannedWrite, RetractOp, WriteOp
from .predicates import Cardinality
from .queries import FactQuery, Query, RecallQuery, SearchQuery, States
from .retrieval import Reranker, Retrieval, SearchResult, attach
from .scope import Scope
from .similarity import similarities as similarity
from .timeline import Timeline
from .timeutil import Clock, check_tx_clock, opt_us, system_clock, to_us


class Memory(EpisodeMethods, PredicateMethods, ReadLogMethods, ErasureMethods, PrefixMethods):
    """Bitemporal memory. ``Memory()`` is in-memory SQLite, ``Memory("memory.db")`` a
    file, ``Memory("postgresql+psycopg://…")`` PostgreSQL.

    Every fact lives on two clocks: valid time (when it was true in the world,
    set by the caller) and transaction time (when the store believed it, set by
    the store's ``clock``). Nothing is overwritten.

    :param url: a SQLAlchemy URL or a SQLite file path (default: in-memory SQLite)
    :param scope: the ``Scope`` to start from (default: the default tenant)
    :param clock: a callable returning an aware ``datetime``, the transaction
        clock (default: the system clock)
    :param tenant: narrow ``scope`` to this tenant (likewise ``user``, ``agent``,
        ``session``: each a level of the scope)
    :param embedder: the embedder search uses (default: the offline hashing embedder)
    :param reembed: re-embed the stored texts when another embedder indexed the
        store (default ``False``: opening it with another embedder is refused)
    :param reranker: a reranker applied to search's fused hits (default none)
    :param read_log: log every read served (``chronomem.readlog``; default ``False``)"""

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
        """The store's database backend (``chronomem.backends``)."""
        self._check_open()
        return self._engine.backend

    @property
    def url(self) -> str:
        """The store's database URL, password hidden."""
        return str(self._engine.backend.engine.url.render_as_string(hide_password=True))

    def scoped(
        self,
        *,
        tenant: str | None = None,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
    ) -> Memory:
        """The same store seen from a narrower scope (or another tenant).

        :param tenant: another tenant, seen from its top (default: this view's)
        :param user: the user to narrow to (default: this view's); likewise ``agent``
            and ``session``, each a level under the one before"""
        self._check_open()
        return Memory(
            scope=self.scope.child(tenant=tenant, user=user, agent=agent, session=session),
            _engine=self._engine,
        )

    def close(self) -> None:
        """Close the store (every scoped view of it), writing the read log's pending entries."""
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
        """The store's clock now (the instant a read without ``valid_at`` uses)."""
        return self._engine.now()

    # -- writing ---------------------------------------------------------------------
    def apply(self, ops: Sequence[WriteOp], *, recorded_at: datetime | None = None) -> Receipt:
        """Apply write operations in one transaction with one transaction time.

        :param ops: ``AssertOp``/``EndOp``/``RetractOp``/``CorrectOp`` values (``assertion``)
        :param recorded_at: the transaction time (default: the clock's next instant);
            ``import_fact`` checks it"""
        self._check_open()
        if not ops:
            return Receipt()
        at = opt_us(recorded_at, "recorded_at")
        if at is not None:
            check_tx_clock(at, "recorded_at is")
        return writes.apply(self._engine, self.scope, ops, at)

    def apply_planned(
        self,
        subjects: Sequence[str],
        plan: Callable[[list[FactRow]], Sequence[PlannedOp]],
        *,
        valid_at: datetime | None = None,
        then: Sequence[WriteOp] = (),
    ) -> Receipt:
        """Plan a write from what ``subjects`` hold and apply it, in one transaction
        with one transaction time: ``plan`` receives the live facts of ``subjects``
        (exact keys) at ``valid_at`` (default: the clock's now), as
        ``rows(subjects, valid_at=…, exact=True)`` reads them, and returns the
        operations, applied before ``then``. The facts are read inside the write
        transaction (on SQLite after it took the database's write lock, by the
        writer's own read of current versions: one read where ``rows`` then
        ``apply`` take two). ``plan`` may return asserts, ends and ``DocumentOp``s
        (a subject's document put, applied set-wise where that gives the same
        rows); an end of a subject's values (``EndOthersOp``, ``EndOp`` without an
        object, a ``DocumentOp`` ending its others) must name one of ``subjects``
        exactly. The read is not logged (``read_log``)."""
        self._check_open()
        v, _ = self._engine.times(valid_at, None, None)
        planned = PlannedWrite(tuple(subjects), v, plan, tuple(then))
        return writes.apply_planned(self._engine, self.scope, planned)

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
        """Check one fact and return it as an operation (for batched ``apply``).

        :param subject: who or what the fact is about
        :param predicate: the relation (a name or a registered alias)
        :param obj: the value
        :param valid_from: when it starts to hold (default: the transaction time)
        :param valid_to: when it stops holding (default: the next known change)
        :param source: the episode(s) it came from: ids or ``Episode``s
        :param metadata: a JSON-serialisable mapping kept with it (default empty)
        :param extractor: the name of what extracted it (default none)
        :param exact: key subject/predicate/object as given: no folding, no alias
            resolution (default ``False``)
        :param cardinality: the slot's cardinality for this write (default: the
            predicate's)
        :param index_text: the text search indexes ("" = not indexed; default:
            the fact's words)
        :param valid_for: a TTL: holds from the transaction time for this long
            (excludes ``valid_from``/``valid_to``)"""
        return assert_op(
            subject,
            predicate,
            obj,
            valid_from=valid_from,
            valid_to=valid_to,
            source=source,
            metadata=metadata,
            extractor=extractor,
            exact=exact,
            cardinality=cardinality,
            index_text=index_text,
            valid_for=valid_for,
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
        """Assert that ``subject predicate obj`` holds from ``valid_from`` until
        ``valid_to``. The parameters are ``assertion``'s:

        :param subject: who or what the fact is about
        :param predicate: the relation (a name or a registered alias)
        :param obj: the value
        :param valid_from: when it starts to hold (default: now)
        :param valid_to: when it stops holding (default: the next known change)
        :param source: the episode(s) it came from: ids or ``Episode``s
        :param metadata: a JSON-serialisable mapping kept with it (default empty)
        :param extractor: the name of what extracted it (default none)"""
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
        """Batched ingest: many facts, one transaction, one transaction time.

        :param facts: ``AssertOp``s, or mappings of ``assertion``'s arguments
            (``subject``, ``predicate`` and ``obj`` required)"""
        return self.apply(assert_ops(facts))

    def end(
        self, subject: str, predicate: str, obj: str | None = None, *, at: datetime | None = None
    ) -> Receipt:
        """The world changed with no successor ("I left Acme"): the value stops at ``at``.

        :param subject: who or what the fact is about
        :param predicate: the relation
        :param obj: the value that stops (default: every value of the slot)
        :param at: when it stops holding (default: now)"""
        require_text(subject, "subject")
        require_text(predicate, "predicate")
        if obj is not None:
            require_text(obj, "obj")
        at_us = to_us(at, "at") if at is not None else self._engine.now_us()
        return self.apply([EndOp(subject, predicate, obj, at_us)])

    def retract(self, fact_id: FactRef) -> Receipt:
        """The record was wrong ("we misheard"): the fact's current versions are closed
        as retracted; their valid time is untouched.

        :param fact_id: the fact's id, the id of any of its versions
            (``Receipt.added``), or a ``Fact``"""
        return self.apply([RetractOp(ref_id(fact_id))])

    def correct(self, fact_id: FactRef, obj: str) -> Receipt:
        """Retract a fact and assert ``obj`` over the same interval, as one write.

        :param fact_id: the fact's id, the id of any of its versions, or a ``Fact``
        :param obj: the right value"""
        return self.apply([CorrectOp(ref_id(fact_id), require_text(obj, "obj"))])

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
        tenant), or record at the current time (``remember``).

        :param subject: who or what the fact is about
        :param predicate: the relation (a name or a registered alias)
        :param obj: the value
        :param recorded_at: when the store came to believe it (its transaction time)
        :param valid_from: when it starts to hold (default: ``recorded_at``)
        :param valid_to: when it stops holding (default: the next known change)
        :param source: the episode(s) it came from: ids or ``Episode``s
        :param metadata: a JSON-serialisable mapping kept with it (default empty)
        :param extractor: the name of what extracted it (default none)"""
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

    # -- reading -------------------------------------------------------------------------
    def facts(
        self,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        obj: str | None = None,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        states: States = None,
        limit: int | None = None,
        subject_prefix: str | None = None,
        exact: bool = False,
        subjects: Sequence[str] | None = None,
    ) -> list[Fact]:
        """Facts in this scope (and the scopes enclosing it) at a valid instant as
        believed at a belief instant (``FactQuery``).

        :param subject: only this subject's facts (default: every subject)
        :param predicate: only this predicate's (a name or alias; default: every one)
        :param obj: only facts with this value
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither: ``InvalidTimeSelector``)
        :param states: any of ``"live"``, ``"ended"``, ``"scheduled"``, ``"retracted"``
            (default: live)
        :param limit: at most this many facts (default: all)
        :param subject_prefix: only subjects whose stored key starts with this,
            character for character
        :param exact: match subject/predicate/object as given, without folding or
            aliases (for adapters that write with ``exact`` keys; default ``False``)
        :param subjects: these subjects, in one query"""
        return self._read(
            FactQuery(
                subject,
                predicate,
                obj,
                valid_at,
                known_at,
                as_of,
                states,
                limit,
                subject_prefix,
                exact,
                subjects,
            )
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
        ``facts`` read.

        :param subjects: these subjects' facts
        :param subject_prefix: the facts of the subjects whose stored key starts with this
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)
        :param exact: match the subjects as given, without folding (default ``False``)"""
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

    def newest_facts(
        self,
        predicate: str,
        *,
        limit: int,
        offset: int = 0,
        exact: bool = False,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> list[Fact]:
        """A page of the live facts of one predicate in this scope (and the scopes
        enclosing it), newest version first: valid from descending, then recorded
        at descending, then the subject key in code point order (``reads.
        newest_first``). At most ``limit`` facts after ``offset``, the order and the
        cut in SQL: the rows returned follow the page, not the store (a caller
        filling a page reads what it still needs). The same facts as ``facts(
        predicate=…)`` at the same instants, sorted and cut; with the served-read log
        on it is served (and logged) as that ``facts`` read, sorted and cut.

        :param predicate: the predicate (a name or alias; as given with ``exact``)
        :param limit: at most this many facts
        :param offset: skip this many first
        :param exact: match the predicate as given, without aliases (default ``False``)
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)"""
        self._check_open()
        n, skip = fact_store.check_limit(limit), fact_store.check_limit(offset)
        if n is None or skip is None:
            raise InvalidType("limit and offset must be ints")
        if self._engine.read_log:
            found = self.facts(
                predicate=predicate, exact=exact, valid_at=valid_at, known_at=known_at, as_of=as_of
            )
            return sorted(found, key=reads.newest_first)[skip : skip + n]
        v, k = self._engine.times(valid_at, known_at, as_of)
        return fact_store.newest(self._engine, self.scope, v, k, predicate, n, skip, exact=exact)

    def newest_by_instant(
        self,
        predicate: str,
        key: str,
        *,
        limit: int,
        offset: int = 0,
        where: Callable[[Mapping[str, Any]], bool] | None = None,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> list[Fact] | None:
        """A page of the live facts of one predicate (a stored name, as given) in this
        scope (and the scopes enclosing it) now, the instant at ``key`` in their
        metadata descending, then the subject key descending in code point order (then
        valid from, object key, version id): those ``where`` keeps (given the fact's
        metadata), at most ``limit`` after ``offset``. Read through the index
        ``schema.INSTANT_ORDERS`` holds for that predicate and key, backwards: the rows
        read follow the page (and what ``where`` drops), not the store. None, for the
        caller to read and sort the facts itself, when no index orders them so, when a
        version of the predicate in the tenant believed at ``known_at`` holds at ``key``
        no UTC instant as ``datetime.isoformat`` writes it (``Backend.utc_iso_text``),
        or with the served-read log on (a ``facts`` read is logged instead).

        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far; a
            past one merges the walk with one of the closed versions' index, schema v14)
        :param as_of: sets both instants (combines with neither)"""
        self._check_open()
        n, skip = fact_store.check_limit(limit), fact_store.check_limit(offset)
        if n is None or skip is None:
            raise InvalidType("limit and offset must be ints")
        if self._engine.read_log:
            return None
        v, k = self._engine.times(valid_at, known_at, as_of)
        return instant_order.newest_by_instant(
            self._engine, self.scope, v, predicate, key, n, skip, where, k
        )

    def count_facts(
        self,
        predicate: str,
        *,
        exact: bool = False,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> int:
        """How many live facts of one predicate this scope (and the scopes enclosing
        it) holds at the instants: ``len(facts(predicate=…))`` counted in SQL, no fact
        read back (an adapter's ``count``). Not a served read: the read log does not
        record it.

        :param predicate: the predicate (a name or alias; as given with ``exact``)
        :param exact: match the predicate as given, without aliases (default ``False``)
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)"""
        self._check_open()
        v, k = self._engine.times(valid_at, known_at, as_of)
        return fact_store.count(self._engine, self.scope, v, k, predicate, exact=exact)

    def facts_citing(
        self,
        episode_ids: Sequence[str],
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> list[Fact]:
        """The live facts of this scope (and the scopes enclosing it) with any of
        ``episode_ids`` among their sources, with all their sources: the facts read
        from those episodes, found through the sources' episode index, so the rows
        read follow the episodes asked, not the store (an adapter forgetting a message
        and the facts only it supports). Not a served read: the read log does not
        record it.

        :param episode_ids: the source episodes' ids
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)"""
        self._check_open()
        v, k = self._engine.times(valid_at, known_at, as_of)
        return fact_store.citing(self._engine, self.scope, v, k, episode_ids)

    def facts_with_values(
        self,
        subject: str,
        predicate: str,
        objects: Sequence[str],
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> list[Fact]:
        """The live facts ``(subject, predicate, o)`` of this scope (and the scopes
        enclosing it) for each ``o`` in ``objects``, all matched as given (written
        ``exact``) and many-valued (each value its own slot): what ``facts(subject=,
        predicate=, exact=True)`` returns with those objects, found by their slot keys
        (``cm_versions_slot_current``), so the rows read follow the values asked, not
        the subject's other values (an adapter's markers: which of these messages were
        forgotten). Not a served read: the read log does not record it.

        :param subject: the subject, as stored
        :param predicate: the predicate, as stored (no alias)
        :param objects: the values asked
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)"""
        self._check_open()
        v, k = self._engine.times(valid_at, known_at, as_of)
        return fact_store.with_values(self._engine, self.scope, v, k, subject, predicate, objects)

    def history(
        self,
        subject: str,
        predicate: str | None = None,
        *,
        known_at: datetime | None = None,
        include_retracted: bool = False,
    ) -> list[Fact]:
        """Every value the subject's predicate had, as believed at ``known_at``, in
        valid-time order (live, ended and scheduled values).

        :param subject: who or what the facts are about
        :param predicate: only this predicate's values (default: every predicate's)
        :param known_at: the belief instant (default: everything recorded so far)
        :param include_retracted: add the retracted values (default ``False``)"""
        states = ALL_STATES if include_retracted else ALL_STATES - {State.RETRACTED}
        found = self.facts(subject=subject, predicate=predicate, known_at=known_at, states=states)
        return sorted(found, key=lambda f: (f.predicate, f.valid_from, f.recorded_at, f.version_id))

    def get(self, fact_id: FactRef, *, known_at: datetime | None = None) -> list[Fact]:
        """The versions of one fact known at ``known_at``.

        :param fact_id: the fact's id, the id of any of its versions, or a ``Fact``
        :param known_at: the belief instant (default: the versions current now)"""
        self._check_open()
        v, k = self._engine.times(None, known_at, None)
        return fact_store.versions_of(
            self._engine, self.scope, ref_id(fact_id), v, k, is_fact_id=isinstance(fact_id, Fact)
        )

    def why(self, fact_id: FactRef) -> Provenance:
        """Where a fact came from: every version of it ever recorded, its source
        episodes, the extractors that wrote it, and what its writes superseded.

        :param fact_id: the fact's id, the id of any of its versions, or a ``Fact``"""
        self._check_open()
        return provenance.why(
            self._engine, self.scope, ref_id(fact_id), is_fact_id=isinstance(fact_id, Fact)
        )

    def timeline(
        self, subject: str, predicate: str | None = None, *, exact: bool = False
    ) -> Timeline:
        """Every version of ``subject``'s facts ever recorded, on both clocks:
        ``.text()`` for a terminal, ``.plot()`` a matplotlib figure (``chronomem.timeline``).

        :param subject: who or what the facts are about
        :param predicate: only this predicate's versions (default: every predicate's)
        :param exact: match the subject as given, without folding (default ``False``)"""
        from .timeline import build

        self._check_open()
        return build(self._engine, self.scope, subject, predicate, exact=exact)

    def stats(self) -> Stats:
        """Counts of this scope's facts (and live ones), versions (and current ones),
        episodes and predicates, and its last transaction time."""
        self._check_open()
        return provenance.stats(self._engine, self.scope)

    def scopes(self) -> list[ScopeCounts]:
        """Every scope of the whole database (every tenant) that holds facts or
        episodes, with its own counts: where an adapter's data is, whatever scope
        this handle reads."""
        self._check_open()
        return provenance.scopes(self._engine)

    # -- retrieval ----------------------------------------------------------------------
    @property
    def _retrieval(self) -> Retrieval:
        r = self._engine.retrieval
        assert r is not None, "retrieval.attach runs on open"
        return r

    @property
    def embedder(self) -> Embedder:
        """The embedder search and indexing use."""
        return self._retrieval.embedder

    def similarities(
        self, query: str, version_ids: Iterable[str], *, held: Held | None = None
    ) -> dict[str, float]:
        """The cosine similarity of ``query`` to each fact version's stored embedding,
        by version id (``chronomem.similarity``; versions without one are left out).
        ``held``: ``search_scored``'s ``ScoredHits.held`` for the same query (the
        versions that search read answered from it, the same floats)."""
        self._check_open()
        return similarity(self._engine, self.scope.tenant, self.embedder, query, version_ids, held)

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        states: States = None,
        include_episodes: bool = False,
        min_score: float = 0.0,
        subject: str | None = None,
        subject_prefix: str | None = None,
        predicates: Sequence[str] | None = None,
        exact: bool = False,
        asked_at: datetime | None = None,
    ) -> SearchResult:
        """Hybrid search (``SearchQuery``): fact lexical, fact vector and entity-graph
        legs (plus the episode legs with ``include_episodes``), the temporal predicate
        applied inside each leg, fused by reciprocal rank. Each hit carries
        ``explain``; a failing leg is reported in ``result.failed_legs``
        (``result.degraded``).

        :param query: what to look for, in words
        :param k: at most this many hits (default 10)
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)
        :param states: which facts may be hit, as for ``facts`` (default: live)
        :param include_episodes: search the episodes too (default ``False``)
        :param min_score: drop hits scoring below this (default 0.0)
        :param subject: only this subject's facts
        :param subject_prefix: only subjects whose stored key starts with this
        :param predicates: only these predicates' facts (names or aliases)
        :param exact: match ``subject`` as given, without folding (default ``False``)
        :param asked_at: when the question is asked: its relative times count from it"""
        q = (query, k, valid_at, known_at, as_of, states, include_episodes, min_score, subject)
        return self._read(SearchQuery(*q, subject_prefix, predicates, exact, asked_at))

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
        asked_at: datetime | None = None,
    ) -> str:
        """A prompt-ready block of the live facts relevant to ``query`` (with their
        validity), framed as reference data (``RecallQuery``). Retracted values are
        never rendered.

        :param query: what the block is for, in words (searched as ``search`` does)
        :param k: at most this many hits searched (default 8)
        :param include_history: add the ended values of the surfaced slots under
            their own header (default ``False``)
        :param include_episodes: add the episodes the search hits (default ``False``)
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)
        :param asked_at: as for ``search``"""
        q = (query, k, include_history, include_episodes, valid_at, known_at, as_of, asked_at)
        return self._read(RecallQuery(*q))

    def _read(self, query: Query) -> Any:
        """Run a read value (``chronomem.reading``), through the served-read log."""
        self._check_open()
        return readlog.serve(self, query, reading.run)

    def check(self, *, repair: bool = False) -> CheckReport:
        """Check the whole database (every tenant) for damage: the text indexes,
        invariant I1, orphan source links and vectors (``chronomem.integrity``).

        :param repair: also rebuild damaged text indexes and delete orphans
            (default ``False``)"""
        from .integrity import check as run_check

        self._check_open()
        return run_check(self._engine, repair=repair)

    def set_reranker(self, reranker: Reranker | None) -> None:
        """Rerank search's fused hits with ``reranker`` from now on.

        :param reranker: the reranker, or ``None`` for none"""
        self._retrieval.reranker = reranker
