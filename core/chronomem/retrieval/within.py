"""A fact search bounded by a subject prefix that holds few rows (a LangGraph
namespace, an adapter's document): every leg runs over the rows of that prefix,
found through the subject-prefix range index (``cm_versions_subject_head``),
instead of ranking the whole tenant and filtering afterwards.

``search`` (the ``Memory.search`` hook, ``retrieval.search``) reads the rows live
at the search's instants whose subject key starts with the prefix, at most
``ROW_CAP`` of them, in one indexed range read. When the prefix holds more (or
has no index range: a NUL or a backslash in it, see ``reads.subject_range``), or
the search asks for retracted versions or episodes, it returns ``None`` and the
tenant-wide search runs as before. Otherwise, over those rows only:

* ``fact_lexical``: BM25 (k1 1.2, b 0.75, FTS5's defaults) of the query's terms
  over the rows' indexed text (its first ``INDEX_MAX_CHARS`` characters, as the
  text indexes), the collection statistics being the prefix's own
  rows. The words are those ``querytime.words`` finds, with plural, ``-ed`` and
  ``-ing`` endings stripped (``light_stem``, not the text index's Porter or
  English stemmer). FTS5 was measured here first: its ``MATCH … AND rowid = ?``
  probe costs 50-100 µs per row at 30k versions (each call seeks every term's
  posting list and bm25 counts its documents again), ms per namespace.
* ``fact_vector``: the exact cosine of the query's embedding with each row's
  stored vector (``cm_vectors``, looked up by primary key in the same range read),
  as the mirror's vector leg computes it — no mirror of the tenant is synced or
  scanned.
* ``entity_graph``: the same one- and two-hop walk as ``legs.graph_leg``, over the
  subject and object keys of the prefix's rows.

The legs are fused, scored (recency, the query's time window) and cut as the
tenant-wide search does (ties: content hash, then version id). Every row's
cosine is computed (one matrix product), so each hit's explanation also carries
its own as ``cosine``, whichever legs found it (an adapter reporting cosine
scores needs no second embedding of the query). A text's term counts are
cached by text (versions never change), so searching a namespace again does
not tokenize it again. A hit is a fact
the tenant-wide search could return with the same filters; only its rank among
them can differ (the lexical statistics and stemming above).

``scored`` (the ``Memory.search_scored`` hook) is ``search`` for a caller that
reads no ``Fact``: the same legs, fusion sums and scores, each kept hit returned
as (``FactRow``, state, score, cosine), with no ``Fact``, explanation or source
built or read."""

from __future__ import annotations

import functools
import json
import logging
import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from sqlalchemy import Connection

from .. import reads
from ..embedding import embed_query_checked
from ..identity import fold
from ..model import Fact, FactRow, Held, ScoredRow, State
from ..schema import INDEX_MAX_CHARS
from ..timeutil import MAX_US, end_dt, from_us, opt_dt
from .fusion import (
    GRAPH_CAP,
    RECENCY_WEIGHT,
    TIME_BOOST,
    US_PER_DAY,
    HalfLives,
    HitKind,
    finish,
    fuse,
    fused_rrf,
    in_window,
    leg_weights,
    recency,
)
from .indexing import fact_text
from .legs import STOPWORDS, TimeFilter
from .querytime import query_terms, time_window, words

if TYPE_CHECKING:
    from ..engine import Engine
    from ..scope import Scope
    from .cache import HeldRows

log = logging.getLogger("chronomem.search")

ROW_CAP = 2000  # rows of the prefix searched within at most (else: the tenant-wide search)
BM25_K1 = 1.2
BM25_B = 0.75
FACT_LEGS = frozenset({"fact_lexical", "fact_vector", "entity_graph"})
Ranking = list[tuple[str, float]]
_T = TypeVar("_T")


