"""``Memory``'s reads by subject prefix: whether the scope holds any live fact, which
of a caller's subject prefixes still hold one, an adapter's index entries (``chronomem.prefixes``), a page
of the newest live facts under one prefix (``chronomem.reads.newest_rows``), and a
search within one prefix returning scored rows (``retrieval.search.search_scored``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import prefixes, reads
from .retrieval.search import search_scored

if TYPE_CHECKING:
    from .engine import Engine
    from .model import FactRow, ScoredHits
    from .scope import Scope


class PrefixMethods:
    """Mixed into ``Memory``: existence probes and pages by subject prefix."""

    _engine: Engine
    scope: Scope

    def live_prefixes(
        self,
        subject_prefixes: Sequence[str],
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> list[str]:
        """The prefixes among ``subject_prefixes`` under which at least one fact of
        this scope (or a scope enclosing it) is live at ``valid_at`` as believed at
        ``known_at``, in the order given: one index probe per prefix, which stops at
        the first live fact it meets, so the cost is bounded by the number of
        prefixes, not of facts. Prefixes compare with stored subject keys character
        for character (as ``facts(subject_prefix=…)``). Not a served read: the
        read log does not record it (it serves no fact).

        :param subject_prefixes: non-empty prefixes of stored subject keys
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)"""
        self._engine.check_open()
        v, k = self._engine.times(valid_at, known_at, as_of)
        return prefixes.live_prefixes(self._engine, self.scope, v, k, subject_prefixes)

    def holds_live_fact(
        self,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> bool:
        """Whether this scope (or a scope enclosing it) holds at least one fact live
        at ``valid_at`` as believed at ``known_at``: one statement that stops at the
        first, so its cost does not grow with the store. Not a served read.

        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)"""
        self._engine.check_open()
        v, k = self._engine.times(valid_at, known_at, as_of)
        return prefixes.any_live(self._engine, self.scope, v, k)

    def live_entries(
        self,
        entries: prefixes.Entries,
        *,
        limit: int,
        offset: int = 0,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> list[str]:
        """A page of an adapter's index entries (``prefixes.Entries`` says which: facts
        written ``exact`` and valid at every instant in subject ranges of the
        adapter's, each object a subject prefix), their keys in code point order,
        each once, keeping the entries whose prefix holds a fact of this scope live at
        ``valid_at`` as believed at ``known_at``: one statement with the page's LIMIT
        and OFFSET, so the rows read are bounded by the page, not by the number of
        entries or facts (``chronomem.prefixes``). Not a served read.

        :param entries: the ranges (arms) read, the keys' separator, the objects' end
        :param limit: at most this many subjects
        :param offset: skip this many first
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)"""
        self._engine.check_open()
        v, k = self._engine.times(valid_at, known_at, as_of)
        return prefixes.live_entries(self._engine, self.scope, v, k, entries, limit, offset)

    def newest_rows(
        self,
        subject_prefix: str,
        predicates: Sequence[str],
        *,
        limit: int,
        offset: int = 0,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> list[FactRow] | None:
        """A page of the live facts of this scope under ``subject_prefix`` (an exact
        stored key prefix) whose predicate is one of ``predicates``, newest
        ``valid_from`` first: at most ``limit`` rows after ``offset``, one statement
        with the order and the cut in SQL, so the rows read follow the page, not the
        prefix. ``None`` when the subject index gives the prefix no range (the
        caller reads another way). Not a served read.

        :param subject_prefix: a non-empty prefix of stored subject keys
        :param predicates: one to a few predicate names
        :param limit: at most this many rows
        :param offset: skip this many first
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)"""
        self._engine.check_open()
        v, k = self._engine.times(valid_at, known_at, as_of)
        with self._engine.backend.point_read() as conn:
            return reads.newest_rows(
                conn,
                self.scope,
                valid_at=v,
                known_at=k,
                subject_prefix=subject_prefix,
                predicates=predicates,
                limit=limit,
                offset=offset,
            )

    def search_scored(
        self,
        query: str,
        *,
        subject_prefix: str,
        k: int = 10,
        states: Any = None,
        min_score: float = 0.0,
        exact: bool = False,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        asked_at: datetime | None = None,
    ) -> ScoredHits | None:
        """``search(query, subject_prefix=…)``'s hits, lean: each hit's version as a
        ``FactRow`` with its state, its score and its cosine to the query (None: no
        stored vector), the same hits in the same order with the same scores (a
        list; its ``held``, passed to ``similarities`` with the same query, answers
        for the prefix's versions without a read or an embedding),
        without ``Fact`` values, explanations or sources (an adapter that reads
        only an item's document and its score). ``None`` when ``search`` would not
        search within the prefix's rows (more than ``within.ROW_CAP`` of them, no
        index range, retracted versions asked for), a reranker is set, or the
        served-read log is on: the caller then runs ``search``.

        :param query: what to look for, in words
        :param subject_prefix: a non-empty prefix of stored subject keys
        :param k: at most this many hits (default 10)
        :param states: which facts may be hit, as for ``search`` (default: live)
        :param min_score: drop hits scoring below this (default 0.0)
        :param exact: as for ``search`` (default ``False``)
        :param valid_at: the valid instant (default: the clock's now)
        :param known_at: the belief instant (default: everything recorded so far)
        :param as_of: sets both instants (combines with neither)
        :param asked_at: as for ``search``"""
        if self._engine.read_log:
            self._engine.check_open()
            return None
        return search_scored(
            self._engine,
            self.scope,
            query,
            subject_prefix=subject_prefix,
            k=k,
            valid_at=valid_at,
            known_at=known_at,
            as_of=as_of,
            states=states,
            min_score=min_score,
            exact=exact,
            asked_at=asked_at,
        )
