"""The retrieval legs. Each applies the temporal predicate and the scope filter
INSIDE the leg (in SQL or in the mirror's mask) and returns its own ranking:
a list of (item id, score), best first, at most ``n`` long."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import Connection, bindparam, select

from .. import backends, reads
from ..backends.base import Run
from ..identity import fold
from ..model import State
from ..prepared import Ahead, ByShape, ShapedTerms
from ..schema import episodes, versions
from ..scope import Scope
from . import querytime
from .cache import MAX, Mirror, TenantMirror, speaker_of
from .fusion import RRF_K, HitKind
from .tuning import DEFAULT

Ranking = list[tuple[str, float]]

# The stopword list and query terms live in querytime; re-exported for callers.
STOPWORDS = querytime.STOPWORDS
query_terms = querytime.query_terms


@dataclass(frozen=True)
class TimeFilter:
    valid_at: int
    known_at: int | None
    states: frozenset[State]


# -- lexical legs (SQL) ---------------------------------------------------------------


# The filters of the legs' SQL are built once per shape (which filters apply), over
# named bind parameters (``ShapedTerms``): a search binds its values, and the
# backend compiles each lexical statement once per shape (``_LEXICAL``).
def _padded(count: int) -> int:
    """The length a list filter is bound at: the next power of two (0 stays 0), the
    list padded with its last value (an ``IN`` list holding a value twice selects
    the same rows), so a shape holds one of a few lengths."""
    return 0 if count == 0 else 1 << (count - 1).bit_length()


@functools.lru_cache(maxsize=1024)
def _fact_terms(
    levels: tuple[bool, bool, bool],
    states: frozenset[State],
    as_of: bool,
    prefix: bool | None,
    subject: bool,
    predicates: int | None,
) -> tuple[Any, ...]:
    c = versions.c
    known_at: Any = bindparam("known_at") if as_of else None
    terms: list[Any] = [
        reads.scope_bound(versions, levels),
        reads.temporal(states, bindparam("valid_at"), known_at),
    ]
    if prefix is not None:
        terms.append(reads.prefix_bound(c.subject_key) if prefix else c.subject_key.is_not(None))
    if subject:
        terms.append(reads.subject_bound())
    if predicates is not None:
        # an empty list binds one NULL (``IN (NULL)`` holds for no row): a literal
        # false would fold the whole WHERE clause into ``false``
        binds = range(max(predicates, 1))
        terms.append(
            c.predicate.in_([bindparam(f"predicate_{i}", type_=c.predicate.type) for i in binds])
        )
    return tuple(terms)


def fact_leg_filters(
    scope: Scope,
    tf: TimeFilter,
    *,
    subject_prefix: str | None = None,
    predicates: Sequence[str] | None = None,
    subject_key: str | None = None,
) -> ShapedTerms:
    """The scope, temporal and caller filters of a fact leg, as SQL of their shape
    and this search's values."""
    levels, params = reads.scope_params(scope)
    params["valid_at"] = tf.valid_at
    if tf.known_at is not None:
        params["known_at"] = tf.known_at
    if subject_prefix:
        params.update(reads.prefix_params(subject_prefix))
    if subject_key is not None:
        params.update(reads.subject_params(subject_key))
    count = None
    if predicates is not None:
        wanted = list(predicates)
        count = _padded(len(wanted))
        if wanted:
            params.update((f"predicate_{i}", wanted[min(i, len(wanted) - 1)]) for i in range(count))
        else:
            params["predicate_0"] = None
    shape = (
        levels,
        tf.states,
        tf.known_at is not None,
        None if subject_prefix is None else bool(subject_prefix),
        subject_key is not None,
        count,
    )
    return ShapedTerms(("fact", *shape), _fact_terms(*shape), params)


