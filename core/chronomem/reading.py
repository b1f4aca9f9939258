"""Running a read value (``chronomem.queries``) against the engine.

``run(engine, scope, query, read)`` answers a ``FactQuery`` (a list of facts),
a ``SearchQuery`` (a ``SearchResult``) or a ``RecallQuery`` (a rendered block).
A recall is made of other reads (its search, and the history of the slots it
surfaced): it runs them through ``read``, so the served-read log sees them as
parts of the recall (``readlog.capture.serve``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import facts as fact_store
from .arguments import names
from .engine import Engine
from .model import Fact, State, parse_states
from .queries import FactQuery, Query, RecallQuery, SearchQuery
from .render import render as render_block
from .reserved import for_people
from .retrieval import search as run_search
from .scope import Scope

Read = Callable[[Query], Any]  # runs a part of a read through the store's log


def run(engine: Engine, scope: Scope, query: Query, read: Read) -> Any:
    """What ``query`` returns in ``scope`` (instants resolved by the engine's clock)."""
    if isinstance(query, FactQuery):
        return _facts(engine, scope, query)
    if isinstance(query, SearchQuery):
        return _search(engine, scope, query)
    return _recall(query, read)


def _facts(engine: Engine, scope: Scope, q: FactQuery) -> list[Fact]:
    engine.check_open()
    v, k = engine.times(q.valid_at, q.known_at, q.as_of)
    return fact_store.read(
        engine,
        scope,
        v,
        k,
        parse_states(q.states),
        subject=q.subject,
        predicate=q.predicate,
        obj=q.obj,
        limit=q.limit,
        subject_prefix=q.subject_prefix,
        exact=q.exact,
        subjects=q.subjects,
    )


def _search(engine: Engine, scope: Scope, q: SearchQuery) -> Any:
    return run_search(
        engine,
        scope,
        q.query,
        k=q.k,
        valid_at=q.valid_at,
        known_at=q.known_at,
        as_of=q.as_of,
        states=q.states,
        include_episodes=q.include_episodes,
        min_score=q.min_score,
        subject=q.subject,
        subject_prefix=q.subject_prefix,
        predicates=names(q.predicates, "predicates") if q.predicates is not None else None,
        exact=q.exact,
        asked_at=q.asked_at,
    )


def _recall(q: RecallQuery, read: Read) -> str:
    """The search's live facts and episodes; with ``include_history`` the ended
    values of the surfaced slots under their own header (never retracted ones)."""
    hits = read(
        SearchQuery(
            q.query,
            k=q.k,
            valid_at=q.valid_at,
            known_at=q.known_at,
            as_of=q.as_of,
            include_episodes=q.include_episodes,
            asked_at=q.asked_at,
        )
    )
    shown = for_people(  # an adapter's internal row stands for its subject's facts
        hits,
        lambda subject: read(
            FactQuery(
                subject=subject,
                valid_at=q.valid_at,
                known_at=q.known_at,
                as_of=q.as_of,
                exact=True,
            )
        ),
    )
    live = [h.fact for h in shown if h.fact is not None]
    eps = [h.episode for h in shown if h.episode is not None]
    history: list[Fact] = []
    if q.include_history:
        seen: set[tuple[str, str]] = set()
        for f in live:
            if (f.subject_key, f.predicate) in seen:
                continue
            seen.add((f.subject_key, f.predicate))
            history += read(
                FactQuery(
                    subject=f.subject_key,
                    predicate=f.predicate,
                    states=[State.ENDED],
                    valid_at=q.valid_at,
                    known_at=q.known_at,
                    as_of=q.as_of,
                    exact=True,
                )
            )
    past = {h.episode.id: h.past_label for h in hits if h.episode and h.past_label}
    return render_block(live, history, eps, past)
