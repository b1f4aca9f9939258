"""``ChronomemStorage.search``'s fill (``crewai_chronomem.ranking``) reads what the
page still needs (issue #32): when the vector leg runs out of hits, the other
current records follow scored 0, newest version first, read a page at a time with
``Memory.newest_facts``. Checked against the unbounded fill it replaces (every
current record read, sorted, then filtered and cut) over random record sets, and
counted in statements (every one, the driver's own on SQLite) and fact rows at two
store sizes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from crewai.memory.types import MemoryRecord
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Fact, State, reads
from chronomem.retrieval import lift_records
from chronomem_adapters.conformance import KitClock
from crewai_chronomem import ChronomemStorage, paths
from crewai_chronomem.bridge import QUERY
from crewai_chronomem.conformance import kit_embedder
from crewai_chronomem.storage import PREDICATE, to_record

from ..langchain.tracing import tracing


def reference_search(
    storage: ChronomemStorage,
    query: list[float],
    scope_prefix: str | None = None,
    categories: list[str] | None = None,
    metadata_filter: dict[str, Any] | None = None,
    limit: int = 10,
    min_score: float = 0.0,
) -> list[tuple[MemoryRecord, float]]:
    """The search as it was before the bounded fill: the vector leg's records, then
    every current record it missed (all of them read), newest version first (valid
    from, then recorded at, descending; ties by record id), scored 0; filtered, cut."""
    n, k = limit, limit * 5 + 50
    time = storage._time
    with storage._bridge.query(query):
        hits = storage.chronomem.search(
            QUERY, k=k, predicates=[PREDICATE], exact=True, states=[State.LIVE, State.ENDED],
            valid_at=time.valid_at, known_at=time.known_at, as_of=time.as_of,
        )  # fmt: skip
    live: dict[str, Fact] = {}
    scored: list[tuple[str, float, bool]] = []
    for hit in hits:
        f = hit.fact
        if f is None or f.predicate != PREDICATE:
            continue
        leg = (hit.explain or {}).get("legs", {}).get("fact_vector") or {}
        scored.append((f.subject, float(leg.get("score", 0.0)), f.state is State.ENDED))
        if f.state is State.LIVE:
            live[f.subject] = f
    ranked = lift_records(scored)
    missing = [rid for rid in ranked if rid not in live]
    if missing:
        live.update((f.subject, f) for f in storage._current(ids=missing))
    scores = {rid: max(0.0, min(1.0, rs.score)) for rid, rs in ranked.items()}
    if len(hits) < k and min_score <= 0.0:
        rest = [f for f in storage._current() if f.subject not in live]
        rest.sort(key=lambda f: f.subject)
        rest.sort(key=lambda f: (f.valid_from, f.recorded_at), reverse=True)
        live.update((f.subject, f) for f in rest)
        scores.update((f.subject, 0.0) for f in rest)
    out = []
    for rid, score in scores.items():
        fact = live.get(rid)
        if fact is None or score < min_score:
            continue
        r = to_record(fact)
        if scope_prefix is not None and not paths.within(r.scope, scope_prefix):
            continue
        if categories and not set(categories) & set(r.categories):
            continue
        if metadata_filter and any(r.metadata.get(k) != v for k, v in metadata_filter.items()):
            continue
        out.append((r, score))
    out.sort(key=lambda p: -p[1])
    return out[:n]


def rec(rid: str, content: str, scope: str = "/", categories: tuple[str, ...] = ()) -> MemoryRecord:
    return MemoryRecord(
        id=rid, content=content, scope=scope, categories=list(categories),
        metadata={"tag": content[:1]}, embedding=kit_embedder([content])[0],
    )  # fmt: skip


# texts near the queries and far from them (the hashing embedder: many are at cosine <= 0)
TEXTS = ["dana loves ramen", "ramen", "zzz qqq", "kkk", "bbb", "farmer", "tea in paris", "qqq"]
QUERIES = ["ramen dana", "What's my occupation?", "paris tea"]
IDS = [f"r{i}" for i in range(12)]
SCOPES = ["/", "/a", "/a/b", "/c"]
CATS = ["x", "y"]

record_ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("save"),
            st.lists(
                st.tuples(
                    st.sampled_from(IDS),
                    st.sampled_from(TEXTS),
                    st.sampled_from(SCOPES),
                    st.lists(st.sampled_from(CATS), max_size=2, unique=True),
                ),
                min_size=1,
                max_size=4,
                unique_by=lambda t: t[0],
            ),
        ),
        st.tuples(st.just("end"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2)),
        st.tuples(st.just("delete"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2)),
        st.tuples(st.just("tick"), st.integers(0, 2)),
    ),
    min_size=1,
    max_size=14,
)
searches = st.lists(
    st.tuples(
        st.sampled_from(QUERIES),
        st.integers(1, 8),
        st.sampled_from([None, "/a", "/c", "/a/b"]),
        st.sampled_from([None, ["x"], ["y", "x"]]),
        st.sampled_from([None, {"tag": "k"}, {"tag": "z"}]),
        st.sampled_from([0.0, -1.0, 0.05]),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_ops, searches, st.booleans())
def test_the_bounded_fill_returns_what_the_unbounded_fill_did(
    steps: list[tuple[str, Any]], asked: list[tuple[Any, ...]], past: bool
) -> None:
    clock = KitClock(datetime(2026, 1, 1, tzinfo=timezone.utc), timedelta(0))
    storage = ChronomemStorage(embedder=kit_embedder, clock=clock)
    try:
        marks = []
        for op, arg in steps:
            if op == "save":
                storage.save([rec(rid, text, scope, tuple(cats)) for rid, text, scope, cats in arg])
            elif op == "end":
                storage.end(arg)
            elif op == "delete":
                storage.delete(record_ids=arg)
            else:
                clock.advance(seconds=arg)
            marks.append(clock.mark())
        view = storage.as_of(marks[len(marks) // 2]) if past else storage
        for text, limit, scope, cats, meta, min_score in asked:
            q = kit_embedder([text])[0]
            args = (q, scope, cats, meta, limit, min_score)
            got = view.search(*args)
            assert [(r.id, r.content, r.scope, s) for r, s in got] == [
                (r.id, r.content, r.scope, s) for r, s in reference_search(view, *args)
            ], args
    finally:
        storage.close()


def test_a_record_current_in_an_enclosing_scope_too_is_filled_once(clock: Any) -> None:
    """The same record id saved through a tenant-wide storage and a user's: the
    user's search sees both versions and fills the record once, its newest."""
    root = ChronomemStorage(embedder=kit_embedder, clock=clock)
    try:
        user = root.scoped(user="u")
        root.save([rec("r", "kkk"), rec("s", "bbb")])
        clock.advance(seconds=1)
        user.save([rec("r", "zzz qqq")])
        got = user.search(kit_embedder(["What's my occupation?"])[0], limit=5)
        assert [(r.id, r.content) for r, _ in got] == [("r", "zzz qqq"), ("s", "bbb")]
    finally:
        root.close()