def fact_filters(
    scope: Scope,
    tf: TimeFilter,
    *,
    subject_prefix: str | None = None,
    predicates: Sequence[str] | None = None,
    subject_key: str | None = None,
) -> list[Any]:
    """The scope, temporal and caller filters of a fact leg, as SQL with the values
    in it (``fact_leg_filters``, bound)."""
    return fact_leg_filters(
        scope, tf, subject_prefix=subject_prefix, predicates=predicates, subject_key=subject_key
    ).bound()


@functools.lru_cache(maxsize=64)
def _episode_terms(levels: tuple[bool, bool, bool], as_of: bool) -> tuple[Any, ...]:
    terms: list[Any] = [
        reads.scope_bound(episodes, levels),
        episodes.c.occurred_at <= bindparam("valid_at"),
    ]
    if as_of:
        terms.append(episodes.c.recorded_at <= bindparam("known_at"))
    return tuple(terms)


def episode_leg_filters(scope: Scope, tf: TimeFilter) -> ShapedTerms:
    """Episodes visible in the scope that had occurred, and were recorded, by then."""
    levels, params = reads.scope_params(scope)
    params["valid_at"] = tf.valid_at
    if tf.known_at is not None:
        params["known_at"] = tf.known_at
    shape = (levels, tf.known_at is not None)
    return ShapedTerms(("episode", *shape), _episode_terms(*shape), params)


def episode_filters(scope: Scope, tf: TimeFilter) -> list[Any]:
    """``episode_leg_filters``, with the values in the SQL."""
    return episode_leg_filters(scope, tf).bound()


# the lexical legs' statements, compiled once per shape (``Backend.lexical``)
_LEXICAL = ByShape()


def _lexical(
    conn: Connection,
    tbl: Any,
    terms: Sequence[str],
    filters: ShapedTerms,
    n: int,
    ahead: Sequence[Ahead] = (),
    meanwhile: Callable[[], None] | None = None,
) -> Ranking:
    """The database's text-index ranking (``Backend.lexical``: FTS5 bm25 on SQLite,
    tsvector ``ts_rank_cd`` on PostgreSQL); ties by content hash. ``ahead``: reads
    sent with the leg's statement, in its round trip (left unread when it runs none);
    ``meanwhile``: client work done while the database runs it (not run when it
    runs none; possibly called again when it runs several)."""
    if not terms:
        return []
    # ties: content hash, (time,) then id, which sorts in creation order
    tiebreak = [
        tbl.c.content_hash,
        *([tbl.c.occurred_at] if "occurred_at" in tbl.c else []),
        tbl.c.id,
    ]
    run: Run = _LEXICAL.rows
    if ahead or meanwhile is not None:
        run = functools.partial(_LEXICAL.rows, ahead=ahead, meanwhile=meanwhile)
    return backends.of(conn).lexical(conn, tbl, terms, filters, n, tiebreak, run)


def lexical_facts(
    conn: Connection,
    scope: Scope,
    terms: Sequence[str],
    tf: TimeFilter,
    n: int,
    *,
    subject_prefix: str | None = None,
    predicates: Sequence[str] | None = None,
    subject_key: str | None = None,
    ahead: Sequence[Ahead] = (),
    meanwhile: Callable[[], None] | None = None,
) -> Ranking:
    filters = fact_leg_filters(
        scope, tf, subject_prefix=subject_prefix, predicates=predicates, subject_key=subject_key
    )
    return _lexical(conn, versions, terms, filters, n, ahead, meanwhile)


def lexical_episodes(
    conn: Connection, scope: Scope, terms: Sequence[str], tf: TimeFilter, n: int
) -> Ranking:
    return _lexical(conn, episodes, terms, episode_leg_filters(scope, tf), n)


# A chat's roles, as the person asking names them: "what did I say about Rome" means
# the user's turns, "what did you recommend" the assistant's. A query that uses both
# (or neither) names no role.
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself"})