@functools.lru_cache(maxsize=65536)
def light_stem(word: str) -> str:
    """``word`` without a plural, ``-ed`` or ``-ing`` ending (so "studies" and
    "study", "visited" and "visits" meet); short words are kept whole."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 4 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=16384)
def _terms(text: str) -> tuple[Counter[str], int]:
    """The stemmed term counts of an indexed text and its length in terms (a
    version's text never changes: the same namespace searched again re-reads the
    same texts, tokenized once)."""
    tokens = [light_stem(w) for w in words(text[:INDEX_MAX_CHARS])]
    return Counter(tokens), len(tokens)


@dataclass
class Lexicon:
    """The rows' indexed texts as BM25 reads them: each indexed row with its term
    counts and length in terms, the mean length, and which of them hold each term."""

    docs: list[tuple[dict[str, Any], Counter[str], int]]
    avg: float
    postings: dict[str, list[int]]  # term -> positions in ``docs`` of the rows holding it
    # each row's length normalisation, ``BM25_K1 * (1 - b + b * length / avg)``
    norms: list[float]


def lexicon(rows: Sequence[dict[str, Any]]) -> Lexicon:
    docs: list[tuple[dict[str, Any], Counter[str], int]] = []
    for row in rows:
        # kept on the row (held rows are searched again): derived from its text alone
        counted = row.get("_terms")
        if counted is None:
            counted = row["_terms"] = _terms(fact_text(row))
        tf, length = counted
        if length:
            docs.append((row, tf, length))
    postings: dict[str, list[int]] = {}
    for i, (_, tf, _) in enumerate(docs):
        for t in tf:
            postings.setdefault(t, []).append(i)
    avg = sum(length for _, _, length in docs) / len(docs) if docs else 0.0
    norms = [BM25_K1 * (1.0 - BM25_B + BM25_B * length / avg) for _, _, length in docs]
    return Lexicon(docs, avg, postings, norms)


def rank_lexical(lex: Lexicon, terms: Sequence[str], n: int) -> Ranking:
    """BM25 of ``terms`` over ``lex`` (see ``lexical``): only the rows holding a
    term are scored (a row holding none scores 0 and is left out)."""
    wanted = list(dict.fromkeys(light_stem(t) for t in terms))
    if not wanted or not lex.docs:
        return []
    docs, norms = lex.docs, lex.norms
    total = len(docs)
    idf = {}
    holding: set[int] = set()
    for t in wanted:
        found = lex.postings.get(t, ())
        df = len(found)
        idf[t] = max(1e-6, math.log((total - df + 0.5) / (df + 0.5)))
        holding.update(found)
    # best first, ties by content hash then id: sorted as (-score, hash, id) tuples
    # (no key call per row; negation is exact, so -(-score) is the score)
    scored: list[tuple[float, str, str]] = []
    for i in holding:
        row, tf, _ = docs[i]
        norm = norms[i]
        # a list, not a generator, summed: the same ``sum`` (no resume per term)
        score = sum([idf[t] * tf[t] * (BM25_K1 + 1.0) / (tf[t] + norm) for t in wanted if t in tf])
        if score > 0:
            scored.append((-score, row["content_hash"], row["id"]))
    scored.sort()
    return [(i, -s) for s, _, i in scored[:n]]


def lexical(rows: Sequence[dict[str, Any]], terms: Sequence[str], n: int) -> Ranking:
    """BM25 of ``terms`` over the rows' indexed text (a row whose text is '' is not
    indexed), the rows being the collection; best first, ties by content hash. As
    the text indexes, only a text's first ``INDEX_MAX_CHARS`` characters count:
    one huge item costs no more than that, and a word past the cap is found here
    no more than anywhere else."""
    return rank_lexical(lexicon(rows), terms, n)


def vector_matrix(rows: Sequence[dict[str, Any]], size: int) -> tuple[list[str], np.ndarray]:
    """The version ids of the rows whose stored vector is ``size`` bytes, and those
    vectors as the rows of one matrix."""
    have = [r for r in rows if r["_vec"] is not None and len(r["_vec"]) == size]
    if not have:
        return [], np.zeros((0, size // 4), dtype="<f4")
    matrix = np.frombuffer(b"".join(r["_vec"] for r in have), dtype="<f4").reshape(len(have), -1)
    return [r["id"] for r in have], matrix


def matrix_cosines(ids: list[str], matrix: np.ndarray, q: np.ndarray) -> dict[str, float]:
    if not ids:
        return {}
    return dict(zip(ids, (matrix @ q.astype(np.float32)).tolist(), strict=True))


def cosines(rows: Sequence[dict[str, Any]], q: np.ndarray) -> dict[str, float]:
    """The exact cosine of ``q`` with each row's stored vector (``_vec``: unit
    vectors, as the mirror holds them), by version id, in one matrix product;
    rows without a vector (or of another dimension) are left out."""
    return matrix_cosines(*vector_matrix(rows, 4 * q.shape[0]), q)


def vector(rows: Sequence[dict[str, Any]], cos: dict[str, float], n: int) -> Ranking:
    """The rows by their cosine (``cosines``), best first; rows without a vector
    or scoring <= 0 are out."""
    scored = [(cos[r["id"]], r["content_hash"], r["id"]) for r in rows if cos.get(r["id"], 0) > 0]
    scored.sort(key=lambda x: (-x[0], x[1], x[2]))
    return [(i, s) for s, _, i in scored[:n]]


def _ngrams(words_: list[str], max_len: int = 4) -> list[str]:
    return [
        " ".join(words_[i : i + size])
        for size in range(max_len, 0, -1)
        for i in range(len(words_) - size + 1)
    ]


def entities(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The rows naming each entity (as subject or object key)."""
    by_entity: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        for key in {r["subject_key"], r["object_key"]}:
            if key:
                by_entity.setdefault(key, []).append(r)
    return by_entity


