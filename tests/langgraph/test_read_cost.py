"""What a LangGraph ``get`` and a search inside one namespace cost the database
(issue #32), counted, never timed: a ``get`` is one statement, and a search
without a query reads the page's rows (``limit``), not the namespace's or the
store's, with the order and the cut made in SQL. Both backends: on SQLite a
point read goes straight to the driver's cursor (``SqliteBackend.fetch``), past
SQLAlchemy's events, so the driver-level calls are counted too."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from chronomem.backends import Backend
from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock
from ..statements import counting
from .conftest import StoreFactory
from .fakes import CharEmbeddings

NS = ("users", "me", "notes")


@dataclass
class Reads:
    statements: int = 0
    rows: int = 0  # rows the driver-level fetches returned (SQLite point reads)
    sql: list[str] = field(default_factory=list)


@contextmanager
def reads_of(store: ChronomemStore, monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    """The statements a call runs (SQLAlchemy's, plus SQLite's driver-level
    fetches) and the rows every prepared statement returned."""
    out = Reads()
    backend = type(store.memory.backend)
    real = backend.fetch.__func__  # type: ignore[attr-defined]
    sqlite = store.memory.backend.name == "sqlite"

    def fetch(cls: type[Backend], conn: Any, sql: str, params: Any) -> list[Any]:
        rows: list[Any] = real(cls, conn, sql, params)
        out.rows += len(rows)
        if sqlite:  # elsewhere the statement passes SQLAlchemy's events (counted there)
            out.statements += 1
            out.sql.append(sql)
        return rows

    monkeypatch.setattr(backend, "fetch", classmethod(fetch))
    with counting(store.memory) as cost:
        yield out
    out.statements += len(cost.statements)
    out.sql += cost.statements


def _fill(store: ChronomemStore, clock: ManualClock, n: int, others: int) -> None:
    """``n`` items in NS put one by one (distinct instants), ``others`` elsewhere."""
    store.batch([PutOp(("users", f"o{i}", "notes"), f"k{i}", {"i": i}) for i in range(others)])
    for i in range(n):
        clock.advance(seconds=1)
        store.put(NS, f"n{i:03}", {"i": i, "even": i % 2 == 0})


def test_a_get_is_one_statement(
    make_store: StoreFactory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store()
    _fill(store, clock, 30, 100)
    store.get(NS, "n003")  # warm (the registry, compiled statements)
    for key, want in (("n007", {"i": 7, "even": False}), ("missing", None)):
        with reads_of(store, monkeypatch) as r:
            item = store.get(NS, key)
        assert (item.value if item is not None else None) == want
        assert r.statements == 1, r.sql
        assert r.rows == (1 if want is not None else 0)


def test_a_get_through_a_view_and_after_changes_is_still_one_statement(
    make_store: StoreFactory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store()
    store.put(NS, "k", {"v": 1})
    clock.advance(seconds=5)
    then = clock()
    clock.advance(seconds=5)
    store.put(NS, "k", {"v": 2})
    view = store.as_of(then)
    view.get(NS, "k")
    with reads_of(store, monkeypatch) as r:
        old = view.get(NS, "k")
        new = store.get(NS, "k")
    assert old is not None and old.value == {"v": 1}
    assert new is not None and new.value == {"v": 2}
    assert r.statements == 2, r.sql


@pytest.mark.parametrize("size", [20, 200])
def test_a_search_without_query_reads_the_page_not_the_namespace(
    make_store: StoreFactory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    store = make_store()
    _fill(store, clock, size, 50)
    store.search(NS, limit=5)  # warm
    with reads_of(store, monkeypatch) as r:
        page = store.search(NS, limit=5, offset=3)
    assert [i.key for i in page] == [f"n{i:03}" for i in range(size - 4, size - 9, -1)]
    assert r.statements == 1, r.sql
    assert r.rows <= 5  # the page's rows alone, whatever the namespace holds
    with reads_of(store, monkeypatch) as r:
        evens = store.search(NS, filter={"even": True}, limit=4)
    last = size - 1 if (size - 1) % 2 == 0 else size - 2
    assert [i.value["i"] for i in evens] == [last - 2 * j for j in range(4)]
    assert r.rows <= 32  # one read of the first rows (half of them pass the filter)


def test_listing_order_and_pages_match_a_full_sort(
    make_store: StoreFactory, clock: ManualClock
) -> None:
    """Newest first, items put together (one instant) ordered by namespace then
    key; pages concatenate to the whole listing; compared with InMemoryStore's
    contents (its order is insertion order, so as sets)."""
    store = make_store()
    theirs = InMemoryStore()
    ops = [
        PutOp(("p", ns), f"k{j}", {"j": j, "ns": ns}) for ns in ("b", "a", "a-x") for j in (2, 1)
    ]
    for s in (store, theirs):
        s.batch(ops)
    clock.advance(seconds=1)
    for s in (store, theirs):
        s.put(("p", "a"), "late", {"j": 9})
    full = store.search(("p",), limit=100)
    assert full[0].key == "late"
    rest = [(tuple(i.namespace), i.key) for i in full[1:]]
    assert rest == sorted(rest, key=lambda t: "lg:" + "".join(f"{x}." for x in t[0]) + "." + t[1])
    pages = [store.search(("p",), limit=2, offset=o) for o in range(0, 8, 2)]
    assert [i.key for p in pages for i in p] == [i.key for i in full]
    assert sorted((tuple(i.namespace), i.key, str(i.value)) for i in full) == sorted(
        (tuple(i.namespace), i.key, str(i.value)) for i in theirs.search(("p",), limit=100)
    )


def test_a_query_search_pages_matched_items_then_listed_ones(
    make_store: StoreFactory, clock: ManualClock
) -> None:
    """Hits first by score, then the other items newest first, each exactly once,
    whatever the page boundaries."""
    store = make_store()
    for i in range(12):
        clock.advance(seconds=1)
        text = "green apple pie" if i in (2, 5) else f"plain note number {i}"
        store.put(NS, f"k{i:02}", {"text": text})
    full = store.search(NS, query="green apple", limit=50)
    assert {i.key for i in full[:2]} == {"k02", "k05"}
    assert len(full) == 12 and len({i.key for i in full}) == 12
    pages = [store.search(NS, query="green apple", limit=3, offset=o) for o in range(0, 12, 3)]
    assert [i.key for p in pages for i in p] == [i.key for i in full]


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = ["red", "green", "blue", "apple", "pie", "car", "river", "stone", "tea", "map"]
    return [f"{rng.choice(words)} {rng.choice(words)} note {i}" for i in range(n)]


def _indexed(make_store: StoreFactory, **kw: Any) -> ChronomemStore:
    emb = CharEmbeddings()
    return make_store(index={"dims": emb.dims, "embed": emb, "fields": ["text"]}, **kw)


def _found(items: list[Any]) -> list[tuple[str, float | None]]:
    return [(i.key, i.score) for i in items]


def test_a_query_search_costs_what_its_namespace_holds_not_the_store(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search with a query inside one namespace of 100 items: the same statements
    and the same rows read (SQLite: the same virtual machine work, within the
    index's one more level) whether 100 or 2,000 items live elsewhere; and the same
    results. Once the namespace's rows are held (``HeldRows``), the range read
    takes their closing columns alone."""
    shapes = []
    results = []
    for others in (100, 2000):
        store = _indexed(make_store)
        store.batch(
            [
                PutOp(("else", f"n{i % 7}"), f"x{i}", {"text": t})
                for i, t in enumerate(_texts(others, 1))
            ]
        )
        store.batch([PutOp(NS, f"k{i:03}", {"text": t}) for i, t in enumerate(_texts(100, 2))])
        store.search(NS, query="green apple", limit=10)  # warm: rows held, statements compiled
        with reads_of(store, monkeypatch) as r, counting(store.memory) as cost:
            found = store.search(NS, query="blue river", limit=10)
        assert len(found) == 10
        results.append(_found(found))
        sql = [s for s in r.sql if not s.lstrip().upper().startswith(("BEGIN", "COMMIT"))]
        # the range count, the closing read, the registry version, the hits' sources
        assert len(sql) <= 4, sql
        shapes.append((len(sql), r.rows, cost.vm_steps))
    # the same scores in the same order; the same items but for ties (equal
    # scores order by the fused relevance, whose last tiebreak is version ids)
    assert [sc for _, sc in results[0]] == [sc for _, sc in results[1]]
    for a, b in zip(results[0], results[1], strict=True):
        tied = sum(sc == a[1] for _, sc in results[0]) > 1 or a[1] == results[0][-1][1]
        assert tied or a == b
    (n_small, rows_small, vm_small), (n_large, rows_large, vm_large) = shapes
    assert n_small == n_large
    assert rows_small == rows_large and rows_small <= 2 + 100 + 30  # count, rows, sources
    assert vm_large <= vm_small * 1.1 + 100
    if store.memory.backend.name == "sqlite":  # the counting sees the driver-level reads
        # the namespace's rows held at the clock's stamp: the statement reads the
        # clock row alone, the range is not counted again (over 1,000 steps with it)
        assert 0 < vm_small <= 200, vm_small