def addressed_roles(query: str) -> frozenset[str]:
    """The role the query's first or second person names: ``{"user"}``,
    ``{"assistant"}`` or, when it uses both or neither, none."""
    words = set(querytime.words(query))
    me, you = not words.isdisjoint(FIRST_PERSON), not words.isdisjoint(SECOND_PERSON)
    if me == you:
        return frozenset()
    return frozenset({"user"} if me else {"assistant"})


def spoken_by(
    conn: Connection,
    scope: Scope,
    ids: Sequence[str],
    terms: Sequence[str],
    roles: frozenset[str] = frozenset(),
) -> set[str]:
    """Of the episodes ``ids``, those spoken by someone the query names: a word of
    the episode's speaker is one of the query ``terms`` (casefolded words), or its
    role is one of ``roles`` (``addressed_roles``). The speaker is the episode's
    ``metadata["speaker"]`` (what ``add`` records for a named message) or else its
    role."""
    if not ids or not (terms or roles):
        return set()
    wanted = set(terms)
    out = set()
    rows = conn.execute(
        select(episodes.c.id, episodes.c.role, episodes.c.metadata).where(
            episodes.c.tenant == scope.tenant, episodes.c.id.in_(list(ids))
        )
    )
    for eid, role, meta in rows:
        if role in roles:
            out.add(eid)
            continue
        speaker = speaker_of(role, meta)
        if speaker and not wanted.isdisjoint(querytime.words(speaker)):
            out.add(eid)
    return out


# -- masks over the mirror ------------------------------------------------------------


def _scope_mask(
    mirror: TenantMirror, m: Mirror, scope: Scope, at: np.ndarray | None = None
) -> np.ndarray:
    mask = np.ones(m.n if at is None else len(at), dtype=bool)
    for arr, value in ((m.user, scope.user), (m.agent, scope.agent), (m.session, scope.session)):
        col = arr.view if at is None else arr.a[at]
        if value:
            mask &= (col == 0) | (col == mirror.scopes.get(value))
        else:
            mask &= col == 0
    return mask


def fact_mask(
    mirror: TenantMirror,
    scope: Scope,
    tf: TimeFilter,
    *,
    retracted_ids: Sequence[str] = (),
    subject_prefix: str | None = None,
    predicates: Sequence[str] | None = None,
    subject_key: str | None = None,
    at: np.ndarray | None = None,
) -> np.ndarray:
    """Which versions the leg's filters admit: every row of the mirror, or (``at``)
    only the rows at those positions, in their order (the graph leg asks about a
    few rows; the whole mask of a 1M-row mirror is a dozen passes over 1M values)."""
    m = mirror.v

    def col(g: Any) -> np.ndarray:
        return g.view if at is None else g.a[at]

    rec, sup, vf, vt = col(m.rec), col(m.sup), col(m.start), col(m.end)
    known = sup == MAX if tf.known_at is None else (rec <= tf.known_at) & (sup > tf.known_at)
    v = tf.valid_at
    temporal = np.zeros(len(rec), dtype=bool)
    if State.LIVE in tf.states:
        temporal |= (vf <= v) & (vt > v)
    if State.ENDED in tf.states:
        temporal |= vt <= v
    if State.SCHEDULED in tf.states:
        temporal |= vf > v
    mask = known & temporal
    for rid in retracted_ids:
        p = m.pos.get(rid)
        if p is not None:
            if at is None:
                mask[p] = True
            else:
                mask[at == p] = True
    mask &= _scope_mask(mirror, m, scope, at)
    if predicates is not None:
        codes = [mirror.preds.index[p] for p in predicates if p in mirror.preds.index]
        mask &= np.isin(col(m.pred), codes)
    if subject_key is not None:
        mask &= col(m.subj) == mirror.entities.get(subject_key)
    if subject_prefix:
        wanted = np.zeros(len(mirror.entities.names), dtype=bool)
        wanted[mirror.entities.with_prefix(subject_prefix)] = True
        mask &= wanted[col(m.subj)]
    return mask


