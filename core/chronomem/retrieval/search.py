"""``Memory.search``: fan out to the legs, fuse, explain."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from sqlalchemy import Connection, and_, bindparam, select

from .. import backends, reads
from ..embedding import Embedder, embed_query_checked
from ..errors import ChronomemError, InvalidInput, InvalidType
from ..identity import fold
from ..model import Episode, Fact, ScoredHits, State, parse_states
from ..prepared import Ahead, PreparedIn
from ..render import asks_about_past
from ..schema import episodes as episodes_table
from ..schema import sources as sources_table
from ..schema import versions
from ..timeutil import MAX_US, opt_us
from . import askwords, legs, spread, staleness, within
from . import pgvector as pgv
from .cache import Mirror, MirrorSet, TenantMirror
from .fusion import (
    GRAPH_CAP,
    Fused,
    HalfLives,
    HitKind,
    finish,
    fuse,
    in_window,
    leg_weights,
    recency,
)
from .indexing import Indexer
from .querytime import time_window
from .rerank import Reranker
from .tuning import DEFAULT

if TYPE_CHECKING:
    from ..engine import Engine
    from ..registry import Registry
    from ..scope import Scope

log = logging.getLogger("chronomem.search")

FACT_LEGS = ("fact_lexical", "fact_vector", "entity_graph")
MAX_CANDIDATES = 100_000
# An episode whose role (its speaker) is a word of the query, or whose role the query's
# first or second person names (legs.addressed_roles), scores 1 + SPEAKER_BOOST times
# its fused votes: "What is Gina's favourite dance?" prefers Gina's turns, "what did
# I say about the trip" the user's. (The knobs are tuning.DEFAULT's fields.)
SPEAKER_BOOST = DEFAULT.speaker_boost
EPISODE_LEGS = (
    "episode_lexical",
    "episode_vector",
    "episode_window",
    "episode_context",
    "episode_speaker",
    "conversation_spread",
)
# A question that counts or compares (spread.asks_for_several) has its cut spread over
# conversations: beyond a conversation's first SPREAD_FREE hits (>= 1), each further
# one scores SPREAD_DECAY times less per hit of it already placed.
SPREAD_FREE = DEFAULT.spread_free
SPREAD_DECAY = DEFAULT.spread_decay


# A query naming a short past time ("last Friday", "two weeks ago": at most
# WINDOW_DAYS long, over before the question is asked) also gets the episodes of that
# time (up to WINDOW_SLACK_DAYS after it) ranked among themselves by cosine: one more
# vote, of WINDOW_WEIGHT ("episode_window"). The time boost can only lift what another
# leg found; this finds what the words alone rank too low. A broad window (a month, a
# year) would vote for much of the store, so it gets the boost alone.
WINDOW_WEIGHT = DEFAULT.window_weight
WINDOW_DAYS = DEFAULT.window_days
WINDOW_SLACK_DAYS = DEFAULT.window_slack_days
WINDOW_DEPTH = DEFAULT.window_depth
_DAY_US = 86_400_000_000


def short_past(window: tuple[int, int] | None, asked_us: int) -> tuple[int, int] | None:
    """``window`` if it lasts at most ``WINDOW_DAYS`` and ends by ``asked_us``."""
    if window is None or window[1] - window[0] > WINDOW_DAYS * _DAY_US or window[1] > asked_us:
        return None
    return window


def _inside(start: np.ndarray, window: tuple[int, int]) -> np.ndarray:
    lo, hi = window
    return (start >= lo) & (start < hi + int(WINDOW_SLACK_DAYS * _DAY_US))


def _window_leg(
    conn: Connection,
    scope: Scope,
    m: Mirror,
    inside: np.ndarray,
    terms: Sequence[str],
    tf: legs.TimeFilter,
    qvec: np.ndarray,
    n: int,
) -> list[tuple[str, float]]:
    """The episodes ``inside`` the window, best first: the reciprocal-rank fusion of
    their text-index ranking (the tenant's first ``WINDOW_DEPTH`` that match the
    query's terms, the others dropped) and their cosine ranking among themselves."""
    ranked = legs.lexical_episodes(conn, scope, terms, tf, WINDOW_DEPTH)
    pos = m.pos
    lexical = [i for i, _ in ranked if (p := pos.get(i)) is not None and inside[p]][:n]
    cosine = [i for i, _ in legs.vector_leg(m, inside, qvec, n, conn)]
    fused = fuse(
        {
            "lexical": (HitKind.EPISODE, [(i, 0.0) for i in lexical]),
            "cosine": (HitKind.EPISODE, [(i, 0.0) for i in cosine]),
        }
    )
    votes = [(i, f.rrf) for (_, i), f in fused.items()]
    return sorted(votes, key=lambda x: (-x[1], x[0]))[:n]


class _NoSQL:
    """A connection refusing every use: what the mirror's legs get while the
    lexical leg's statement holds the real one (``search``'s ``meanwhile``); a leg
    that would read SQL then (vectors the mirror no longer keeps) raises, and is
    ranked again after the sync."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("no SQL while the lexical leg's statement runs")


_NO_SQL = cast(Connection, _NoSQL())


def _mirror_state(mirror: TenantMirror) -> tuple[Any, ...]:
    """What changes whenever a sync changes the mirror (rows brought, closes seen,
    a reload): equal before and after a sync, the sync changed nothing."""
    return (id(mirror.v), id(mirror.e), mirror.last, mirror.erased, mirror.v.n, mirror.e.n)


class SearchFailed(ChronomemError, RuntimeError):
    """Every retrieval leg failed."""


@dataclass(frozen=True)
class Hit:
    fact: Fact | None
    episode: Episode | None
    score: float
    explain: dict[str, Any] = field(default_factory=dict)
    # an episode's status at the search's instant (retrieval/staleness.py): "current",
    # "stale" or "unknown" (None for a fact); a stale one's replacing live facts and
    # the words that say it is past ("since superseded: user lives in Berlin")
    episode_status: str | None = None
    superseded_by: tuple[Fact, ...] = ()
    past_label: str | None = None

    @property
    def text(self) -> str:
        if self.fact is not None:
            return f"{self.fact.subject} {self.fact.predicate.replace('_', ' ')} {self.fact.object}"
        return self.episode.text if self.episode is not None else ""


class SearchResult(list[Hit]):
    """The hits, best first; ``degraded`` and ``failed_legs`` say whether a leg failed."""

    def __init__(self, hits: Sequence[Hit] = (), failed: dict[str, str] | None = None):
        super().__init__(hits)
        self.failed_legs: dict[str, str] = failed or {}

    @property
    def degraded(self) -> bool:
        return bool(self.failed_legs)


@dataclass
class Retrieval:
    """What ``attach`` hangs on a store: the embedder, its indexer, the mirrors."""

    embedder: Embedder
    indexer: Indexer
    mirrors: MirrorSet
    reranker: Reranker | None = None
    pgvector: bool = False  # vector legs in SQL (HNSW) instead of the in-process mirror
    # test hook: leg name -> callable raising, to prove failure reporting
    fail: dict[str, Callable[[], None]] = field(default_factory=dict)


def _checked(
    engine: Engine,
    query: Any,
    k: Any,
    min_score: Any,
    valid_at: Any,
    known_at: Any,
    as_of: Any,
    states: Any,
    asked_at: Any,
) -> tuple[legs.TimeFilter, int]:
    """A search's arguments checked, and its instants resolved: the temporal
    filter, and the instant the query's relative times count from."""
    if not isinstance(query, str):
        raise InvalidType(f"query must be a str, not {type(query).__name__}")
    if not isinstance(k, int) or isinstance(k, bool) or k < 0:
        raise InvalidInput("k must be a non-negative int")
    if not isinstance(min_score, int | float) or min_score != min_score:
        raise InvalidInput("min_score must be a number")
    engine.check_open()
    v, kn = engine.times(valid_at, known_at, as_of)
    asked = opt_us(asked_at, "asked_at")
    asked_us = v if asked is None else asked  # relative times in the query count from it
    return legs.TimeFilter(v, kn, parse_states(states)), asked_us


def search_scored(
    engine: Engine,
    scope: Scope,
    query: str,
    *,
    subject_prefix: str,
    k: int = 10,
    valid_at: Any = None,
    known_at: Any = None,
    as_of: Any = None,
    states: Any = None,
    min_score: float = 0.0,
    exact: bool = False,
    asked_at: Any = None,
) -> ScoredHits | None:
    """``Memory.search_scored``: ``search``'s fact hits within a prefix as
    ``ScoredRow`` values (``within.scored``), in ``search``'s order with its scores,
    with what the search held (``ScoredHits.held``);
    None when ``search`` would not search within the prefix's rows (too many rows,
    no index range, retracted versions asked for) or would rerank (a reranker is
    set): the caller then runs ``search``. Raises as ``search`` does."""
    r = engine.retrieval
    assert r is not None, "retrieval.attach runs on open"
    tf, asked_us = _checked(
        engine, query, k, min_score, valid_at, known_at, as_of, states, asked_at
    )
    wanted = set(FACT_LEGS)
    if r.reranker is not None or not within.applies(subject_prefix, tf, wanted):
        return None
    if k == 0 or not query.strip():
        return ScoredHits()
    found = within.scored(
        engine,
        scope,
        query,
        tf,
        k=k,
        n=min(max(3 * k, 30), MAX_CANDIDATES),
        wanted=wanted,
        min_score=min_score,
        subject_prefix=subject_prefix,
        subject=None,
        predicates=None,
        exact=exact,
        asked_us=asked_us,
    )
    if found is None:
        return None
    if found.every_leg_failed:
        raise SearchFailed(f"every search leg failed: {found.failed}")
    hits = ScoredHits(found.kept)
    hits.held = found.held
    return hits


def search(
    engine: Engine,
    scope: Scope,
    query: str,
    *,
    k: int = 10,
    valid_at: Any = None,
    known_at: Any = None,
    as_of: Any = None,
    states: Any = None,
    include_episodes: bool = False,
    min_score: float = 0.0,
    subject: str | None = None,
    subject_prefix: str | None = None,
    predicates: Sequence[str] | None = None,
    exact: bool = False,
    legs_enabled: Sequence[str] | None = None,
    asked_at: Any = None,
) -> SearchResult:
    """``Memory.search`` for ``scope`` (docs/design.md §6): resolve the read instants
    and the caller's filters, sync the tenant's mirror, run every enabled leg in one
    read transaction (each with the scope and temporal filter inside it, each in its
    own error boundary), fuse by reciprocal rank, score from the mirror, fetch only
    the rows kept, then rerank (if a reranker is set) and cut to ``k``.
    ``legs_enabled`` limits the legs (benchmarks and tests); a leg that fails is
    reported in ``failed_legs``, and ``SearchFailed`` is raised only when all do.
    ``asked_at``: the instant the question is asked; the query's relative times
    ("last Saturday", "two weeks ago") count from it (default: the valid instant).
    It moves only the time window's boost, never which rows are searched."""
    r = engine.retrieval
    assert r is not None, "retrieval.attach runs on open"
    tf, asked_us = _checked(
        engine, query, k, min_score, valid_at, known_at, as_of, states, asked_at
    )
    v, kn = tf.valid_at, tf.known_at
    if k == 0 or not query.strip():
        return SearchResult()
    n = min(max(3 * k, 30), MAX_CANDIDATES)  # per leg
    wanted = set(legs_enabled) if legs_enabled is not None else set(FACT_LEGS + EPISODE_LEGS)
    if not include_episodes:
        wanted -= set(EPISODE_LEGS)
    rankings: dict[str, tuple[HitKind, list[tuple[str, float]]]] = {}
    failed: dict[str, str] = {}
    qvec: np.ndarray | None = None
    if subject_prefix and within.applies(subject_prefix, tf, wanted):
        # a prefix holding few rows is searched within them (retrieval/within.py)
        found = within.search(
            engine,
            scope,
            query,
            tf,
            k=k,
            n=n,
            wanted=wanted,
            min_score=min_score,
            subject_prefix=subject_prefix,
            subject=subject,
            predicates=predicates,
            exact=exact,
            asked_us=asked_us,
        )
        if found is not None:
            if found.every_leg_failed:
                raise SearchFailed(f"every search leg failed: {found.failed}")
            hits = [Hit(fact, None, score, explain) for fact, score, explain in found.kept]
            if r.reranker is not None and hits:
                hits = list(r.reranker.rerank(query, hits))
            for h in hits[:k]:
                h.explain["degraded"] = bool(found.failed)
            return SearchResult(hits[:k], found.failed)
    terms = legs.query_terms(query)  # (a search within a prefix takes its own)
    # Statements, not a transaction (``Backend.statement_read``): on PostgreSQL each
    # runs on its own, which spares the BEGIN and COMMIT round trips and lets a
    # failed leg fail alone without a savepoint around every leg.
    with engine.backend.statement_read() as conn:
        preds = None
        skey = None
        if predicates is not None:
            preds = [
                p if exact else engine.registry.resolve(conn, scope.tenant, p).name
                for p in predicates
            ]
        if subject is not None:
            skey = subject if exact else fold(subject)
        mirror = r.mirrors.get(scope.tenant)

        # Where a failed statement aborts the transaction it runs in (PostgreSQL), the
        # SQL legs run in a savepoint each, so one failure stays one leg's; outside a
        # transaction (PostgreSQL's statement_read) a failed statement ends nothing
        # else and no savepoint is needed. SQLite needs none.
        db = backends.of(conn)
        contain = db.failed_statement_aborts and not db.statement_at_a_time(conn)

        def run(
            name: str, kind: HitKind, fn: Callable[[], list[tuple[str, float]]], sql: bool = True
        ) -> None:
            if name not in wanted:
                return
            try:
                with conn.begin_nested() if sql and contain else nullcontext():
                    hook = r.fail.get(name)
                    if hook is not None:
                        hook()
                    rankings[name] = (kind, fn())
            except Exception as exc:  # a failing leg is reported, not fatal
                log.warning("search leg %s failed: %s", name, exc)
                failed[name] = f"{type(exc).__name__}: {exc}"

        def fact_lexical(
            ahead: Sequence[Ahead] = (), meanwhile: Callable[[], None] | None = None
        ) -> None:
            run(
                "fact_lexical",
                HitKind.FACT,
                lambda: legs.lexical_facts(
                    conn,
                    scope,
                    askwords.fact_terms(terms),  # "occupation" also searches "job title"
                    tf,
                    n,
                    subject_prefix=subject_prefix,
                    predicates=preds,
                    subject_key=skey,
                    ahead=ahead,
                    meanwhile=meanwhile,
                ),
            )

        def q() -> np.ndarray:
            nonlocal qvec
            if qvec is None:
                qvec = embed_query_checked(r.embedder, query)
            return qvec

        retracted_ids: list[str] = []  # read after the sync, when retracted rows are wanted
        fmask: np.ndarray | None = None

        def mask_at(at: np.ndarray | None) -> np.ndarray:
            return legs.fact_mask(
                mirror,
                scope,
                tf,
                retracted_ids=retracted_ids,
                subject_prefix=subject_prefix,
                predicates=preds,
                subject_key=skey,
                at=at,
            )

        def fact_mask() -> np.ndarray:
            nonlocal fmask
            if fmask is None:
                fmask = mask_at(None)
            return fmask

        def fact_admits(at: np.ndarray) -> np.ndarray:
            # the graph leg asks about the rows it reaches only: the mask at those,
            # unless the whole one is built already (pgvector builds none)
            if fmask is not None:
                return fmask[at]
            return mask_at(at)

        def vector_ranking(c: Connection) -> list[tuple[str, float]]:
            return legs.vector_leg(mirror.v, fact_mask(), q(), n, c)

        def graph_ranking() -> list[tuple[str, float]]:
            return legs.graph_leg(mirror, fact_admits, query, min(n, GRAPH_CAP))

        # The mirror's fact legs, ranked while the database runs the lexical
        # statement (``meanwhile``), from the mirror as its last sync left it: kept
        # only if this search's sync then finds nothing new, so they ranked the
        # state they would have ranked after it. Only legs that need no SQL (the
        # connection is busy meanwhile): not with pgvector, nor once the mirror
        # keeps no float32 vectors, nor when retracted rows are wanted (read after
        # the sync).
        ranked_ahead: dict[str, list[tuple[str, float]]] = {}
        seen: tuple[Any, ...] | None = None

        def meanwhile() -> None:
            nonlocal seen
            if seen is not None:  # (a backend running several statements calls again)
                return
            seen = _mirror_state(mirror)
            try:
                if "fact_vector" in wanted and not r.pgvector and mirror.v.floats.a is not None:
                    ranked_ahead["fact_vector"] = vector_ranking(_NO_SQL)
                if "entity_graph" in wanted:
                    ranked_ahead["entity_graph"] = graph_ranking()
            except Exception:  # ranked again after the sync, each in its error boundary
                ranked_ahead.clear()

        def ranked(name: str, rank: Callable[[], list[tuple[str, float]]]) -> Callable[[], Any]:
            return lambda: ranked_ahead.pop(name) if name in ranked_ahead else rank()

        # The fact lexical leg needs nothing from the mirror: where the tenant held
        # facts at the mirror's last sync, it runs first, the sync's clock read sent
        # ahead of its statement, in its round trip (``prepared.Ahead``; PostgreSQL's
        # pipeline mode: one round trip, not two), the mirror's legs ranked meanwhile.
        # It is the leg the sync would have run next, on rows committed by then or
        # just after, as before.
        clock = mirror.clock_read()
        early = mirror.v.n > 0
        if early:
            fact_lexical([clock], meanwhile if State.RETRACTED not in tf.states else None)
        mirror.sync(conn, clock)  # once, before any other leg: they see the same state
        if seen is not None and _mirror_state(mirror) != seen:
            ranked_ahead.clear()  # the sync brought rows: rank them again
            fmask = None
        # A kind the tenant holds no row of (as of the sync) has no leg to run: an
        # episodes-only store spends nothing on the three fact legs. (On PostgreSQL a
        # row committed after the sync is then not found, as if the search had run
        # just before that commit.)
        if mirror.v.n == 0:
            wanted -= set(FACT_LEGS)
            rankings.pop("fact_lexical", None)  # (erased since the last sync)
            failed.pop("fact_lexical", None)
        if mirror.e.n == 0:
            wanted -= set(EPISODE_LEGS)
        if not early:
            fact_lexical()

        if State.RETRACTED in tf.states:
            retracted_ids = list(
                conn.execute(
                    select(versions.c.id).where(
                        reads.scope_visible(versions, scope), reads.retracted(kn)
                    )
                ).scalars()
            )

        if r.pgvector:
            run(
                "fact_vector",
                HitKind.FACT,
                lambda: pgv.fact_leg(
                    conn,
                    scope,
                    tf,
                    q(),
                    n,
                    subject_prefix=subject_prefix,
                    predicates=preds,
                    subject_key=skey,
                    rows_in_tenant=mirror.v.n,
                ),
            )
        else:
            run("fact_vector", HitKind.FACT, ranked("fact_vector", lambda: vector_ranking(conn)))
        run("entity_graph", HitKind.FACT, ranked("entity_graph", graph_ranking), sql=False)
        run(
            "episode_lexical",
            HitKind.EPISODE,
            lambda: legs.lexical_episodes(conn, scope, terms, tf, n),
        )

        emask: np.ndarray | None = None

        def episode_mask() -> np.ndarray:
            nonlocal emask
            if emask is None:
                emask = legs.episode_mask(mirror, scope, tf)
            return emask

        def episode_vec() -> list[tuple[str, float]]:
            if r.pgvector:
                return pgv.episode_leg(conn, scope, tf, q(), n, rows_in_tenant=mirror.e.n)
            return legs.vector_leg(mirror.e, episode_mask(), q(), n, conn)

        run("episode_vector", HitKind.EPISODE, episode_vec)
        window = time_window(query, asked_us)  # a boost and a leg: nothing is filtered by it
        short = short_past(window, asked_us)
        if short is not None and WINDOW_WEIGHT > 0 and not r.pgvector:
            inside = episode_mask() & _inside(mirror.e.start.view, short)
            run(
                "episode_window",
                HitKind.EPISODE,
                lambda: _window_leg(conn, scope, mirror.e, inside, terms, tf, q(), n),
            )
        if wanted and not rankings and failed:
            raise SearchFailed(f"every search leg failed: {failed}")
        by_key = fuse(rankings, leg_weights(r.embedder) | {"episode_window": WINDOW_WEIGHT})
        if "episode_context" in wanted and any(
            kind == HitKind.EPISODE for kind, _ in rankings.values()
        ):
            try:  # the conversational context: the neighbours of the episodes found
                legs.context_lift(
                    mirror, episode_mask(), by_key, lambda i: Fused(HitKind.EPISODE, i)
                )
            except Exception as exc:  # reported like a failed leg
                log.warning("search leg episode_context failed: %s", exc)
                failed["episode_context"] = f"{type(exc).__name__}: {exc}"
        fused = list(by_key.values())
        roles = legs.addressed_roles(query) if "episode_speaker" in wanted else frozenset()
        if "episode_speaker" in wanted and SPEAKER_BOOST > 0 and (terms or roles):
            ep_ids = [f.id for f in fused if f.kind == HitKind.EPISODE]
            try:  # the episodes spoken by someone the query names ("what did Gina say")
                with conn.begin_nested() if contain else nullcontext():
                    hook = r.fail.get("episode_speaker")
                    if hook is not None:
                        hook()
                    spoken = _spoken_by(conn, scope, mirror, ep_ids, terms, roles)
            except Exception as exc:  # reported like a failed leg
                log.warning("search leg episode_speaker failed: %s", exc)
                failed["episode_speaker"] = f"{type(exc).__name__}: {exc}"
                spoken = set()
            for f in fused:
                if f.kind == HitKind.EPISODE and f.id in spoken:
                    f.rrf *= 1.0 + SPEAKER_BOOST
                    f.legs["episode_speaker"] = {"weight": SPEAKER_BOOST}
        _score(engine.registry, scope.tenant, conn, mirror, fused, v, window)
        fused = [f for f in fused if f.score >= min_score]
        fused.sort(key=lambda f: (-f.score, f.tiebreak))
        take = k if r.reranker is None else max(3 * k, k + 20)
        if "conversation_spread" in wanted and spread.asks_for_several(query):
            keys = spread.conversations(mirror.e, fused)
            keep = spread.spread(fused, keys, free=SPREAD_FREE, decay=SPREAD_DECAY, take=take)
            # a hit held back below min_score is dropped; every hit not taken scores lower
            keep = [f for f in keep if f.score >= min_score]
        else:
            keep = fused[:take]
        if (
            "episode_lexical" in wanted
            and mirror.v.n > 0
            and any(f.kind == HitKind.FACT for f in keep)
            and asks_about_past(query)
        ):  # a question about the past: the messages that stated the replaced values
            keep = _bring_past(engine.registry, scope, conn, mirror, keep, tf, window, take)
        stale: dict[str, staleness.Staleness] = {}
        kept_eps = [f.id for f in keep if f.kind == HitKind.EPISODE]
        if kept_eps and mirror.v.n > 0:  # no fact in the tenant: every episode is unknown
            stale = staleness.of_episodes(conn, scope, kept_eps, v, kn)
            if any(s.status == staleness.STALE for s in stale.values()):

                def wanted_successor(f: Fact) -> bool:
                    return (
                        State.LIVE in tf.states
                        and subject_prefix is None
                        and (preds is None or f.predicate in preds)
                        and (skey is None or f.subject_key == skey)
                    )

                keep = _demote_stale(
                    engine.registry,
                    scope.tenant,
                    conn,
                    mirror,
                    fused,
                    keep,
                    stale,
                    wanted_successor,
                    v,
                    window,
                    take,
                )
        hits = _materialize(scope.tenant, conn, keep, v, retracted_ids, stale)
    if r.reranker is not None and hits:
        hits = list(r.reranker.rerank(query, hits))
    if stale:
        hits = staleness.order(
            hits,
            lambda h: tuple(f.version_id for f in h.superseded_by),
            lambda h: h.fact.version_id if h.fact is not None else None,
        )
    out = hits[:k]
    for h in out:
        h.explain["degraded"] = bool(failed)
    return SearchResult(out, failed)


def _bring_past(
    registry: Registry,
    scope: Scope,
    conn: Connection,
    mirror: TenantMirror,
    keep: list[Fused],
    tf: legs.TimeFilter,
    window: tuple[int, int] | None,
    take: int,
) -> list[Fused]:
    """For a question about the past: the episodes that stated the values the kept
    live facts replaced (``staleness.past_of_facts``), each placed just below its
    fact at the fact's score, when no leg kept it already ("what was my previous
    employer?" finds "I work at Vandelay." through the live "works at Kramerica")."""
    facts = [f for f in keep if f.kind == HitKind.FACT]
    past = staleness.past_of_facts(
        conn,
        scope,
        [f.id for f in facts],
        tf.valid_at,
        tf.known_at,
        legs.episode_filters(scope, tf),
    )
    if not past:
        return keep
    have = {f.id for f in keep if f.kind == HitKind.EPISODE}
    out: list[Fused] = []
    new: list[tuple[Fused, Fused]] = []
    for f in keep:
        out.append(f)
        for eid in past.get(f.id, ()) if f.kind == HitKind.FACT else ():
            if eid not in have:
                have.add(eid)
                g = Fused(HitKind.EPISODE, eid, legs={"past_of_fact": {"fact": f.id}})  # type: ignore[dict-item]
                new.append((g, f))
                out.append(g)
    if new:
        _score(registry, scope.tenant, conn, mirror, [g for g, _ in new], tf.valid_at, window)
        for g, f in new:
            g.score = f.score  # ranked just below the fact (a stale episode sorts after)
    return out[:take]


def _demote_stale(
    registry: Registry,
    tenant: str,
    conn: Connection,
    mirror: TenantMirror,
    fused: list[Fused],
    keep: list[Fused],
    stale: dict[str, staleness.Staleness],
    wanted: Callable[[Fact], bool],
    valid_at: int,
    window: tuple[int, int] | None,
    take: int,
) -> list[Fused]:
    """The kept hits with the live facts that replaced a stale episode's facts (those
    the search's filters admit) brought in, or lifted, to at least the episode's own
    score, and ranked before it on a tie: the present answer comes first, and the
    past is demoted only below it, never hidden ("where did I live before Berlin?"
    still finds the Paris message, labelled as past)."""
    cands = {(f.kind, f.id): f for f in fused}
    kept = {(f.kind, f.id) for f in keep}
    out = list(keep)
    lifts: list[tuple[Fused, float, str, list[str]]] = []
    new: list[Fused] = []
    for f in keep:
        s = stale.get(f.id) if f.kind == HitKind.EPISODE else None
        if s is None or s.status != staleness.STALE:
            continue
        lifts.append((f, f.score, f.id, [x.version_id for x in s.superseded_by if wanted(x)]))
    for _, _, _, vids in lifts:
        for vid in vids:
            key = (HitKind.FACT, vid)
            if key not in cands:
                cands[key] = Fused(HitKind.FACT, vid)
                new.append(cands[key])
    if new:  # recency and ties of the facts no leg found
        _score(registry, tenant, conn, mirror, new, valid_at, window)
    for _, top, _, vids in lifts:
        for vid in vids:
            key = (HitKind.FACT, vid)
            g = cands[key]
            if key not in kept:
                kept.add(key)
                out.append(g)
            if g.score < top:
                g.score = top
                g.legs["supersedes_stale_episode"] = {"lifted_to": top}
    stale_ids = {f.id for f, _, _, _ in lifts}
    out.sort(key=lambda f: (-f.score, f.kind == HitKind.EPISODE and f.id in stale_ids, f.tiebreak))
    return out[:take]


def _spoken_by(
    conn: Connection,
    scope: Scope,
    mirror: TenantMirror,
    ids: list[str],
    terms: Sequence[str],
    roles: frozenset[str],
) -> set[str]:
    """``legs.spoken_by`` from the mirror's speaker and role codes; only an episode
    committed after the mirror's sync (PostgreSQL) is read from SQL."""
    if not ids or not (terms or roles):
        return set()
    ps = mirror.e.pos.get_many(ids)
    held = np.flatnonzero(ps >= 0)
    spoken = {ids[j] for j in held[mirror.spoken_by(ps[held], terms, roles)].tolist()}
    if len(held) < len(ids):
        missing = [ids[j] for j in np.flatnonzero(ps < 0).tolist()]
        spoken |= legs.spoken_by(conn, scope, missing, terms, roles)
    return spoken


def _score(
    registry: Registry,
    tenant: str,
    conn: Connection,
    mirror: TenantMirror,
    fused: list[Fused],
    valid_at: int,
    window: tuple[int, int] | None = None,
) -> None:
    """Final scores from the mirror (recency needs valid_from and the predicate;
    ties need the content hash; the query's time window the validity or the
    occurrence), so only the top k rows are ever fetched."""
    # the registry's version as the mirror's sync read it from the clock row (its
    # own read was one more round trip per search)
    half = HalfLives(lambda: registry.load(conn, tenant, version=mirror.registry_us))
    missing: list[Fused] = []
    facts = [f for f in fused if f.kind == HitKind.FACT]
    eps = [f for f in fused if f.kind != HitKind.FACT]
    # the mirror's columns of all the candidates at once (one lookup, one gather each)
    m = mirror.v
    ps = m.pos.get_many([f.id for f in facts])
    held = ps[ps >= 0]
    cols = zip(
        m.hashes.take(held),
        m.pred.a[held].tolist(),
        m.start.a[held].tolist(),
        m.end.a[held].tolist(),
        strict=True,
    )
    names = mirror.preds.names
    for f, p in zip(facts, ps.tolist(), strict=True):
        if p < 0:
            missing.append(f)
            continue
        digest, pred, start, end = next(cols)
        # ties: content hash, then insertion order (the same in every ingest)
        finish(
            f,
            recency(valid_at - start, half(names[pred])),
            f"{digest}:{p:012d}",
            in_window(start, end, window, False),
        )
    m = mirror.e
    ps = m.pos.get_many([f.id for f in eps])
    held = ps[ps >= 0]
    ecols = zip(m.hashes.take(held), m.start.a[held].tolist(), strict=True)
    for f, p in zip(eps, ps.tolist(), strict=True):
        if p < 0:
            missing.append(f)
            continue
        digest, at = next(ecols)
        finish(f, 1.0, f"{digest}:{at:020d}:{p:012d}", in_window(at, at, window, True))
    for f in missing:  # committed after the mirror's sync (PostgreSQL, read committed)
        row: Any
        if f.kind == HitKind.FACT:
            row = conn.execute(
                select(
                    versions.c.valid_from,
                    versions.c.valid_to,
                    versions.c.predicate,
                    versions.c.content_hash,
                ).where(versions.c.tenant == tenant, versions.c.id == f.id)
            ).one()
            end = MAX_US if row.valid_to is None else row.valid_to
            finish(
                f,
                recency(
                    valid_at - row.valid_from,
                    half(row.predicate),
                ),
                row.content_hash,
                in_window(row.valid_from, end, window, False),
            )
        else:
            row = conn.execute(
                select(episodes_table.c.content_hash, episodes_table.c.occurred_at).where(
                    episodes_table.c.tenant == tenant, episodes_table.c.id == f.id
                )
            ).one()
            finish(
                f,
                1.0,
                f"{row.content_hash}:{row.occurred_at:020d}:{f.id}",
                in_window(row.occurred_at, row.occurred_at, window, True),
            )


# The rows of the hits kept (compiled once per id-list length). A version's row
# comes once per source episode (or once, with NULL, when it has none),
# the sources in the order ``reads.sources_of`` gives them: the rows and their
# sources in one statement, where two or three (a sources read per 8 facts) were
# one round trip each.
_SOURCE = "_source_episode_id"
_VERSIONS_IN = PreparedIn(
    lambda ids: (
        select(versions, sources_table.c.episode_id.label(_SOURCE))
        .select_from(
            versions.outerjoin(
                sources_table,
                and_(
                    sources_table.c.tenant == versions.c.tenant,
                    sources_table.c.fact_id == versions.c.fact_id,
                ),
            )
        )
        .where(versions.c.tenant == bindparam("t"), versions.c.id.in_(ids))
        .order_by(versions.c.id, sources_table.c.recorded_at, sources_table.c.episode_id)
    ),
    at_once=True,  # every search's: prepared on the server from its first run
)
_EPISODES_IN = PreparedIn(
    lambda ids: select(episodes_table).where(
        episodes_table.c.tenant == bindparam("t"), episodes_table.c.id.in_(ids)
    )
)


def _materialize(
    t: str,
    conn: Connection,
    fused: list[Fused],
    valid_at: int,
    retracted_ids: Sequence[str],
    stale: dict[str, staleness.Staleness] | None = None,
) -> list[Hit]:
    """Fetch the rows of the chosen candidates, in the candidates' order."""
    fact_ids = [f.id for f in fused if f.kind == HitKind.FACT]
    ep_ids = [f.id for f in fused if f.kind == HitKind.EPISODE]
    made: dict[tuple[str, str], Fact | Episode] = {}
    retracted = set(retracted_ids)
    if fact_ids:
        cols = _VERSIONS_IN.columns
        found: dict[str, tuple[dict[str, Any], list[str]]] = {}
        for r in _VERSIONS_IN.rows(conn, {"t": t}, fact_ids):
            row = dict(zip(cols, r, strict=True))
            have = found.get(row["id"])
            if have is None:
                have = found[row["id"]] = (row, [])
            if row[_SOURCE] is not None:
                have[1].append(row[_SOURCE])
        for vid, (row, src) in found.items():
            made[(HitKind.FACT, vid)] = reads.to_fact(
                row, valid_at, src, retracted_row=vid in retracted
            )
    if ep_ids:
        cols = _EPISODES_IN.columns
        rows = [dict(zip(cols, r, strict=True)) for r in _EPISODES_IN.rows(conn, {"t": t}, ep_ids)]
        for row in rows:
            made[(HitKind.EPISODE, row["id"])] = reads.to_episode(row)
    hits = []
    for f in fused:
        item = made.get((f.kind, f.id))
        if item is None:  # erased between the legs and now
            continue
        explain = {**f.explain(), "tiebreak": f.tiebreak}
        if isinstance(item, Fact):
            hits.append(Hit(item, None, f.score, explain))
            continue
        st = (stale or {}).get(item.id) or staleness.NO_FACTS
        explain["staleness"] = st.explain
        hits.append(Hit(None, item, f.score, explain, st.status, st.superseded_by, st.past_label))
    return hits