def walk(
    by_entity: dict[str, list[dict[str, Any]]],
    query: str,
    n: int,
    firsts: frozenset[str] | None = None,
) -> Ranking:
    """``graph`` over the rows ``entities`` indexed. ``firsts``: the first word of
    every entity key there (``first_words``): a query none of whose words is one
    names no entity (an n-gram is words of the query, a key equal to it starts
    with its first word), and no n-gram is built."""
    words = fold(query).split(" ")
    if firsts is not None and firsts.isdisjoint(words):
        return []
    named = [g for g in dict.fromkeys(_ngrams(words)) if g not in STOPWORDS]
    named = [g for g in named if g in by_entity]
    if not named:
        return []

    def order(found: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(found.values(), key=lambda r: (r["content_hash"], r["id"]))

    hop1 = order({r["id"]: r for e in named for r in by_entity[e]})
    ranked: Ranking = [(r["id"], 1.0) for r in hop1[:n]]
    if len(ranked) >= n:
        return ranked
    seen = {r["id"] for r in hop1}
    near = {k for r in hop1 for k in (r["subject_key"], r["object_key"]) if k} - set(named)
    hop2 = order({r["id"]: r for e in near for r in by_entity[e] if r["id"] not in seen})
    ranked += [(r["id"], 0.5) for r in hop2[: n - len(ranked)]]
    return ranked


def first_words(by_entity: Mapping[str, Any]) -> frozenset[str]:
    """The first word (up to a space) of each entity key."""
    return frozenset(key.split(" ", 1)[0] for key in by_entity)


def graph(rows: Sequence[dict[str, Any]], query: str, n: int) -> Ranking:
    """``legs.graph_leg`` over the rows: facts naming (as subject or object key) an
    entity the query names score 1, facts one more hop away 0.5; by content hash."""
    return walk(entities(rows), query, n)


class Cosines(Mapping[str, float]):
    """Each row's cosine to a query by version id (``Rows.vector``): the matrix
    product's values (``floats``) at each id's place (``places``, kept with the
    matrix), read through ``cosine`` or as a mapping."""

    __slots__ = ("floats", "places")

    def __init__(self, places: Mapping[str, int], floats: list[float]):
        self.places = places
        self.floats = floats

    def cosine(self, vid: str) -> float | None:
        j = self.places.get(vid)
        return None if j is None else self.floats[j]

    def __getitem__(self, vid: str) -> float:
        return self.floats[self.places[vid]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.places)

    def __len__(self) -> int:
        return len(self.places)


NO_COSINES = Cosines({}, [])


class Rows:
    """A prefix's rows and what the legs derive from them alone (the lexicon, the
    entity index, the vector matrix), each built when a search first needs it.
    Kept with the held rows (``HeldRows.view``) while the prefix's rows stay the
    same, so a namespace searched again derives nothing again; never written
    after it is built but for those lazily built parts (two threads building one
    build the same)."""

    def __init__(self, rows: list[dict[str, Any]]):
        self.rows = rows
        self.by_id = {row["id"]: row for row in rows}
        self._lexicon: Lexicon | None = None
        self._entities: dict[str, list[dict[str, Any]]] | None = None
        self._firsts: frozenset[str] = frozenset()  # ``first_words`` of ``_entities``
        # vector size -> the ids of the rows with such a vector, their matrix, and
        # each id's place in it
        self._matrices: dict[int, tuple[list[str], np.ndarray, dict[str, int]]] = {}
        self._ties: dict[int, np.ndarray] = {}  # vector size -> ``vector``'s tie ranks
        self._lean: dict[str, Lean] | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def lexical(self, terms: Sequence[str], n: int) -> Ranking:
        if self._lexicon is None:
            self._lexicon = lexicon(self.rows)
        return rank_lexical(self._lexicon, terms, n)

    def vector(self, q: np.ndarray, n: int) -> tuple[Cosines, Ranking]:
        """Every row's cosine to ``q`` (``cosines``, as a ``Cosines`` mapping: the
        matrix product's values by each id's place, no dict built per search), and
        ``vector`` over these rows:
        the rows scoring > 0 by cosine, best first, ties by content hash then
        version id, ranked in numpy (``np.lexsort`` of the negated float32
        cosines, then each row's rank in (hash, id) order, kept with the matrix):
        the order and the floats of sorting the rows' (-cosine, hash, id) tuples."""
        size = 4 * q.shape[0]
        found = self._matrices.get(size)
        if found is None:
            ids, matrix = vector_matrix(self.rows, size)
            found = self._matrices[size] = (ids, matrix, {vid: j for j, vid in enumerate(ids)})
        ids, matrix, places = found
        if not ids:
            return NO_COSINES, []
        scores = matrix @ q.astype(np.float32, copy=False)
        values = scores.tolist()
        ties = self._ties.get(size)
        if ties is None:  # each row's place in (content hash, id) order
            by_id = self.by_id
            order = sorted(range(len(ids)), key=lambda j: (by_id[ids[j]]["content_hash"], ids[j]))
            ties = self._ties[size] = np.empty(len(ids), dtype=np.int64)
            ties[order] = np.arange(len(ids))
        # every row by (-cosine, tie rank), without selecting the rows scoring > 0
        # first: they come first (the others' -cosine is >= 0, a NaN sorts last),
        # in the order sorting them alone gives (two fancy indexings fewer)
        ranks = np.lexsort((ties, -scores))
        best = ranks[: min(int(np.count_nonzero(scores > 0)), n)].tolist()
        return Cosines(places, values), list(
            zip(map(ids.__getitem__, best), map(values.__getitem__, best), strict=True)
        )

    def lean(self) -> dict[str, Lean]:
        """Each row's ``Lean`` value by version id (``scored`` reads these alone)."""
        found = self._lean
        if found is None:
            found = self._lean = {row["id"]: _lean(row) for row in self.rows}
        return found

    def graph(self, query: str, n: int) -> Ranking:
        if self._entities is None:
            found = entities(self.rows)
            self._firsts = first_words(found)
            self._entities = found
        return walk(self._entities, query, n, self._firsts)


def prefix_rows(
    conn: Connection,
    scope: Scope,
    tf: TimeFilter,
    subject_prefix: str,
    predicates: Sequence[str] | None,
    subject_key: str | None,
    held: HeldRows | None = None,
) -> tuple[Rows, int | None, bool] | None:
    """The prefix's rows at the search's instants (one range read of the subject
    head index), or None past ``ROW_CAP`` (known, when the prefix's range holds
    more versions than that, from a walk of the index alone), with the tenant's
    registry version and whether any of its facts cites an episode (read by the
    same statement; not counted while the clock is at the stamp a view is kept
    at: ``HeldRows.stamp_of``). With ``held``: the
    range read takes the closing columns alone and the rest of each row from
    ``held`` when it holds them all (with what earlier searches derived from the
    same rows: ``HeldRows.view``); else the whole rows are read (and held). And
    no range read at all while the tenant's clock stamp (read by the first
    statement) is the one a kept read of the same request was made at and the
    valid instant is short of the prefix's next version start or end
    (``HeldRows.stamped``; ``reads.next_valid_change`` when a read is kept)."""
    if reads.list_count(predicates) == reads.EXPANDING:  # the whole rows, not held
        held = None
    asked: tuple[Any, ...] = ()
    known = None
    if held is not None:
        preds = None if predicates is None else tuple(predicates)
        # with the cap its count passed: a view kept at a stamp was counted under it
        asked = (scope, subject_prefix, preds, subject_key, tf.states, tf.known_at, ROW_CAP)
        known = held.stamp_of(asked, tf.valid_at)
    if known is None and isinstance(conn, _Snapshot) and conn.once:
        raise _Outside("rows to read")  # (before any statement: a read needs its snapshot)
    found = reads.prefix_size_and_registry(conn, scope.tenant, subject_prefix, ROW_CAP + 1, known)
    if found is None:
        return None
    registry_us, cited, stamp = found.registry_us, found.cited, found.stamp
    size = found.size
    if held is not None and stamp is not None:
        # no write since the stamp this read was kept at: the same rows
        kept = held.stamped(asked, stamp, tf.valid_at)
        if kept is not None:
            return kept, registry_us, cited
    if size is None:  # not counted (the stamp ``known``), and no longer kept: count now
        size = reads.prefix_size(conn, scope.tenant, subject_prefix, ROW_CAP + 1)
    if size is None or size > ROW_CAP:
        return None
    kw: dict[str, Any] = {
        "valid_at": tf.valid_at,
        "known_at": tf.known_at,
        "states": tf.states,
        "subject_key": subject_key,
        "predicates": predicates,
        "subject_prefix": subject_prefix,
        "limit": ROW_CAP + 1,
    }
    columns: tuple[str, ...] = ()
    view: Rows | None = None
    if held is not None:
        q = reads.facts_query(scope, closing_only=True, **kw)
        assert q.shape.inline
        columns = q.columns
        closing = q.tuples(conn)
        if len(closing) > ROW_CAP:
            return None
        view = held.view(scope.tenant, columns, closing, Rows)
    if view is None:
        rows = reads.facts_query(scope, with_text=True, **kw).run(conn)
        if len(rows) > ROW_CAP:
            return None
        view = Rows(rows)
        if held is not None:
            held.hold(scope.tenant, columns, rows, view)
    if held is not None and stamp is not None:
        # read after the stamp (in its snapshot, or a later one): the stamp's rows
        # or newer, the same at every valid instant until a version begins or ends
        until = reads.next_valid_change(conn, scope.tenant, subject_prefix, tf.valid_at)
        held.stamp(asked, stamp, tf.valid_at, until, view)
    return view, registry_us, cited


# What ``scored`` needs of a row, none of it changed by a close: its tiebreak
# (content hash, then version id), predicate, valid from and to (µs; None: open),
# and its ``FactRow``.
Lean = tuple[str, str, int, int | None, FactRow]


def _lean(row: dict[str, Any]) -> Lean:
    return (
        f"{row['content_hash']}:{row['id']}",
        row["predicate"],
        row["valid_from"],
        row["valid_to"],
        FactRow(
            row["fact_id"],
            row["id"],
            row["subject"],
            row["subject_key"],
            row["predicate"],
            row["object"],
            from_us(row["valid_from"]),
            end_dt(row["valid_to"]),
        ),
    )


def _fixed(row: dict[str, Any]) -> dict[str, Any]:
    """The fields of a version's ``Fact`` that no close changes (every column but
    ``reads.CLOSING_COLUMNS``), converted once."""
    return {
        "id": row["fact_id"],
        "version_id": row["id"],
        "subject": row["subject"],
        "predicate": row["predicate"],
        "object": row["object"],
        "valid_from": from_us(row["valid_from"]),
        "valid_to": end_dt(row["valid_to"]),  # past 9999: never ends
        "recorded_at": from_us(row["recorded_at"]),
        "extractor": row["extractor"],
        "scope": reads.scope_of(row),
        "subject_key": row["subject_key"],
        "object_key": row["object_key"],
    }


def to_fact(row: dict[str, Any], valid_at: int, sources: Sequence[str]) -> Fact:
    """``reads.to_fact`` of a row within a prefix (never a retracted one:
    ``applies``), equal to it field for field (tests/test_search_within.py). The
    fields no close changes are converted once and kept on the row (``_fixed``:
    held rows are searched again; a row completed with newer closing columns
    copies them, rightly); the instance is filled in directly, as the frozen
    dataclass's ``__init__`` would fill it, for a sixth of its cost: the rows a
    search keeps (30 for a LangGraph page of 10) are each built as a ``Fact``."""
    fixed = row.get("_fixed")
    if fixed is None:
        fixed = row["_fixed"] = _fixed(row)
    fact = object.__new__(Fact)
    fields = vars(fact)
    fields.update(fixed)
    fields["scope"] = dict(fixed["scope"])  # each fact its own, as to_fact gives
    closed = row["superseded_at"]
    fields["superseded_at"] = None if closed is None else opt_dt(closed)
    fields["state"] = reads.state_of(row, valid_at)
    fields["closed_reason"] = row["closed_reason"]
    fields["superseded_by"] = row["superseded_by"]
    meta = row["metadata"]
    fields["metadata"] = {} if meta == "{}" else json.loads(meta)
    fields["source_episode_ids"] = tuple(sources) if sources else ()
    return fact


def _explain(explain: dict[str, Any], tiebreak: str, cosine: float | None) -> dict[str, Any]:
    """A hit's explanation; inside a prefix every row's cosine to the query is
    known, so a hit also carries its own (``cosine``) whichever legs found it."""
    explain["tiebreak"] = tiebreak
    if cosine is not None:
        explain["cosine"] = cosine
    return explain


@dataclass
class Within:
    """What a search within a prefix found: the hits kept for the reranker and the
    cut, best first, as (fact, score, explain); the legs that failed; whether every
    requested leg did (``retrieval.search`` then raises ``SearchFailed``)."""

    kept: list[tuple[Fact, float, dict[str, Any]]]
    failed: dict[str, str]
    every_leg_failed: bool = False


@dataclass
class Scored:
    """``Within`` for the lean route (``scored``): the kept hits as ``ScoredRow``
    values, best first."""

    kept: list[ScoredRow]
    failed: dict[str, str]
    every_leg_failed: bool = False
    # the query's vector and the rows read (``Memory.similarities`` answers from
    # them): None when the vector leg did not embed the query
    held: Held | None = None


def applies(subject_prefix: str | None, tf: TimeFilter, wanted: set[str]) -> bool:
    """Whether a search may run within its prefix: a prefix the index can bound,
    no retracted versions asked for (they are found by another predicate), and no
    episode leg (episodes have no subject)."""
    return (
        bool(subject_prefix)
        and reads.subject_range(subject_prefix or "") is not None
        and State.RETRACTED not in tf.states
        and wanted <= FACT_LEGS
    )


class _Outside(Exception):
    """What a search within a prefix would run outside its point read's snapshot
    (``_Snapshot``): the search runs again in a read transaction."""


class _Snapshot:
    """A SQLite point read's connection (``Backend.point_read`` with ``on_end``: one
    deferred transaction begun on the driver connection, so every statement sees
    one snapshot, without a SQLAlchemy ``Connection``, its ``BEGIN`` and ``COMMIT``)
    as the search uses it: prepared statements go to that driver connection
    (``SqliteBackend.fetch``); anything needing a SQLAlchemy ``Connection`` (a
    registry reload, a driver error re-run through SQLAlchemy) would open
    another connection, in another snapshot, and raises ``_Outside`` instead."""

    def __init__(self, conn: Any, *, once: bool = False):
        self.dialect = conn.dialect
        # ``once``: outside any transaction, for one statement (``_OneStatement``)
        self.once = once
        self.driver = _OneStatement(conn.driver) if once else conn.driver

    def __getattr__(self, name: str) -> Any:
        raise _Outside(name)


class _OneStatement:
    """A driver connection outside any transaction, for a search that may need one
    statement alone (one snapshot by itself: a held namespace whose clock stamp
    has not moved reads nothing more, ``prefix_rows``, and ``scored`` reads no
    source): its first statement runs; a second, or anything else asked of it,
    raises ``_Outside`` (the search runs again in a snapshot,
    ``_in_snapshot_or_read``)."""

    __slots__ = ("_driver", "_ran")

    def __init__(self, driver: Any):
        self._driver = driver
        self._ran = False

    def execute(self, sql: str, params: Any = ()) -> Any:
        if self._ran:
            raise _Outside("a second statement")
        self._ran = True
        return self._driver.execute(sql, params)

    def __getattr__(self, name: str) -> Any:
        raise _Outside(name)


def _in_snapshot(conn: Connection) -> None:
    """``point_read``'s ``on_end``: asks for the snapshot, runs nothing."""


@dataclass(slots=True)
class _Ask:
    """A search within a prefix as ``search`` or ``scored`` was asked it (the
    arguments the two share), and the query's vector once the vector leg embedded
    it (kept: a search run again outside the snapshot embeds it no second time)."""

    engine: Engine
    scope: Scope
    query: str
    tf: TimeFilter
    k: int
    n: int
    wanted: set[str]
    min_score: float
    subject_prefix: str
    subject: str | None
    predicates: Sequence[str] | None
    exact: bool
    asked_us: int | None
    qvec: np.ndarray | None = None


def search(
    engine: Engine,
    scope: Scope,
    query: str,
    tf: TimeFilter,
    *,
    k: int,
    n: int,
    wanted: set[str],
    min_score: float,
    subject_prefix: str,
    subject: str | None,
    predicates: Sequence[str] | None,
    exact: bool,
    asked_us: int | None = None,
) -> Within | None:
    """``Memory.search`` within the prefix's rows (see the module docstring), or
    None when the prefix holds more than ``ROW_CAP`` rows. ``asked_us``: the instant
    the query's relative times count from (default: the valid instant).

    Its statements (the range count, registry version and whether the tenant
    cites episodes at all, the rows, the kept hits' sources: not read in a
    snapshot where it cites none) share one snapshot: on SQLite a point read's driver-level
    transaction (``_Snapshot``) when they are all prepared statements, as they
    are unless predicates are resolved or listed past ``reads.INLINE``, else (or
    when one would leave it: ``_Outside``) a read transaction."""
    ask = _Ask(
        engine, scope, query, tf, k, n, wanted, min_score, subject_prefix, subject, predicates,
        exact, asked_us,
    )  # fmt: skip
    return _in_snapshot_or_read(ask, _search)


def scored(
    engine: Engine,
    scope: Scope,
    query: str,
    tf: TimeFilter,
    *,
    k: int,
    n: int,
    wanted: set[str],
    min_score: float,
    subject_prefix: str,
    subject: str | None,
    predicates: Sequence[str] | None,
    exact: bool,
    asked_us: int | None = None,
) -> Scored | None:
    """``search``'s hits without their ``Fact`` values, explanations or sources
    (``Memory.search_scored``): each kept hit's version as a ``FactRow`` (built
    once per row and kept on it), its state, its score and its cosine, in
    ``search``'s order with ``search``'s scores (the same legs, the same fusion
    sums in the same order, the same score arithmetic: tests/test_search_within.py
    compares them). The fusion keeps each candidate's reciprocal-rank sum alone
    (no ``Fused`` value, no per-leg explanation), and no source is read. Without a
    reranker only (``search``'s caller reranks ``Fact`` hits); None as ``search``."""
    ask = _Ask(
        engine, scope, query, tf, k, n, wanted, min_score, subject_prefix, subject, predicates,
        exact, asked_us,
    )  # fmt: skip
    return _in_snapshot_or_read(ask, _scored, once=True)


def _in_snapshot_or_read(ask: _Ask, fn: Callable[[_Ask, Any], _T], *, once: bool = False) -> _T:
    """``fn`` run in a point read's snapshot (``_Snapshot``) when its statements
    are all prepared ones, else (or when ``fn`` would leave it) in a read
    transaction (``search``). ``once`` (``scored``): where a point read hands
    out the driver outside a transaction, first there for one statement
    (``_OneStatement``: a held namespace's search, no ``BEGIN`` or ``ROLLBACK``),
    then, should it need more, in the snapshot from its first statement on."""
    backend = ask.engine.backend
    predicates = ask.predicates
    if predicates is None or (ask.exact and len(predicates) <= reads.INLINE):
        if once and backend.driver_point_reads:
            try:
                with backend.point_read() as conn:
                    return fn(ask, _Snapshot(conn, once=True))
            except _Outside:
                pass
        try:
            with backend.point_read(on_end=_in_snapshot) as conn:
                at = _Snapshot(conn) if getattr(conn, "driver", None) is not None else conn
                return fn(ask, at)
        except _Outside:
            pass
    with backend.read() as conn:
        return fn(ask, conn)


@dataclass
class _Legs:
    """What the legs found within a prefix: the rows (``Rows``), each leg's
    ranking, the legs that failed, every row's cosine (once the vector leg ran),
    the tenant's registry version and whether any of its facts cites an episode;
    and what scoring the fused candidates reads: the legs' weights, the query's
    time window and each predicate's half-life (``HalfLives``)."""

    view: Rows
    rankings: dict[str, tuple[HitKind, Ranking]]
    failed: dict[str, str]
    cos: Cosines
    registry_us: int | None
    cited: bool
    weights: dict[str, float]
    window: tuple[int, int] | None
    half: HalfLives

    @property
    def every_leg_failed(self) -> bool:
        return bool(self.view.rows) and not self.rankings and bool(self.failed)


def _legs(ask: _Ask, conn: Any) -> _Legs | None:
    """The prefix's rows read (``prefix_rows``) and each wanted leg run over them,
    each in its own error boundary; None past ``ROW_CAP``."""
    engine, scope, query, tf, n, wanted = (
        ask.engine, ask.scope, ask.query, ask.tf, ask.n, ask.wanted,
    )  # fmt: skip
    r = engine.retrieval
    assert r is not None, "retrieval.attach runs on open"
    rankings: dict[str, tuple[HitKind, Ranking]] = {}
    failed: dict[str, str] = {}
    preds = None
    if ask.predicates is not None:
        preds = [
            p if ask.exact else engine.registry.resolve(conn, scope.tenant, p).name
            for p in ask.predicates
        ]
    subject = ask.subject
    skey = None if subject is None else subject if ask.exact else fold(subject)
    read = prefix_rows(conn, scope, tf, ask.subject_prefix, preds, skey, r.mirrors.held)
    if read is None:
        return None
    view, registry_us, cited = read

    def run(name: str, fn: Callable[[], Ranking]) -> None:
        # each leg in its own error boundary; none runs SQL (the rows are read)
        if name not in wanted:
            return
        try:
            hook = r.fail.get(name)
            if hook is not None:
                hook()
            rankings[name] = (HitKind.FACT, fn())
        except Exception as exc:  # a failing leg is reported, not fatal
            log.warning("search leg %s failed: %s", name, exc)
            failed[name] = f"{type(exc).__name__}: {exc}"

    cos = NO_COSINES  # every row's cosine, once the vector leg ran

    def vector_leg() -> Ranking:
        nonlocal cos
        if ask.qvec is None:
            ask.qvec = embed_query_checked(r.embedder, query)
        cos, ranked = view.vector(ask.qvec, n)
        return ranked

    if view.rows:
        run("fact_lexical", lambda: view.lexical(query_terms(query), n))
        run("fact_vector", vector_leg)
        run("entity_graph", lambda: view.graph(query, min(n, GRAPH_CAP)))
    asked_us = tf.valid_at if ask.asked_us is None else ask.asked_us
    return _Legs(
        view,
        rankings,
        failed,
        cos,
        registry_us,
        cited,
        leg_weights(r.embedder),
        time_window(query, asked_us),
        HalfLives(lambda: engine.registry.load(conn, scope.tenant, version=registry_us)),
    )


def _search(ask: _Ask, conn: Any) -> Within | None:
    r = ask.engine.retrieval
    assert r is not None, "retrieval.attach runs on open"
    legs = _legs(ask, conn)
    if legs is None:
        return None
    if legs.every_leg_failed:
        return Within([], legs.failed, every_leg_failed=True)
    fused = list(fuse(legs.rankings, legs.weights).values())
    by_id = legs.view.by_id
    window, half, valid_at = legs.window, legs.half, ask.tf.valid_at
    lives: dict[str, float | None] = {}  # ``half``'s, looked up without a call per hit
    for f in fused:
        row = by_id[f.id]
        # of columns no close changes: kept on the row
        if "_tiebreak" in row:
            tiebreak = row["_tiebreak"]
        else:
            tiebreak = row["_tiebreak"] = f"{row['content_hash']}:{row['id']}"
        start = row["valid_from"]
        inside = None
        if window is not None:
            end = MAX_US if row["valid_to"] is None else row["valid_to"]
            inside = in_window(start, end, window, False)
        predicate = row["predicate"]
        if predicate in lives:
            life = lives[predicate]
        else:
            life = lives[predicate] = half(predicate)
        finish(f, recency(valid_at - start, life), tiebreak, inside)
    # best first, ties by tiebreak: sorted as (-score, tiebreak) tuples, no key call per hit
    ordered = sorted(
        [(-f.score, f.tiebreak, i) for i, f in enumerate(fused) if f.score >= ask.min_score]
    )
    k = ask.k
    keep = [fused[i] for _, _, i in ordered[: k if r.reranker is None else max(3 * k, k + 20)]]
    kept = [by_id[f.id] for f in keep]
    src: dict[str, list[str]] = {}
    if legs.cited or not isinstance(conn, _Snapshot):
        # in one snapshot with the first statement (``_Snapshot``), a tenant none of
        # whose facts cites an episode has no source to read: no statement for them
        src = reads.sources_prepared(conn, ask.scope.tenant, [row["fact_id"] for row in kept])
    cosine = legs.cos.cosine
    found = [
        (
            to_fact(row, valid_at, src.get(row["fact_id"], ())),
            f.score,
            _explain(f.explain(), f.tiebreak, cosine(row["id"])),
        )
        for f, row in zip(keep, kept, strict=True)
    ]
    return Within(found, legs.failed)


def _scored(ask: _Ask, conn: Any) -> Scored | None:
    """``_search``'s kept hits as ``ScoredRow`` values (``scored``). The score of a
    candidate is ``fusion.finish``'s, term for term: its reciprocal-rank sum (the
    legs' votes added in the legs' order, as ``fuse`` adds them) times
    ``1 - w + w * recency`` (``fusion.recency``; each predicate's half-life in µs
    multiplied once per search: the same float), times ``1 + TIME_BOOST`` inside
    the query's time window."""
    r = ask.engine.retrieval
    assert r is not None, "retrieval.attach runs on open"
    assert r.reranker is None, "a reranker reranks Fact hits: Memory.search"
    legs = _legs(ask, conn)
    if legs is None:
        return None
    if legs.every_leg_failed:
        return Scored([], legs.failed, every_leg_failed=True)
    rrf = fused_rrf(legs.rankings, legs.weights)
    lean = legs.view.lean()
    window, half, valid_at, min_score = legs.window, legs.half, ask.tf.valid_at, ask.min_score
    scales: dict[str, float | None] = {}  # each predicate's half-life in µs (None: none)
    kept_weight, weight, boost = 1.0 - RECENCY_WEIGHT, RECENCY_WEIGHT, 1.0 + TIME_BOOST
    # the factor of a candidate whose recency is 1.0 (no half-life, or not yet aged)
    flat = kept_weight + weight * 1.0
    ordered: list[tuple[float, str, str]] = []
    append = ordered.append
    last: str | None = None  # the previous candidate's predicate (``scale`` is its)
    scale: float | None = None
    for vid, votes in rrf.items():
        tiebreak, predicate, start, until, _ = lean[vid]
        if predicate != last:
            if predicate in scales:
                scale = scales[predicate]
            else:
                life = half(predicate)
                scale = scales[predicate] = None if life is None else life * US_PER_DAY
            last = predicate
        age = valid_at - start
        # ``recency`` and ``finish``, inline (the same operations in the same order)
        if scale is None or age <= 0:
            score = votes * flat
        else:
            score = votes * (kept_weight + weight * 0.5 ** (age / scale))
        if window is not None and in_window(
            start, MAX_US if until is None else until, window, False
        ):
            score *= boost
        if score >= min_score:
            append((-score, tiebreak, vid))
    ordered.sort()  # best first, ties by tiebreak
    live, ended, scheduled = State.LIVE, State.ENDED, State.SCHEDULED
    places, floats = legs.cos.places, legs.cos.floats
    out: list[ScoredRow] = []
    for neg, _, vid in ordered[: ask.k]:
        _, _, start, until, fact_row = lean[vid]
        # ``reads.state_of`` (never a retracted row: ``applies``)
        if start > valid_at:
            state = scheduled
        elif until is not None and until <= valid_at:
            state = ended
        else:
            state = live
        j = places.get(vid)
        out.append((fact_row, state, -neg, None if j is None else floats[j]))
    qvec = ask.qvec
    return Scored(
        out,
        legs.failed,
        held=None if qvec is None else Held(ask.query, qvec, legs.view.by_id),
    )