def episode_mask(mirror: TenantMirror, scope: Scope, tf: TimeFilter) -> np.ndarray:
    m = mirror.e
    mask = m.start.view <= tf.valid_at
    if tf.known_at is not None:
        mask &= m.rec.view <= tf.known_at
    return mask & _scope_mask(mirror, m, scope)


# -- vector and graph legs (mirror) -----------------------------------------------------


# Candidates re-scored exactly per vector leg: the top RESCORE (or 2 n) by the
# int8 approximation, then every row whose error bound could still reach the
# n-th best exact score.
RESCORE = 32


def _top(a: np.ndarray, take: int) -> np.ndarray:
    """Positions of the ``take`` largest values of ``a`` (any order among them). On
    a large array a threshold from an evenly spaced sample first cuts it to the few
    rows at or above it (all of the top when at least ``take`` are), so the
    partition runs over those, not over every row."""
    n = len(a)
    if take >= n:
        return np.arange(n)
    if n > 65_536 and n > 64 * take:
        sample = a[:: n // 16_384]
        m = min(len(sample), max(8, 4 * take * len(sample) // n))
        thr = np.partition(sample, len(sample) - m)[len(sample) - m]
        sel = np.flatnonzero(a >= thr)
        if take <= len(sel) < n // 4:
            return sel[np.argpartition(-a[sel], take - 1)[:take]]
    return np.argpartition(-a, take - 1)[:take]


def vector_leg(
    m: Mirror, mask: np.ndarray, q: np.ndarray, n: int, conn: Connection | None = None
) -> Ranking:
    """Cosine search over the rows the mask admits: a scan of the int8 codes, then
    the candidates re-scored from the float32 vectors in ``cm_vectors`` (``conn``).
    A row left out can only be one whose approximate score plus its error bound is
    below the n-th best exact score, so the ranking (ties by content hash, then
    insertion order) is the one an exact float32 scan gives. Without ``conn`` the
    approximate scores rank."""
    if m.n == 0 or n <= 0:
        return []
    ok = mask & m.has_vec.view
    approx = m.scores(q)  # a new array: the rows the mask leaves out set to -inf in it
    approx[np.flatnonzero(~ok)] = np.float32(-np.inf)  # (np.where: 3x slower on a ragged mask)
    bound = m.vecs.bound(q)
    take = max(2 * n, RESCORE)
    if np.count_nonzero(ok) * 4 < m.n:  # a selective mask: partition the admitted only
        idx = np.flatnonzero(ok)
        cand = idx[_top(approx[idx], min(len(idx), take))]
    else:
        cand = _top(approx, min(m.n, take))
    cand = cand[approx[cand] + bound[cand] > 0]  # a row that cannot score > 0 is out
    if conn is None:
        score = {int(j): float(approx[j]) for j in cand}
    else:
        cl = cand.tolist()
        score = dict(zip(cl, m.exact(conn, cl, q).tolist(), strict=True))
        best = sorted((s for s in score.values() if s > 0), reverse=True)
        # rows outside the candidates whose bound reaches the n-th best exact score
        # (ties included; with fewer than n positive scores, any that may be positive)
        upper = approx + bound
        far = np.flatnonzero(upper >= best[n - 1] if len(best) >= n else upper > 0)
        # a row whose codes miss every query dimension scores exactly 0: never a hit
        zero = far[approx[far] == 0]
        if len(zero):
            far = np.union1d(far[approx[far] != 0], zero[m.vecs.touched(q, zero)])
        rest = [j for j in far.tolist() if j not in score]
        if rest:
            score.update(zip(rest, m.exact(conn, rest, q).tolist(), strict=True))
    # ties: content hash, then position (insertion order): no dependence on scan order
    pos = [j for j, s in score.items() if s > 0]
    digest = dict(zip(pos, m.hashes.take(np.asarray(pos, dtype=np.int64)), strict=True))
    top = sorted(pos, key=lambda j: (-score[j], digest[j], j))
    return [(m.ids[j], score[j]) for j in top[:n]]


def _ngrams(words: list[str], max_len: int = 4) -> list[str]:
    out = []
    for size in range(max_len, 0, -1):
        for i in range(len(words) - size + 1):
            out.append(" ".join(words[i : i + size]))
    return out


def entities_in(mirror: TenantMirror, query: str) -> list[int]:
    """Codes of the known entities (subject or object keys) the query names."""
    words = fold(query).split(" ")
    codes = []
    for gram in _ngrams(words):
        if gram in STOPWORDS:
            continue
        c = mirror.entities.index.get(gram)
        if c:
            codes.append(c)
    return list(dict.fromkeys(codes))


Admits = Callable[[np.ndarray], np.ndarray]  # positions -> whether the filters admit each


def _admitted(admits: Admits, positions: list[int]) -> list[int]:
    """``positions`` the filters admit, in their order (one call for all of them)."""
    if not positions:
        return []
    ok = admits(np.asarray(positions, dtype=np.int64)).tolist()
    return [p for p, y in zip(positions, ok, strict=True) if y]


def graph_leg(mirror: TenantMirror, mask: np.ndarray | Admits, query: str, n: int) -> Ranking:
    """Facts one hop (score 1) or two hops (score 0.5) from entities named in the
    query. ``mask``: the leg's filters, as a mask of every row or as a function
    asked about the rows reached only."""
    named = entities_in(mirror, query)
    if not named:
        return []
    admits: Admits = mask if callable(mask) else mask.__getitem__
    m = mirror.v
    subj, obj = m.subj.view, m.obj.view
    hop1 = sorted(
        set(_admitted(admits, [p for c in named for p in m.by_entity.get(c, ())])),
        key=lambda p: m.hashes[p],
    )
    ranked: Ranking = [(m.ids[p], 1.0) for p in hop1[:n]]
    if len(ranked) >= n:
        return ranked
    seen = set(hop1)
    near = {int(c) for p in hop1 for c in (subj[p], obj[p])} - set(named) - {0}
    reached = [p for c in near for p in m.by_entity.get(c, ()) if p not in seen]
    hop2 = sorted(set(_admitted(admits, reached)), key=lambda p: m.hashes[p])
    ranked += [(m.ids[p], 0.5) for p in hop2[: n - len(ranked)]]
    return ranked


# -- conversational context (query time) ---------------------------------------------

# A question's answer is often the turn after the one that repeats the question's
# words ("Got any tips for getting started?" -> the tips), or the one before.
# After fusion, each episode the direct legs (``SHARE_FROM``) voted for offers its
# neighbours, the episodes recorded just after and just before it in the same
# scope, ``NEXT_SHARE``/``PREV_SHARE`` of those votes; a neighbour whose own
# direct votes are smaller is lifted to the largest offer (leg ``episode_context``
# in explain: the lift, the episode it came ``from`` and that one's best rank). The mirror holds episodes in recording order (recorded_at, then id,
# which sorts in creation order): within one ``add_episodes`` call that is the
# call's order, and episodes added one call each follow the order they were
# added in. Done at query time, not by copying a neighbour's text into the
# turn's index, so erasing a turn leaves none of its words behind; and from the
# mirror, so it costs no SQL.
NEXT_SHARE = DEFAULT.next_share
PREV_SHARE = DEFAULT.prev_share
# An episode whose role is "assistant" offers ASSISTANT_SHARE (no more than the
# share of its direction) instead: a user's turns carry what the user said, and an
# assistant's long reply, found for its own words, would otherwise lift the user
# turns around it and crowd other conversations out (benchmarks/HISTORY.md, #28).
ASSISTANT_SHARE = DEFAULT.assistant_share
ASSISTANT_ROLE = "assistant"
SHARE_FROM = frozenset({"episode_lexical", "episode_vector"})  # the votes that are offered
NEIGHBOUR_SCAN = DEFAULT.neighbour_scan  # positions looked at: next/previous of the scope


def neighbours(m: Mirror, mask: np.ndarray, ps: np.ndarray, step: int) -> np.ndarray:
    """For each position in ``ps``, the nearest position after (``step`` 1) or
    before (-1) it holding an episode of its scope, within ``NEIGHBOUR_SCAN``
    positions; -1 when there is none or ``mask`` (scope and time filter) does not
    admit it. All positions at once, one numpy pass per offset."""
    out = np.full(len(ps), -1, dtype=np.int64)
    pending = np.ones(len(ps), dtype=bool)
    user, agent, session = m.user.a, m.agent.a, m.session.a
    for off in range(1, NEIGHBOUR_SCAN + 1):
        q = ps + step * off
        pending &= (q >= 0) & (q < m.n)  # past either end: None
        if not pending.any():
            break
        q = np.clip(q, 0, max(m.n - 1, 0))
        same = pending & (user[q] == user[ps]) & (agent[q] == agent[ps])
        same &= session[q] == session[ps]
        out[same] = np.where(mask[q[same]], q[same], -1)
        pending &= ~same
    return out


def _direct(f: Any) -> float:
    """The votes of ``f`` from the direct legs (``SHARE_FROM``)."""
    total = 0  # as sum() adds them: from 0, in the legs' order
    for g, v in f.legs.items():
        if g in SHARE_FROM:
            total += v["weight"] / (RRF_K + v["rank"])
    return float(total)


def context_lift(
    mirror: TenantMirror, mask: np.ndarray, fused: dict[Any, Any], make: Callable[[str], Any]
) -> None:
    """Lift, in ``fused`` ((kind, id) -> Fused), the neighbours of the episodes the
    direct legs voted for (see above); ``make(id)`` creates the Fused of an episode
    no leg found. Offers are made from the votes before any lift is added, so the
    result does not depend on the order of ``fused``."""
    m = mirror.e
    eps = [f for f in fused.values() if f.kind == HitKind.EPISODE]
    direct = {f.id: _direct(f) for f in eps}  # the lifts below add no direct votes
    base = sorted(
        (p, d, min(int(v["rank"]) for g, v in f.legs.items() if g in SHARE_FROM))
        for f, p in zip(eps, m.pos.get_many([f.id for f in eps]).tolist(), strict=True)
        if p >= 0 and (d := direct[f.id]) > 0
    )
    at = np.array([p for p, _, _ in base], dtype=np.int64)
    near = {
        step: neighbours(m, mask, at, step).tolist() if share > 0 else []
        for step, share in ((1, NEXT_SHARE), (-1, PREV_SHARE))
    }
    # neighbour -> (largest offer, the position it came from, that one's best direct rank)
    offered: dict[int, tuple[float, int, int]] = {}
    assistant = mirror.speakers.get(ASSISTANT_ROLE)  # -1: no assistant turn in the store
    by_assistant = (m.role.a[at] == assistant).tolist() if assistant > 0 else [False] * len(at)
    for j, (p, d, rank) in enumerate(base):
        for step, share in ((1, NEXT_SHARE), (-1, PREV_SHARE)):
            if by_assistant[j]:
                share = min(share, ASSISTANT_SHARE)
            if share <= 0:
                continue
            q = near[step][j]
            if q >= 0 and share * d > offered.get(q, (0.0, 0, 0))[0]:
                offered[q] = (share * d, p, rank)
    lifts = sorted(offered.items())
    names = m.ids.take(np.array([q for q, _ in lifts], dtype=np.int64))
    for (_, (lift, p, rank)), name in zip(lifts, names, strict=True):
        key = (HitKind.EPISODE, name)
        g = fused.get(key)
        if g is None:
            g = fused[key] = make(name)
        extra = lift - (direct[name] if name in direct else _direct(g))
        if extra > 0:
            g.rrf += extra
            g.legs["episode_context"] = {"score": extra, "from": m.ids[p], "rank": rank}