@pytest.fixture
def fact_rows(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many fact rows the reads decode (``reads.to_fact`` calls)."""
    count = [0]
    decode = reads.to_fact

    def counted(*args: Any, **kwargs: Any) -> Fact:
        count[0] += 1
        return decode(*args, **kwargs)

    monkeypatch.setattr(reads, "to_fact", counted)
    yield count


def _fill_cost(url: str | None, clock: Any, n: int, fact_rows: list[int]) -> tuple[Any, int]:
    root = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    storage = root.scoped(tenant=f"t{n}")  # a tenant each: the bigger store is the bigger tenant
    try:
        far = ["zzz qqq", "kkk", "bbb"]  # cosine <= 0 from the question: only the fill
        for start in range(0, n, 200):
            storage.save(
                [rec(f"n{i}", far[i % 3], "/a" if i % 2 else "/c") for i in range(start, n)][:200]
            )
            clock.advance(seconds=1)
        storage.save([rec("near", "dana loves ramen", "/a")])
        clock.advance(seconds=1)
        q = kit_embedder(["ramen dana"])[0]
        storage.search(q, limit=5)  # warm: the registry, the search mirror
        fact_rows[0] = 0
        with tracing(storage.chronomem) as cost:  # SQLite: prepared reads and BEGIN too
            got = storage.search(q, limit=5)
        rows = fact_rows[0]
        assert [r.id for r, _ in got][:1] == ["near"] and len(got) == 5
        assert [s for _, s in got][1:] == [0.0] * 4
        with tracing(storage.chronomem) as scoped:
            assert len(storage.search(q, scope_prefix="/c", limit=5)) == 5
        return (cost.shape, rows, len(scoped.statements)), rows
    finally:
        root.close()


def test_the_fill_reads_the_same_rows_at_50_and_500_records(
    url: str | None, clock: Any, fact_rows: list[int]
) -> None:
    short, rows = _fill_cost(url, clock, 50, fact_rows)
    long, _ = _fill_cost(url, clock, 500, fact_rows)
    assert short == long, (short, long)
    assert rows <= 5 + 1 + 1  # the hit, its page of 4 plus the reached record skipped
