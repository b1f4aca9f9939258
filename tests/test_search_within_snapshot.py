"""A search within a prefix runs its statements in one snapshot without a
SQLAlchemy transaction where it can (``within._Snapshot``: a SQLite point read's
driver-level transaction), and in a read transaction where it cannot (predicates
to resolve, or something that would leave the snapshot: ``within._Outside``).
Both give the same hits, scores and explanations; a write from another
connection is seen by the next search; a search at past instants stays exact.
Also: the time patterns a query names, matched once per query
(``querytime._time_matches``), give the windows the per-call matching gave."""

from __future__ import annotations

import itertools
import unicodedata
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem.retrieval import querytime, within
from chronomem.retrieval.search import search as run_search

from .conftest import ManualClock

counter = itertools.count()
TEXTS = [
    "green tea in the morning",
    "black coffee after lunch",
    "a trip to paris last may",
    "studies botany in berlin",
    "chess openings and endgames",
    "visited the tea garden",
    "green apple pie",
    "coffee beans from kenya",
]
QUERIES = ["green tea", "coffee", "paris trip", "what about chess", "botany", "tea garden 2023"]


def _fill(m: Memory, clock: ManualClock) -> None:
    """Items in three namespaces under ``ns.``, one elsewhere; the clock then stands
    still (searches compared at one instant: recency alike)."""
    for i, text in enumerate(TEXTS):
        m.apply([m.assertion(f"ns.{i % 3}.item{i}", "says", text, exact=True)])
        clock.advance(seconds=1)
    m.apply([m.assertion("else.x", "says", "green tea elsewhere", exact=True)])
    clock.tick = timedelta(0)


def _hits(m: Memory, query: str, **kw: Any) -> list[tuple[Any, ...]]:
    found = run_search(m._engine, m.scope, query, k=5, subject_prefix="ns.", exact=True, **kw)
    return [(h.fact, h.score, h.explain) for h in found]


