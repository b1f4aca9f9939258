"""The read side of a batch: items, searches and namespace listings at one
pair of instants (valid ``valid_at``, belief ``known_at``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.store.base import Item, SearchItem, SearchOp

from chronomem import Fact, FactRow, Memory, State
from chronomem.model import Held, ScoredRow
from chronomem.timeutil import from_us, opt_dt

from . import filters, indexing, keys, scoring
from .records import Live, Marker, Record, alive, group, is_doc, live_record

MAX_POOL = 20_000  # hits fetched at most before loading the whole prefix
SEARCH_POOL = 3  # fetch this many candidate hits per wanted item, then widen
SUBJECTS_PER_QUERY = 500  # items read by one facts(subjects=[...]) query
LIST_CHUNK = 32  # rows a filtered listing reads at least per statement (then doubling)


def to_item(rec: Record) -> Item:
    """``Item(value=…, key=…, namespace=…, created_at=…, updated_at=…)`` of the
    record (a tuple namespace and ``datetime`` instants, which its ``__init__``
    keeps as given): its attributes set directly while LangGraph lays the class
    out as ``_ITEM_SLOTS`` (``search_item``'s reason; tests/langgraph/
    test_search_items.py compares the two), else the constructor."""
    value, created, updated = rec.item_parts()
    if not _DIRECT_ITEM:
        return Item(
            value=value,
            key=rec.key,
            namespace=rec.namespace,
            created_at=created,
            updated_at=updated,
        )
    item: Item = _new(Item)
    item.value = value
    item.key = rec.key
    item.namespace = rec.namespace
    item.created_at = created
    item.updated_at = updated
    return item


def to_search_item(rec: Record, score: float | None = None) -> SearchItem:
    m = rec.marker
    f = rec.marker_fact
    if m is None or m.value is None or f is None:  # not a document: ``item_parts``
        value, created, updated = rec.item_parts()
        return search_item(rec.namespace, rec.key, value, created, updated, score)
    # ``item_parts`` of a document, inline (a page's items are documents)
    updated = f.valid_from
    created = updated if m.created is None else from_us(m.created)
    return search_item(rec.namespace, rec.key, dict(m.value), created, updated, score)


# ``SearchItem``'s attributes as LangGraph lays them out (``__slots__``, its class
# and ``Item``): while they are these, ``search_item`` fills them in directly
_ITEM_SLOTS = ("value", "key", "namespace", "created_at", "updated_at")
_DIRECT_ITEM = Item.__mro__ == (Item, object) and Item.__slots__ == _ITEM_SLOTS
_DIRECT = (
    _DIRECT_ITEM
    and SearchItem.__mro__ == (SearchItem, Item, object)
    and SearchItem.__slots__ == ("score",)
)
_new = object.__new__


def search_item(
    namespace: tuple[str, ...],
    key: str,
    value: dict[str, Any],
    created: datetime,
    updated: datetime,
    score: float | None,
) -> SearchItem:
    """``SearchItem(namespace=…, key=…, value=…, created_at=…, updated_at=…,
    score=…)`` of a tuple namespace and ``datetime`` instants (what its
    ``__init__`` keeps as given): the same attributes set directly, without
    its two ``__init__`` calls (``super()``, keyword arguments), a fifth of
    its cost for each of a page's items (tests/langgraph/test_search_items.py
    compares the two); the constructor itself if LangGraph lays the class out
    otherwise."""
    if not _DIRECT:
        return SearchItem(
            namespace=namespace,
            key=key,
            value=value,
            created_at=created,
            updated_at=updated,
            score=score,
        )
    item: SearchItem = _new(SearchItem)
    item.value = value
    item.key = key
    item.namespace = namespace
    item.created_at = created
    item.updated_at = updated
    item.score = score
    return item


def _newest_first(records: list[Record]) -> list[Record]:
    """Newest ``updated_at`` first, ties by subject (namespace labels, then key, in
    code point order as stored): the order ``Memory.newest_rows`` lists in."""
    return sorted(records, key=lambda r: (-r.updated_us, r.subject))


def _documents(rows: list[FactRow]) -> list[Record] | None:
    """Each row as the record of its item (its document), or None when a row is
    not a document (an old-layout marker or field: the item needs its other facts)."""
    out: list[Record] = []
    for row in rows:
        parsed = keys.parse_subject(row.subject)
        if parsed is None or not is_doc(row.predicate, row.object):
            return None
        out.append(Record(row.subject, parsed[0], parsed[1], marker_fact=row))
    return out


@dataclass
class Reader:
    memory: Memory
    valid_at: int
    known_at: int | None
    score: str = "cosine"  # what SearchItem.score reports: scoring.SCORE_MODES
    # each hit item's best fused relevance (orders items of equal score)
    fused: dict[str, float] = field(default_factory=dict)
    # the live document version each hit item's search returned (its record needs
    # no second read when that is all the item is: ``_hit_records``)
    hit_docs: dict[str, Live] = field(default_factory=dict)
    # what the last lean search held (``ScoredHits.held``): the cosines of the
    # versions it read need no read and no embedding (``scoring.cosines``)
    held: Held | None = None

    def _ranked(self, scores: dict[str, float], subjects: Iterable[str]) -> list[str]:
        """``subjects`` best first: by score, then by fused relevance, then by
        subject; sorted as decorated tuples (no key function call per item)."""
        fused = self.fused
        return [s for _, _, s in sorted([(-scores[s], -fused.get(s, 0.0), s) for s in subjects])]

    def _times(self) -> dict[str, Any]:
        return {"valid_at": from_us(self.valid_at), "known_at": opt_dt(self.known_at)}

    def _facts(self, **kw: Any) -> list[Fact]:
        return self.memory.facts(exact=True, **self._times(), **kw)

    def record(self, subject: str) -> Record | None:
        return self.items([subject])[subject]

    def items(self, subjects: Iterable[str], *, light: bool = False) -> dict[str, Record | None]:
        """The live record of each subject (``None``: no such item), in one query
        per ``SUBJECTS_PER_QUERY`` subjects. ``light``: read as ``FactRow`` values
        (``Memory.rows``, a point read: what a ``get`` needs), not ``Fact`` values."""
        wanted = list(dict.fromkeys(subjects))
        found: dict[str, Record] = {}
        for i in range(0, len(wanted), SUBJECTS_PER_QUERY):
            chunk = wanted[i : i + SUBJECTS_PER_QUERY]
            if light:
                found.update(group(self._rows(subjects=chunk)))
            else:
                found.update(group(self._facts(subjects=chunk)))
        return {s: rec if (rec := found.get(s)) is not None and rec.alive else None for s in wanted}

    def item(self, subject: str) -> Record | None:
        """One subject's live record (``items`` of one, without its bookkeeping)."""
        return live_record(self._rows(subjects=(subject,)), subject)

    def _rows(self, **kw: Any) -> list[FactRow]:
        return self.memory.rows(
            valid_at=from_us(self.valid_at), known_at=opt_dt(self.known_at), exact=True, **kw
        )

    def records(self, prefix: tuple[str, ...]) -> list[Record]:
        """The live items under ``prefix`` (read as ``FactRow`` values)."""
        return alive(group(self._rows(subject_prefix=keys.namespace_prefix(prefix))))

    def search(self, op: SearchOp) -> tuple[list[SearchItem], list[Record]]:
        """The page of results, and the records on it (for TTL refresh)."""
        end = op.offset + op.limit
        if not (op.query and op.query.strip()):
            page = self._listing(op.namespace_prefix, op.filter, op.offset, op.limit)
            if page is None:  # not listable in SQL: every item under the prefix
                page = _newest_first(self._filtered(op))[op.offset : end]
            return [to_search_item(r) for r in page], page
        fast = self._hits_page(op)
        if isinstance(fast, tuple):
            return fast
        if fast is not None:  # every hit there is: the unmatched items follow, newest first
            found = self._matched_then_listed(op, fast)
            if found is not None:
                return found
        recs = self._filtered(op)
        by_subject = {r.subject: r for r in recs}
        if fast is not None:
            scores = {s: v for s, v in fast.items() if s in by_subject}
        else:
            scores = self._scores(op, set(by_subject), end)
        ranked = self._ranked(scores, scores)
        rest = _newest_first([r for s, r in by_subject.items() if s not in scores])
        matched: list[tuple[Record, float | None]] = [(by_subject[s], scores[s]) for s in ranked]
        page_scored = matched[op.offset : end]
        unmatched = rest[max(op.offset - len(ranked), 0) : max(end - len(ranked), 0)]
        page_scored += list(
            zip(unmatched, self._unmatched_scores(op.query, unmatched), strict=True)
        )
        return [to_search_item(r, s) for r, s in page_scored], [r for r, _ in page_scored]

    def _filtered(self, op: SearchOp) -> list[Record]:
        """Every live item under the prefix that passes the filter (only the
        filtered items' documents are decoded)."""
        recs = self.records(op.namespace_prefix)
        if op.filter:
            recs = [r for r in recs if filters.matches(r.value(), op.filter)]
        return recs

    def _matched_then_listed(
        self, op: SearchOp, scores: dict[str, float]
    ) -> tuple[list[SearchItem], list[Record]] | None:
        """A query's page when the hits (``scores``: all of them) cannot fill it: the
        matched items by score, then the others newest first from the bounded
        listing (``_listing``, skipping the hits); None when it cannot list."""
        assert op.query is not None
        end = op.offset + op.limit
        records = self._hit_records(scores)
        ranked = self._ranked(
            scores,
            (
                s
                for s, r in records.items()
                if r is not None and (not op.filter or filters.matches(r.value(), op.filter))
            ),
        )
        start = max(op.offset - len(ranked), 0)
        want = max(end - len(ranked), 0) - start
        rest: list[Record] = []
        if want > 0:
            listed = self._listing(op.namespace_prefix, op.filter, start, want, skip=set(scores))
            if listed is None:
                return None
            rest = self._whole(listed)
        page: list[tuple[Record, float | None]] = [
            (r, scores[s]) for s in ranked[op.offset : end] if (r := records[s]) is not None
        ]
        page += list(zip(rest, self._unmatched_scores(op.query, rest), strict=True))
        return [to_search_item(r, sc) for r, sc in page], [r for r, _ in page]

    def _whole(self, docs: list[Record]) -> list[Record]:
        """Records read as their document alone, completed with their index entries
        where the document is not the item's only indexed text (``indexing.entries``
        finds more than one): those items are read again (``items``)."""
        partial = [
            r.subject
            for r in docs
            if (m := r.marker) is not None
            and m.value is not None
            and len(indexing.entries(m.value, m.index)) > 1
        ]
        if not partial:
            return docs
        full = self.items(partial, light=True)
        return [full.get(r.subject) or r for r in docs]

    def _listing(
        self,
        prefix: tuple[str, ...],
        filter_: dict[str, Any] | None,
        offset: int,
        limit: int,
        *,
        skip: set[str] | frozenset[str] = frozenset(),
    ) -> list[Record] | None:
        """The page of the live items under ``prefix`` passing ``filter_``, newest
        first (ties by subject), the order and the cut made in SQL
        (``Memory.newest_rows``): the rows read are the page's, plus
        those the filter rejects or ``skip`` names before the page fills. Read as
        the items' documents alone. None when this cannot answer exactly (the
        read log is on and must log a ``facts`` read; the prefix has no index range;
        a row is not a document: an item written in the old layout), and the
        caller reads every item under the prefix."""
        if self.memory.read_log:
            return None
        if limit <= 0:
            return []
        subject_prefix = keys.namespace_prefix(prefix)
        if not filter_ and not skip:
            rows = self._newest(subject_prefix, limit, offset)
            return None if rows is None else _documents(rows)
        out: list[Record] = []
        to_skip = offset
        # without a filter one read holds the page (at most the skipped rows come first)
        at = 0
        size = (
            offset + limit + len(skip)
            if not filter_
            else max(2 * (offset + limit + len(skip)), LIST_CHUNK)
        )
        while True:
            rows = self._newest(subject_prefix, size, at)
            recs = None if rows is None else _documents(rows)
            if rows is None or recs is None:
                return None
            for r in recs:
                if r.subject in skip or not filters.matches(r.value(), filter_):
                    continue
                if to_skip:
                    to_skip -= 1
                    continue
                out.append(r)
                if len(out) == limit:
                    return out
            if len(rows) < size:
                return out
            at += size
            size *= 2

    def _newest(self, subject_prefix: str, limit: int, offset: int) -> list[FactRow] | None:
        return self.memory.newest_rows(
            subject_prefix,
            (keys.DOC, keys.MARKER),
            limit=limit,
            offset=offset,
            valid_at=from_us(self.valid_at),
            known_at=opt_dt(self.known_at),
        )

    def _unmatched_scores(self, query: str, records: list[Record]) -> list[float | None]:
        """The cosine of items no hit reached (LangGraph scores every item it
        reaches); ``None`` with ``score="fused"`` or for an item with no index entry."""
        if self.score == "fused" or not records:
            return [None] * len(records)
        entries = [r.entry_versions() for r in records]
        cos = scoring.cosines(self.memory, query, [v for vs in entries for v in vs], self.held)
        return [scoring.best(cos, vs) for vs in entries]

    def _hits_page(
        self, op: SearchOp
    ) -> tuple[list[SearchItem], list[Record]] | dict[str, float] | None:
        """The page from the query's hits alone, loading only the items they name.
        When the hits cannot fill it (every item under the prefix is then needed, for
        the unmatched ones that follow the matched): all the hits' scores, or ``None``
        past ``MAX_POOL`` hits."""
        assert op.query is not None
        end = op.offset + op.limit
        k = max(end, 1) * SEARCH_POOL
        while k <= MAX_POOL:
            n_hits, best = self._best_per_item(op, k)
            if n_hits < k and len(best) < end:
                return best  # every hit there is names fewer items than the page holds
            ranked, records = self._ranked_hits(op, best, end)
            if len(ranked) >= end:
                page = [(records[s], best[s]) for s in ranked[op.offset : end]]
                return [to_search_item(r, sc) for r, sc in page if r], [r for r, _ in page if r]
            if n_hits < k:
                return best  # exhausted: the page needs unmatched items too
            k *= 4
        return None

    def _ranked_hits(
        self, op: SearchOp, best: dict[str, float], end: int
    ) -> tuple[list[str], dict[str, Record | None]]:
        """The hit items that are live and pass the filter, best first (``_ranked``),
        as far as the first ``end`` of them, and the records resolved on the way:
        the ``end`` best hits first (most pages hold them all), then, if some of
        them fell out, every other hit at once (one more read at most). Only the
        records resolved have their documents decoded."""
        order = self._ranked(best, best)
        records: dict[str, Record | None] = {}
        ranked: list[str] = []
        for chunk in (order[:end], order[end:]):
            if len(ranked) >= end or not chunk:
                break
            found = self._hit_records(chunk)
            records.update(found)
            ranked += [
                s
                for s in chunk
                if (r := found[s]) is not None
                and (not op.filter or filters.matches(r.value(), op.filter))
            ]
        return ranked, records

    def _hit_records(self, subjects: Iterable[str]) -> dict[str, Record | None]:
        """The records of hit items: from the document version the search returned
        when that is the whole item (no TTL to refresh, which re-puts every fact of
        the item), else read (``items``)."""
        found: dict[str, Record | None] = {}
        rest: list[str] = []
        docs, parse, decode = self.hit_docs, keys.parse_subject, Marker.decode
        for s in subjects:
            doc = docs.get(s)
            if doc is not None and is_doc(doc.predicate, doc.object):
                parsed = parse(s)
                if parsed is not None:
                    m = decode(doc.object)
                    if m.value is not None and m.ttl is None:
                        # the record with its document decoded (``Record.marker``)
                        found[s] = Record(s, parsed[0], parsed[1], doc, _decoded=(doc, m))
                        continue
            rest.append(s)
        if rest:
            found.update(self.items(rest, light=True))
        return found

    def _scores(self, op: SearchOp, wanted: set[str], end: int) -> dict[str, float]:
        """Best hit score per item subject, widening the search until the page is full."""
        assert op.query is not None
        k = max(end, 1) * SEARCH_POOL
        while True:
            n_hits, scored = self._best_per_item(op, k)
            best = {s: v for s, v in scored.items() if s in wanted}
            if n_hits < k or len(best) >= min(end, len(wanted)):
                return best
            k *= 4

    def _best_per_item(self, op: SearchOp, k: int) -> tuple[int, dict[str, float]]:
        """Core search over the prefix: the number of hits, and each item's best
        score. Through ``Memory.search_scored`` (the same hits, as rows and scores
        alone) where core can answer so, else ``Memory.search``."""
        assert op.query is not None
        lean = self.memory.search_scored(
            op.query,
            k=k,
            subject_prefix=keys.namespace_prefix(op.namespace_prefix),
            exact=True,
            states=scoring.searched_states(self.score),
            **self._times(),
        )
        self.held = None if lean is None else lean.held
        if lean is not None:
            return self._best_of_rows(op.query, lean)
        hits = self.memory.search(
            op.query,
            k=k,
            subject_prefix=keys.namespace_prefix(op.namespace_prefix),
            exact=True,
            states=scoring.searched_states(self.score),
            **self._times(),
        )
        # an item's best over the versions hit: with score="fused" its stale versions
        # lift it (scoring.searched_states, staleness.lift_records' rule)
        best: dict[str, float] = {}
        entries: dict[str, list[str]] = {}
        cos: dict[str, float] = {}
        docs = self.hit_docs
        leg_cosine, rounded = scoring.leg_cosine, scoring.rounded
        doc, index_prefix, live = keys.DOC, keys.INDEX_PREFIX, State.LIVE
        for h in hits:
            f = h.fact
            if f is None:
                continue
            predicate = f.predicate
            if predicate == doc:
                if f.state is live and is_doc(predicate, f.object):
                    docs[f.subject] = f
            elif not predicate.startswith(index_prefix):
                continue
            subject, vid = f.subject, f.version_id
            if subject in entries:
                entries[subject].append(vid)
                if h.score > best[subject]:
                    best[subject] = h.score
            else:  # an item's first hit (every item's first, then, sets its best)
                entries[subject] = [vid]
                best[subject] = h.score
            ex = h.explain
            known = ex.get("cosine")
            if known.__class__ is float:  # within a prefix: ``leg_cosine`` without its calls
                cos[vid] = rounded(known)
            else:
                known = leg_cosine(ex)
                if known is not None:
                    cos[vid] = known
        self.fused.update(best)
        if self.score == "fused":
            return len(hits), best
        # LangGraph's meaning: the best cosine of the query to the item's entries
        return len(hits), self._entry_cosines(op.query, entries, cos)

    def _best_of_rows(self, query: str, hits: list[ScoredRow]) -> tuple[int, dict[str, float]]:
        """``_best_per_item`` over ``Memory.search_scored``'s rows: the same rule
        (each hit carries its cosine, when its version has a vector), the cosines
        rounded together once the hits are read (``scoring.rounded_all``: no call
        per hit)."""
        best: dict[str, float] = {}
        entries: dict[str, list[str]] = {}
        cos: dict[str, float] = {}  # each hit's cosine, by version (not yet rounded)
        # each item's first hit's cosine: every item's score when each has one hit
        # and every hit its cosine (``_entry_cosines``' answer then, in its order)
        first: dict[str, float] = {}
        alone = True  # so far every item has one hit, each with its cosine
        docs = self.hit_docs
        doc, index_prefix, live = keys.DOC, keys.INDEX_PREFIX, State.LIVE
        for row, state, score, cosine in hits:
            predicate = row.predicate
            if predicate == doc:
                if state is live:  # (whether it is a document: ``_hit_records`` asks)
                    docs[row.subject] = row
            elif not predicate.startswith(index_prefix):
                continue
            subject, vid = row.subject, row.version_id
            if subject in entries:
                entries[subject].append(vid)
                alone = False
                if score > best[subject]:
                    best[subject] = score
            else:  # an item's first hit sets its best
                entries[subject] = [vid]
                best[subject] = score
            if cosine is not None:
                first[subject] = cos[vid] = cosine
            else:
                alone = False
        self.fused.update(best)
        if self.score == "fused":
            return len(hits), best
        rounded = scoring.rounded_all
        if alone:
            return len(hits), dict(zip(first, rounded(first.values()), strict=True))
        cos = dict(zip(cos, rounded(cos.values()), strict=True))
        return len(hits), self._entry_cosines(query, entries, cos)

    def _entry_cosines(
        self, query: str, entries: dict[str, list[str]], cos: dict[str, float]
    ) -> dict[str, float]:
        """LangGraph's meaning of a hit item's score: the best cosine of the query
        to the item's entries (``cos``: those known; the rest computed)."""
        missing = [v for vs in entries.values() for v in vs if v not in cos]
        if missing:
            cos.update(scoring.cosines(self.memory, query, missing, self.held))
        return {
            s: cos.get(vs[0], 0.0)
            if len(vs) == 1
            else max((cos[v] for v in vs if v in cos), default=0.0)
            for s, vs in entries.items()
        }