def test_held_rows_give_what_a_full_read_gives(
    make_store: StoreFactory, clock: ManualClock
) -> None:
    """Random puts, deletes and clock moves in one namespace, searched after each
    step (cosine and fused scores, the present and a view of the past) with the
    rows held from earlier searches, then again with nothing held: the same items,
    scores and order every time."""
    rng = random.Random(11)
    clock.tick = timedelta(0)  # warm and cold searches at one instant (recency alike)
    store = _indexed(make_store)
    fused = ChronomemStore(store.memory, score="fused")
    held = store.memory._retrieval.mirrors.held
    texts = _texts(40, 3)
    store.batch([PutOp(NS, f"k{i:02}", {"text": t}) for i, t in enumerate(texts[:20])])
    start = clock()
    used = 0
    real = type(held).complete

    def spy(self: Any, *a: Any) -> Any:
        nonlocal used
        out = real(self, *a)
        used += out is not None
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(held), "complete", spy)
        for step in range(25):
            clock.advance(seconds=rng.randint(1, 30))
            key = f"k{rng.randrange(25):02}"
            what = rng.random()
            if what < 0.4:
                store.put(NS, key, {"text": rng.choice(texts)})
            elif what < 0.7:
                store.delete(NS, key)
            query = " ".join(rng.choice(texts).split()[:2])
            views = [store, fused, store.as_of(start), fused.as_of(clock())]
            warm = [_found(v.search(NS, query=query, limit=5)) for v in views]
            held.clear()
            cold = [_found(v.search(NS, query=query, limit=5)) for v in views]
            assert warm == cold, step
    assert used > 20  # the held rows answered most searches


