"""The retrieval legs. Each applies the temporal predicate and the scope filter
INSIDE the leg (in SQL or in the mirror's mask) and returns its own ranking:
a list of (item id, score), best first, at most ``n`` long."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import (
    Connection,
    bindparam,
    column,
    func,
    literal_column,
    select,
    table,
    tuple_,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.selectable import Join

from .. import reads
from ..identity import fold
from ..model import State
from ..schema import episodes, versions
from ..scope import Scope
from . import querytime
from .cache import MAX, Mirror, TenantMirror

Ranking = list[tuple[str, float]]

# The stopword list and query terms live in querytime; re-exported for callers.
STOPWORDS = querytime.STOPWORDS
query_terms = querytime.query_terms

# PostgreSQL ranks at most this many GIN matches (the most recently recorded):
# ts_rank_cd reads every ranked row's tsvector, so ranking every row that shares
# one common word with the query cost ~0.6 s at 100k facts.
PG_RANK_CANDIDATES = 2000
# SQLite: FTS5 ranks every match itself (cheap, in C); only its best this many
# are joined to the table and filtered (see _lexical_sqlite).
SQLITE_CANDIDATES = 1000
COMMON_MATCHES = 5000  # a query term in more rows than this is "common" (_focused_match)


@dataclass(frozen=True)
class TimeFilter:
    valid_at: int
    known_at: int | None
    states: frozenset[State]


# -- lexical legs (SQL) ---------------------------------------------------------------


def _fts_match(terms: Sequence[str]) -> str:
    # Every term double-quoted (quotes doubled): FTS5 sees strings, never operators.
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def fact_filters(
    scope: Scope,
    tf: TimeFilter,
    *,
    subject_prefix: str | None = None,
    predicates: Sequence[str] | None = None,
    subject_key: str | None = None,
) -> list[Any]:
    """The scope, temporal and caller filters of a fact leg, as SQL."""
    filters: list[Any] = [
        reads.scope_visible(versions, scope),
        reads.temporal(tf.states, tf.valid_at, tf.known_at),
    ]
    if subject_prefix is not None:
        filters.append(reads.prefix_match(versions.c.subject_key, subject_prefix))
    if subject_key is not None:
        filters.append(reads.subject_is(subject_key))
    if predicates is not None:
        filters.append(versions.c.predicate.in_(list(predicates)))
    return filters


def episode_filters(scope: Scope, tf: TimeFilter) -> list[Any]:
    """Episodes visible in the scope that had occurred, and were recorded, by then."""
    filters: list[Any] = [
        reads.scope_visible(episodes, scope),
        episodes.c.occurred_at <= tf.valid_at,
    ]
    if tf.known_at is not None:
        filters.append(episodes.c.recorded_at <= tf.known_at)
    return filters


def _lexical(
    conn: Connection, tbl: Any, terms: Sequence[str], filters: list[Any], n: int
) -> Ranking:
    """FTS5 bm25 on SQLite, tsvector rank on PostgreSQL; ties by content hash."""
    if not terms:
        return []
    # ties: content hash, (time,) then id, which sorts in creation order
    tiebreak = [
        tbl.c.content_hash,
        *([tbl.c.occurred_at] if "occurred_at" in tbl.c else []),
        tbl.c.id,
    ]
    if conn.dialect.name == "sqlite":
        return _lexical_sqlite(conn, tbl, terms, filters, n, tiebreak)
    return _lexical_pg(conn, tbl, terms, filters, n, tiebreak)


class _FtsFirstJoin(Join):
    """``fts CROSS JOIN table ON ...`` on SQLite: the left table is scanned first
    on every SQLite version (the planner may not reorder a CROSS JOIN). SQLite
    >= 3.51 otherwise walked the table's time index and probed FTS5 once per
    row: seconds per search on a 10k-turn store."""

    inherit_cache = True


@compiles(_FtsFirstJoin, "sqlite")
def _compile_fts_first(element: _FtsFirstJoin, compiler: Any, **kw: Any) -> str:
    sql = str(compiler.visit_join(element, **kw))
    return sql.replace(" JOIN ", " CROSS JOIN ", 1)


def lexical_select_sqlite(
    tbl: Any,
    terms: Sequence[str],
    filters: list[Any],
    n: int,
    tiebreak: list[Any],
    candidates: int | None = None,
    match_expr: str | None = None,
) -> Any:
    """The SQLite lexical query (FTS-first, ``_FtsFirstJoin``). With ``candidates``,
    only the FTS index's best ``candidates`` matches (bm25, computed inside FTS5)
    are joined to the table and filtered: a common word matching a fifth of a
    100k store no longer costs a table lookup per match."""
    name = tbl.name
    fts = table(f"{name}_fts", column("rowid"))
    bm25: Any = literal_column(f"bm25({name}_fts)")
    expr = match_expr if match_expr is not None else _fts_match(terms)
    match = literal_column(f"{name}_fts").op("MATCH")(bindparam("m", expr))
    if candidates is None:
        src: Any = fts
        rid, rank = fts.c.rowid, bm25
        where = [match, *filters]
    else:
        src = (
            select(fts.c.rowid.label("rid"), bm25.label("r"))
            .where(match)
            .order_by(bm25, fts.c.rowid)
            .limit(candidates)
            .subquery("fts_top")
        )
        rid, rank = src.c.rid, src.c.r
        where = list(filters)
    return (
        select(tbl.c.id, rank.label("r"))
        .select_from(_FtsFirstJoin(src, tbl, rid == literal_column(f"{name}.rowid")))
        .where(*where)
        .order_by(rank, *tiebreak)
        .limit(n)
    )


def lexical_sql_sqlite(
    conn: Connection,
    tbl: Any,
    terms: Sequence[str],
    filters: list[Any],
    n: int,
    tiebreak: list[Any],
    candidates: int | None = None,
) -> tuple[str, tuple[Any, ...]]:
    """The SQL text and parameters of the SQLite lexical query (for plans and tests)."""
    q = lexical_select_sqlite(tbl, terms, filters, n, tiebreak, candidates)
    compiled = q.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.construct_params()
    return str(compiled), tuple(params[k] for k in compiled.positiontup or ())


def _lexical_sqlite(
    conn: Connection,
    tbl: Any,
    terms: Sequence[str],
    filters: list[Any],
    n: int,
    tiebreak: list[Any],
) -> Ranking:
    # The best SQLITE_CANDIDATES matches first; exact whenever they hold n rows that
    # pass the filters (every match outside them ranks lower). Otherwise (a scope or
    # time filter rejects most of them) the query runs over every match.
    # A term in more than COMMON_MATCHES rows (at 100k facts, "live" stems to the
    # "lives in" of every fifth fact) is left out while a rarer query term exists:
    # FTS5 then scores hundreds of rows, not tens of thousands. When that finds
    # fewer than n rows, every term is searched again (below).
    cap = max(SQLITE_CANDIDATES, 10 * n)
    focused = _focused_match(conn, tbl.name, terms)
    rows = conn.execute(lexical_select_sqlite(tbl, terms, filters, n, tiebreak, cap, focused)).all()
    if len(rows) < n:
        rows = conn.execute(lexical_select_sqlite(tbl, terms, filters, n, tiebreak)).all()
    return [(i, -float(r)) for i, r in rows]


def _focused_match(conn: Connection, name: str, terms: Sequence[str]) -> str | None:
    """The rarer terms alone when some terms are common and some are not (None
    otherwise): a common term then counts like a stopword. Its bm25 weight (idf)
    is small by definition, and scoring its posting list cost ~20 ms at 100k."""
    if len(terms) < 2:
        return None
    probe = (
        f"SELECT count(*) FROM (SELECT 1 FROM {name}_fts WHERE {name}_fts MATCH ? "
        f"LIMIT {COMMON_MATCHES + 1})"
    )
    common = [
        t
        for t in terms
        if (conn.exec_driver_sql(probe, (_fts_match([t]),)).scalar() or 0) > COMMON_MATCHES
    ]
    rare = [t for t in terms if t not in common]
    if not common or not rare:
        return None
    return _fts_match(rare)


def _lexical_pg(
    conn: Connection,
    tbl: Any,
    terms: Sequence[str],
    filters: list[Any],
    n: int,
    tiebreak: list[Any],
) -> Ranking:
    """GIN match first, bounded (``PG_RANK_CANDIDATES``, most recently recorded),
    then ``ts_rank_cd`` over that set only."""
    name = tbl.name
    tsq = func.to_tsquery("english", bindparam("m", " | ".join(_pg_lexeme(t) for t in terms)))
    tsv: Any = literal_column(f"{name}.tsv")
    cand = (
        select(tbl.c.id, tsv.label("tsv"), *[c.label(f"t{i}") for i, c in enumerate(tiebreak)])
        .where(tsv.op("@@")(tsq), *filters)
        .order_by(tbl.c.recorded_at.desc(), tbl.c.id)
        .limit(PG_RANK_CANDIDATES)
        .subquery("cand")
    )
    rank = func.ts_rank_cd(cand.c.tsv, tsq)
    q = (
        select(cand.c.id, rank.label("r"))
        .order_by(rank.desc(), *[cand.c[f"t{i}"] for i in range(len(tiebreak))])
        .limit(n)
    )
    return [(i, float(r)) for i, r in conn.execute(q)]


def _pg_lexeme(term: str) -> str:
    return "'" + term.replace("'", "''").replace("\\", "\\\\") + "'"


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
) -> Ranking:
    filters = fact_filters(
        scope, tf, subject_prefix=subject_prefix, predicates=predicates, subject_key=subject_key
    )
    return _lexical(conn, versions, terms, filters, n)


def lexical_episodes(
    conn: Connection, scope: Scope, terms: Sequence[str], tf: TimeFilter, n: int
) -> Ranking:
    return _lexical(conn, episodes, terms, episode_filters(scope, tf), n)


# -- masks over the mirror ------------------------------------------------------------


def _scope_mask(mirror: TenantMirror, m: Mirror, scope: Scope) -> np.ndarray:
    mask = np.ones(m.n, dtype=bool)
    for arr, value in ((m.user, scope.user), (m.agent, scope.agent), (m.session, scope.session)):
        col = arr.view
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
) -> np.ndarray:
    m = mirror.v
    rec, sup, vf, vt = m.rec.view, m.sup.view, m.start.view, m.end.view
    known = sup == MAX if tf.known_at is None else (rec <= tf.known_at) & (sup > tf.known_at)
    v = tf.valid_at
    temporal = np.zeros(m.n, dtype=bool)
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
            mask[p] = True
    mask &= _scope_mask(mirror, m, scope)
    if predicates is not None:
        codes = [mirror.preds.index[p] for p in predicates if p in mirror.preds.index]
        mask &= np.isin(m.pred.view, codes)
    if subject_key is not None:
        mask &= m.subj.view == mirror.entities.get(subject_key)
    if subject_prefix:
        idx = np.flatnonzero(mask)
        keep = [i for i in idx if m.subjects[i].startswith(subject_prefix)]
        mask = np.zeros(m.n, dtype=bool)
        mask[keep] = True
    return mask


def episode_mask(mirror: TenantMirror, scope: Scope, tf: TimeFilter) -> np.ndarray:
    m = mirror.e
    mask = m.start.view <= tf.valid_at
    if tf.known_at is not None:
        mask &= m.rec.view <= tf.known_at
    return mask & _scope_mask(mirror, m, scope)


# -- vector and graph legs (mirror) -----------------------------------------------------


def vector_leg(m: Mirror, mask: np.ndarray, q: np.ndarray, n: int) -> Ranking:
    """Exact cosine search over the rows the mask admits."""
    if m.n == 0:
        return []
    scores = m.scores(q)
    admitted = mask & m.has_vec.view & (scores > 0)
    count = int(admitted.sum())
    if count == 0:
        return []
    scores = np.where(admitted, scores, -np.inf)
    take = min(n, count)
    part = np.argpartition(-scores, take - 1)[:take] if take < m.n else np.flatnonzero(admitted)
    top = sorted(part, key=lambda j: (-float(scores[j]), m.hashes[j]))[:take]
    return [(m.ids[j], float(scores[j])) for j in top]


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


def graph_leg(mirror: TenantMirror, mask: np.ndarray, query: str, n: int) -> Ranking:
    """Facts one hop (score 1) or two hops (score 0.5) from entities named in the query."""
    named = entities_in(mirror, query)
    if not named:
        return []
    m = mirror.v
    subj, obj = m.subj.view, m.obj.view
    hop1 = sorted(
        {p for c in named for p in m.by_entity.get(c, ()) if mask[p]}, key=lambda p: m.hashes[p]
    )
    ranked: Ranking = [(m.ids[p], 1.0) for p in hop1[:n]]
    if len(ranked) >= n:
        return ranked
    seen = set(hop1)
    near = {int(c) for p in hop1 for c in (subj[p], obj[p])} - set(named) - {0}
    hop2 = sorted(
        {p for c in near for p in m.by_entity.get(c, ()) if mask[p] and p not in seen},
        key=lambda p: m.hashes[p],
    )
    ranked += [(m.ids[p], 0.5) for p in hop2[: n - len(ranked)]]
    return ranked


# -- conversational context (query time) ---------------------------------------------

# A turn this short is often an answer that does not repeat its question's words
# ("Yes, last May!"): it inherits its predecessor's lexical rank (leg
# ``episode_context``). Done at query time, not by copying the predecessor's
# text into the turn's index, so erasing a turn leaves none of its words behind.
CONTEXT_MAX_CHARS = 300


def episode_successors(
    conn: Connection, scope: Scope, tf: TimeFilter, ranked: Ranking, n: int
) -> Ranking:
    """For each lexical hit, best first, the next episode in the same scope
    (by occurred_at, then insertion order) when it is short and the lexical leg
    did not find it itself; its score is the hit's rank (fusion ranks it there).
    Insertion order is the rowid on SQLite; PostgreSQL has none, so there turns
    sharing one occurred_at follow (recorded_at, id)."""
    if not ranked:
        return []
    e = episodes
    s = episodes.alias("s")
    h = episodes.alias("h")
    if conn.dialect.name == "sqlite":
        h_ord = [h.c.occurred_at, literal_column("h.rowid")]
        s_ord = [s.c.occurred_at, literal_column("s.rowid")]
    else:
        h_ord = [h.c.occurred_at, h.c.recorded_at, h.c.id]
        s_ord = [s.c.occurred_at, s.c.recorded_at, s.c.id]
    visible = [
        s.c.tenant == h.c.tenant,
        s.c.user_id == h.c.user_id,
        s.c.agent_id == h.c.agent_id,
        s.c.session_id == h.c.session_id,
        s.c.occurred_at <= tf.valid_at,
        tuple_(*s_ord) > tuple_(*h_ord),
    ]
    if tf.known_at is not None:
        visible.append(s.c.recorded_at <= tf.known_at)
    nxt = select(s.c.id).where(*visible).order_by(*s_ord).limit(1).correlate(h).scalar_subquery()
    q = select(h.c.id, nxt.label("nxt")).where(
        h.c.tenant == scope.tenant, h.c.id.in_([i for i, _ in ranked])
    )
    succ = {i: x for i, x in conn.execute(q) if x is not None}
    if not succ:
        return []
    short = set(
        conn.execute(
            select(e.c.id).where(
                e.c.tenant == scope.tenant,
                e.c.id.in_(list(set(succ.values()))),
                func.length(e.c.text) <= CONTEXT_MAX_CHARS,
            )
        ).scalars()
    )
    out: Ranking = []
    seen = {i for i, _ in ranked}  # a turn the lexical leg found keeps its own rank
    for rank, (i, _) in enumerate(ranked, start=1):
        x = succ.get(i)
        if x is not None and x in short and x not in seen:
            seen.add(x)
            out.append((x, float(rank)))
    return out[:n]