def _in_transaction(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every within search in a read transaction (the point read refused at once)."""

    def refuse(self: Any, conn: Any) -> None:
        raise within._Outside("test")

    monkeypatch.setattr(within._Snapshot, "__init__", refuse)


def test_the_point_read_and_the_read_transaction_give_the_same_hits(
    memory: Memory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = memory.scoped(tenant=f"s{next(counter)}")
    _fill(m, clock)
    then = clock()
    clock.advance(seconds=5)
    m.apply([m.assertion("ns.0.item0", "says", "oolong tea now", exact=True)])
    cases: list[dict[str, Any]] = [{}, {"known_at": then, "valid_at": then}, {"as_of": then}]
    snapshot = [_hits(m, q, **kw) for q in QUERIES for kw in cases]
    with monkeypatch.context() as patch:
        _in_transaction(patch)
        assert [_hits(m, q, **kw) for q in QUERIES for kw in cases] == snapshot
    assert any(snapshot)


def test_a_registry_reload_leaves_the_point_read_and_embeds_once(
    memory: Memory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry's predicates are read through SQLAlchemy (another connection
    on SQLite): a search that must reload them runs again in a read transaction,
    with the same hits, and the query is embedded once."""
    m = memory.scoped(tenant=f"s{next(counter)}")
    _fill(m, clock)
    want = _hits(m, "green tea")
    engine = m._engine
    engine.registry._cache.clear()  # type: ignore[attr-defined]
    embedder = engine.retrieval.embedder  # type: ignore[union-attr]
    calls = []
    real = embedder.embed

    def counted(texts: Any) -> Any:
        calls.append(list(texts))
        return real(texts)

    monkeypatch.setattr(embedder, "embed", counted)
    outside = []
    real_search = within._search

    def watched(*args: Any) -> Any:
        try:
            return real_search(*args)
        except within._Outside as exc:
            outside.append(str(exc))
            raise

    monkeypatch.setattr(within, "_search", watched)
    assert _hits(m, "green tea") == want
    assert len(calls) == 1
    if m._engine.backend.name == "sqlite":
        assert outside  # the reload asked for a SQLAlchemy connection
    outside.clear()
    assert _hits(m, "green tea") == want  # the registry held: the point read alone
    assert not outside


def test_predicates_to_resolve_run_in_a_read_transaction(
    memory: Memory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = memory.scoped(tenant=f"s{next(counter)}")
    _fill(m, clock)
    exact = _hits(m, "tea", predicates=["says"])
    resolved = run_search(
        m._engine, m.scope, "tea", k=5, subject_prefix="ns.", exact=False, predicates=["says"]
    )
    assert [h.fact for h in resolved] == [f for f, _, _ in exact]
    with monkeypatch.context() as patch:
        _in_transaction(patch)
        assert _hits(m, "tea", predicates=["says"]) == exact


def test_a_write_from_another_connection_is_seen(tmp_path: Path, clock: ManualClock) -> None:
    """Two stores on one SQLite file (two processes' worth of connections): a put
    through one is found by the next search through the other, whose rows and
    derived indexes were held; the earlier instants still give the earlier hits."""
    path = str(tmp_path / "two.db")
    with Memory(path, clock=clock) as a, Memory(path, clock=clock) as b:
        _fill(a, clock)
        before = _hits(b, "walnut tea")
        then = clock()
        clock.advance(seconds=3)
        a.apply([a.assertion("ns.1.new", "says", "walnut tea cake", exact=True)])
        after = _hits(b, "walnut tea")
        assert "walnut tea cake" not in {f.object for f, _, _ in before}
        assert "walnut tea cake" in {f.object for f, _, _ in after}
        assert _hits(b, "walnut tea", known_at=then, valid_at=then) == _hits(
            a, "walnut tea", known_at=then, valid_at=then
        )
        assert [f.version_id for f, _, _ in _hits(b, "walnut tea", as_of=then)] == [
            f.version_id for f, _, _ in before
        ]


# -- the time a query names, matched once per query ------------------------------------


def _reference_window(query: str, now_us: int) -> tuple[int, int] | None:
    """``time_window`` as it matched the query on every call."""
    try:
        now = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=now_us)
    except OverflowError:
        return None
    text = unicodedata.normalize("NFKC", query)
    taken: list[tuple[int, int]] = []
    found: list[tuple[datetime, datetime]] = []
    for kind, rx in querytime._COMPILED:
        for m in rx.finditer(text):
            if any(m.start() < b and a < m.end() for a, b in taken):
                continue
            try:
                w = querytime._window(kind, m.groupdict(), now)
            except (OverflowError, ValueError):
                w = None
            if w is not None and w[0] < w[1]:
                taken.append((m.start(), m.end()))
                found.append(w)
    if not found:
        return None
    return querytime._us(min(a for a, _ in found)), querytime._us(max(b for _, b in found))


PIECES = [
    "in July 2023",
    "last May",
    "yesterday",
    "two weeks ago",
    "on 7 May 2023",
    "May 7, 2023",
    "last week",
    "this month",
    "the past month",
    "last Saturday",
    "in 2023",
    "10 days ago",
    "since March",
    "what",
    "tea",
    "may",
    "9999",
    "in 1",
    "Ｍａｙ 2023",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(st.sampled_from(PIECES), min_size=0, max_size=4),
    now_us=st.one_of(
        st.integers(min_value=0, max_value=4_000_000_000_000_000),
        st.sampled_from([0, 1, 253_402_300_799_999_999, 253_402_300_800_000_000, -1]),
    ),
)
def test_time_matches_once_per_query_give_the_windows_of_matching_each_call(
    pieces: list[str], now_us: int
) -> None:
    query = " ".join(pieces)
    assert querytime.time_window(query, now_us) == _reference_window(query, now_us)


def test_a_tenant_citing_no_episode_reads_no_sources(
    memory: Memory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first statement also says whether any fact of the tenant cites an
    episode: in the point read's snapshot a tenant citing none runs no statement
    for the kept hits' sources (a LangGraph store's never cite: with its clock
    stamp unmoved, ``HeldRows.stamped``, one statement a search, not two). Once a
    fact cites one the sources are read, and every hit carries the sources
    ``facts`` gives it, as in a read transaction."""
    m = memory.scoped(tenant=f"s{next(counter)}")
    _fill(m, clock)
    backend = type(m._engine.backend)
    sqlite = m._engine.backend.name == "sqlite"
    sql: list[str] = []
    if sqlite:
        real = backend.fetch.__func__  # type: ignore[attr-defined]

        def fetch(cls: Any, conn: Any, statement: str, params: Any) -> list[Any]:
            sql.append(statement)
            return real(cls, conn, statement, params)  # type: ignore[no-any-return]

        monkeypatch.setattr(backend, "fetch", classmethod(fetch))

    def searched(query: str) -> list[tuple[Any, ...]]:
        sql.clear()
        return _hits(m, query)

    searched("green tea")  # the rows held
    assert searched("green tea")
    if sqlite:
        assert len(sql) == 1 and not any("cm_sources.fact_id" in s for s in sql), sql
    episode = m.add_episode("we talked about tea")
    clock.advance(seconds=1)
    m.apply([m.assertion("ns.9.cited", "says", "green tea cited", exact=True, source=episode)])
    searched("green tea")  # the new version's row held
    found = searched("green tea")
    if sqlite:
        assert len(sql) == 2, sql
    sources = {
        f.version_id: f.source_episode_ids for f in m.facts(subject_prefix="ns.", exact=True)
    }
    assert any(f.source_episode_ids == (episode.id,) for f, _, _ in found)
    assert all(f.source_episode_ids == sources[f.version_id] for f, _, _ in found)
    with monkeypatch.context() as patch:
        _in_transaction(patch)
        assert _hits(m, "green tea") == found


def test_a_held_namespaces_lean_search_runs_one_statement_outside_a_transaction(
    tmp_path: Path, clock: ManualClock
) -> None:
    """On a SQLite file, ``search_scored`` of a prefix whose view is kept at an
    unmoved clock stamp runs its one statement without a ``BEGIN`` (one
    statement is one snapshot by itself: ``within._OneStatement``); after a
    write from another connection it runs again in a snapshot, ``BEGIN`` first,
    and finds the write, as a store holding nothing finds it."""
    path = str(tmp_path / "one.db")
    with Memory(path, clock=clock) as a, Memory(path, clock=clock) as b:
        _fill(a, clock)
        seen: list[str] = []

        def scored() -> list[tuple[Any, ...]]:
            seen.clear()
            found = b.search_scored("green tea", subject_prefix="ns.", exact=True)
            assert found is not None
            return [(r.version_id, state, score, cos) for r, state, score, cos in found]

        scored()  # the rows held, the read kept at the stamp, a connection kept
        backend = b._engine.backend
        assert len(backend._kept) == 1  # type: ignore[attr-defined]
        backend._kept[0].driver_connection.set_trace_callback(seen.append)  # type: ignore[attr-defined]
        first = scored()
        assert len(seen) == 1 and seen[0].startswith("SELECT"), seen
        a.apply([a.assertion("ns.1.new", "says", "green tea cake", exact=True)])
        after = scored()
        assert seen[0].startswith("SELECT") and seen[1] == "BEGIN DEFERRED", seen
        assert seen[2] == seen[0] and seen[-1] == "ROLLBACK", seen
        assert after != first
        assert scored() == after and len(seen) == 1, seen
        with Memory(path, clock=clock) as c:
            fresh = c.search_scored("green tea", subject_prefix="ns.", exact=True)
            assert fresh is not None
            assert after == [(r.version_id, state, score, cos) for r, state, score, cos in fresh]