def test_a_query_search_decodes_the_pages_documents_only(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hits (30 for a page of 10) are ranked before their records are built:
    with no filter only the page's documents are decoded; with filters that
    reject some of the best, the rest in one more step. The pages are those of
    building every hit's record first and ranking those that pass (as before)."""
    from langgraph.store.chronomem import filters, reading, records

    store = _indexed(make_store)
    texts = _texts(100, 4)
    store.batch([PutOp(NS, f"k{i:03}", {"text": t}) for i, t in enumerate(texts)])
    store.search(NS, query="green apple", limit=10)  # warm
    decoded = 0
    real = records.Marker.decode.__func__  # type: ignore[attr-defined]

    def counted(cls: type[records.Marker], text: str) -> records.Marker:
        nonlocal decoded
        decoded += 1
        return real(cls, text)  # type: ignore[no-any-return]

    with monkeypatch.context() as mp:
        mp.setattr(records.Marker, "decode", classmethod(counted))
        found = store.search(NS, query="blue river", limit=10)
    assert len(found) == 10 and decoded <= 10

    def every_hit(
        self: reading.Reader, op: Any, best: dict[str, float], end: int
    ) -> tuple[list[str], dict[str, Any]]:
        found = self._hit_records(best)
        ok = [
            s
            for s, r in found.items()
            if r is not None and (not op.filter or filters.matches(r.value(), op.filter))
        ]
        return self._ranked(best, ok), found

    top = found[0].value["text"]
    cases = [None, {"text": {"$ne": top}}, {"text": {"$gt": "m"}}, {"text": {"$lt": "g"}}]
    for query in ("blue river", "red apple pie", "tea"):
        for filter_ in cases:
            for limit, offset in ((1, 0), (3, 0), (10, 0), (5, 2)):
                kw = {"query": query, "limit": limit, "offset": offset, "filter": filter_}
                got = _found(store.search(NS, **kw))  # type: ignore[arg-type]
                with monkeypatch.context() as mp:
                    mp.setattr(reading.Reader, "_ranked_hits", every_hit)
                    want = _found(store.search(NS, **kw))  # type: ignore[arg-type]
                assert got == want, (query, filter_, limit, offset)


class _QueryCounting(CharEmbeddings):
    def __init__(self) -> None:
        super().__init__()
        self.queries = 0

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return super().embed_query(text)


@pytest.mark.parametrize("limit", [10, 4])
def test_a_query_search_scores_unmatched_items_from_what_it_holds(
    make_store: StoreFactory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """A query whose hits cannot fill the page: the unmatched items that follow
    (newest first) get their cosine from the vectors and the query's embedding
    the search already holds (``Memory.similarities(held=)``): the query embedded
    once, and no statement beyond the search's and the listing's (the page of the
    unmatched)."""
    emb = _QueryCounting()
    store = make_store(index={"dims": emb.dims, "embed": emb, "fields": ["text"]})
    for i in range(12):
        clock.advance(seconds=1)
        # digits 3-9 share no dimension with the query's letters: no leg reaches
        # them (cosine 0)
        text = "green apple pie" if i in (2, 5, 9) else f"{'3456789'[i // 7]}{'3456789'[i % 7]} 99"
        store.put(NS, f"k{i:02}", {"text": text})
    store.search(NS, query="green apple", limit=limit)  # warm: rows held, statements compiled
    before = emb.queries
    with reads_of(store, monkeypatch) as r:
        found = store.search(NS, query="green apple", limit=limit)
    assert emb.queries - before == 1
    assert {i.key for i in found[:3]} == {"k02", "k05", "k09"}
    assert len(found) == limit
    assert [i.score for i in found[3:]] == [0.0] * (limit - 3)
    assert [i.key for i in found[3:]] == [f"k{i:02}" for i in (11, 10, 8, 7, 6, 4, 3)][: limit - 3]

    def work(sql: list[str]) -> list[str]:
        return [s for s in sql if not s.lstrip().upper().startswith(("BEGIN", "COMMIT"))]

    # the prefix's size, registry and clock stamp (its rows held since), the listing
    assert len(work(r.sql)) == 2, r.sql
