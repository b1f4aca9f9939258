"""A search bounded by a subject prefix that holds few rows runs within them
(``chronomem.retrieval.within``, issue #19). It must find what the tenant-wide
search finds under the same prefix and filters: the same facts from the vector
and entity-graph legs (their scores are computed the same way, over the same
rows), only facts under the prefix that are live at the search's instants, and
nothing from a sibling scope. ``within.ROW_CAP = 0`` forces the tenant-wide path
for the comparison."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import EndOp, Memory, SearchFailed, State, reads
from chronomem.retrieval import within
from chronomem.retrieval.legs import TimeFilter
from chronomem.retrieval.search import search as run_search

from .conftest import ManualClock

counter = itertools.count()
WORDS = ["tea", "coffee", "paris", "berlin", "study", "studies", "botany", "visited", "chess"]
SUBJECTS = ["ns.a.x", "ns.a.y", "ns.ab.z", "ns.b.w", "other"]

facts = st.lists(
    st.tuples(
        st.sampled_from(SUBJECTS),
        st.sampled_from(["likes", "lives_in", "studies"]),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
        st.sampled_from(["keep", "end", "retract"]),
    ),
    min_size=1,
    max_size=14,
)
queries = st.lists(st.sampled_from([*WORDS, "ns.a.x", "what", "does"]), min_size=1, max_size=4)


def _put(m: Memory, subject: str, predicate: str, obj: str) -> str:
    return m.apply([m.assertion(subject, predicate, obj, exact=True)]).fact_ids[0]


def _end(m: Memory, subject: str, predicate: str, obj: str) -> None:
    m.apply([EndOp(subject, predicate, obj, None, exact=True)])


def _run(m: Memory, query: str, prefix: str, legs: list[str] | None, **kw: object) -> list[str]:
    hits = run_search(
        m._engine, m.scope, query, k=50, subject_prefix=prefix, exact=True, legs_enabled=legs, **kw
    )
    return [h.fact.version_id for h in hits if h.fact is not None]


def _both(
    m: Memory, monkeypatch: pytest.MonkeyPatch, query: str, prefix: str, legs: list[str] | None
) -> tuple[list[str], list[str]]:
    bounded = _run(m, query, prefix, legs)
    with monkeypatch.context() as patch:
        patch.setattr(within, "ROW_CAP", 0)
        wide = _run(m, query, prefix, legs)
    return bounded, wide


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=facts, words=queries, prefix=st.sampled_from(["ns.", "ns.a.", "ns.a.x", "ns.b"]))
def test_within_finds_what_the_tenant_wide_search_finds(
    memory: Memory,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    spec: list[tuple[str, str, str, str]],
    words: list[str],
    prefix: str,
) -> None:
    m = memory.scoped(tenant=f"w{next(counter)}")
    for subject, predicate, obj, then in spec:
        fid = _put(m, subject, predicate, obj)
        clock.advance(seconds=1)
        if then == "end":
            _end(m, subject, predicate, obj)
        elif then == "retract":
            m.retract(fid)
        clock.advance(seconds=1)
    query = " ".join(words)
    live = {
        f.version_id for f in m.facts(subject_prefix=prefix) if f.subject_key.startswith(prefix)
    }
    for legs in (["fact_vector"], ["entity_graph"]):
        bounded, wide = _both(m, monkeypatch, query, prefix, legs)
        # the same scores over the same rows: the same facts, in the same order
        assert bounded == wide, legs
    bounded, wide = _both(m, monkeypatch, query, prefix, None)
    assert set(bounded) <= live
    assert set(wide) <= live
    vector_only, _ = _both(m, monkeypatch, query, prefix, ["fact_vector"])
    assert set(vector_only) <= set(bounded)


def test_within_reads_at_the_searchs_instants(memory: Memory, clock: ManualClock) -> None:
    m = memory.scoped(tenant=f"w{next(counter)}")
    _put(m, "ns.a", "likes", "green tea")
    clock.advance(seconds=10)
    then = clock()
    clock.advance(seconds=10)
    _put(m, "ns.a", "likes", "black tea")
    _end(m, "ns.a", "likes", "green tea")
    clock.advance(seconds=10)
    now = {h.fact.object for h in m.search("tea", subject_prefix="ns.") if h.fact}
    past = {h.fact.object for h in m.search("tea", subject_prefix="ns.", as_of=then) if h.fact}
    assert now == {"black tea"}
    assert past == {"green tea"}
    belief = m.search("tea", subject_prefix="ns.", known_at=then, valid_at=clock())
    assert {h.fact.object for h in belief if h.fact} == {"green tea"}
    assert m.search("tea", subject_prefix="ns.", valid_at=then - timedelta(days=1)) == []


def test_within_keeps_to_the_scope(url: str | None, clock: ManualClock) -> None:
    with Memory(url, clock=clock) as base:
        mine, theirs = base.scoped(user="me"), base.scoped(user="them")
        _put(mine, "doc.1", "says", "chess openings")
        _put(theirs, "doc.2", "says", "chess endgames")
        _put(base, "doc.3", "says", "chess history")
        got = {h.fact.object for h in mine.search("chess", subject_prefix="doc.") if h.fact}
        assert got == {"chess openings", "chess history"}
        got = {h.fact.object for h in base.search("chess", subject_prefix="doc.") if h.fact}
        assert got == {"chess history"}


def test_a_large_prefix_goes_tenant_wide(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    m = memory.scoped(tenant=f"w{next(counter)}")
    m.apply([m.assertion(f"big.{i}", "says", f"word{i} chess", exact=True) for i in range(6)])
    calls: list[str] = []
    real = within.prefix_rows

    def spy(*args: object, **kw: object) -> object:
        out = real(*args, **kw)  # type: ignore[arg-type]
        calls.append("within" if out is not None else "wide")
        return out

    monkeypatch.setattr(within, "prefix_rows", spy)
    monkeypatch.setattr(within, "ROW_CAP", 5)
    assert len(m.search("chess", subject_prefix="big.", k=10)) == 6
    monkeypatch.setattr(within, "ROW_CAP", 6)
    assert len(m.search("chess", subject_prefix="big.", k=10)) == 6
    assert calls == ["wide", "within"]
    # a prefix the index cannot bound, retracted versions, episodes: tenant-wide
    assert reads.subject_range("big\\") is None
    assert not within.applies("big\\", TimeFilter(0, None, frozenset()), set())


def test_a_failing_leg_within_is_reported(memory: Memory) -> None:
    m = memory.scoped(tenant=f"w{next(counter)}")
    _put(m, "ns.d", "speaks", "Portuguese")
    r = m._retrieval

    def boom() -> None:
        raise RuntimeError("leg down")

    r.fail["fact_vector"] = boom
    try:
        res = m.search("portuguese", subject_prefix="ns.")
        assert res.degraded and set(res.failed_legs) == {"fact_vector"}
        assert [h.fact.object for h in res if h.fact] == ["Portuguese"]
        for leg in ("fact_lexical", "entity_graph"):
            r.fail[leg] = boom
        with pytest.raises(SearchFailed):
            m.search("portuguese", subject_prefix="ns.")
    finally:
        r.fail.clear()


def test_light_stem_joins_plurals_and_tenses() -> None:
    stem = within.light_stem
    assert stem("studies") == stem("study") == "study"
    assert stem("visited") == stem("visits") == "visit"
    assert stem("boxes") == "box"
    assert stem("chess") == "chess"
    assert stem("is") == "is"


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=facts, words=queries, prefix=st.sampled_from(["ns.", "ns.a.", "ns.b"]))
def test_held_rows_give_the_facts_a_full_read_gives(
    memory: Memory,
    clock: ManualClock,
    spec: list[tuple[str, str, str, str]],
    words: list[str],
    prefix: str,
) -> None:
    """Rows held by earlier searches (``HeldRows``: a version's unchanging columns)
    completed with the closing columns read now give the facts a search reading
    whole rows gives: ids, states, belief intervals, close reasons, sources, scores,
    in the present and as believed at each earlier step, ended and retracted
    versions included, after the versions held were closed."""
    clock.tick = timedelta(0)
    m = memory.scoped(tenant=f"w{next(counter)}")
    held = m._retrieval.mirrors.held
    # every object's words: the versions closed after they were held are hits
    query = " ".join(dict.fromkeys([*words, *(w for _, _, o, _ in spec for w in o.split())]))
    steps = []

    def searches() -> list[list[tuple[object, float]]]:
        out = []
        for known in [None, *steps]:
            for states in (None, ["live", "ended"]):
                hits = m.search(
                    query, k=50, subject_prefix=prefix, exact=True, known_at=known, states=states
                )
                out.append([(h.fact, h.score) for h in hits])
        return out

    put: list[tuple[str, str, str, str]] = []
    for subject, predicate, obj, then in spec:
        searches()  # hold what is there now
        put.append((_put(m, subject, predicate, obj), subject, predicate, obj))
        clock.advance(seconds=1)
        # close the previous step's fact: a version held while it was current
        fid, *slot = put[-2] if len(put) > 1 else put[-1]
        if then == "end":
            _end(m, *slot)
        elif then == "retract":
            m.retract(fid)
        clock.advance(seconds=1)
        steps.append(clock())
        clock.advance(seconds=1)
        warm = searches()
        held.clear()
        assert warm == searches()


def test_within_facts_equal_what_reads_to_fact_builds(memory: Memory, clock: ManualClock) -> None:
    """``within.to_fact`` (fixed fields kept on the row, the instance filled in
    directly) gives the ``Fact`` ``reads.to_fact`` gives, field for field: live,
    ended and replaced versions, metadata, sources, a user scope, a bounded
    validity; and twice over one row (its kept fields, each fact its own dicts)."""
    import dataclasses

    from chronomem.model import Fact, State
    from chronomem.timeutil import to_us

    assert not hasattr(Fact, "__slots__") and not hasattr(Fact, "__post_init__")
    m = memory.scoped(tenant=f"w{next(counter)}", user="u1")
    until = clock() + timedelta(days=365)
    m.apply([m.assertion("ns.a", "likes", "tea", metadata={"k": [1, "x"]}, exact=True)])
    m.apply([m.assertion("ns.b", "lives_in", "paris", valid_to=until, exact=True)])
    ep = m.add_episode("a note on botany", role="user")
    m.apply([m.assertion("ns.c", "studies", "botany", source=ep, exact=True)])
    clock.advance(seconds=5)
    m.apply([m.assertion("ns.b", "lives_in", "berlin", exact=True, cardinality="one")])
    _end(m, "ns.a", "likes", "tea")
    clock.advance(seconds=5)
    valid_at = to_us(clock())
    tf = TimeFilter(valid_at, None, frozenset({State.LIVE, State.ENDED}))
    engine = m._engine
    with engine.backend.read() as conn:
        kw = {"valid_at": valid_at, "known_at": None, "states": tf.states, "subject_prefix": "ns."}
        rows = reads.facts_query(m.scope, with_text=True, **kw).run(conn)
        src = reads.sources_of(conn, m.scope.tenant, (r["fact_id"] for r in rows))
    assert len(rows) >= 4 and any(src.values())
    names = [f.name for f in dataclasses.fields(Fact)]
    for row in rows:
        want = reads.to_fact(row, valid_at, src.get(row["fact_id"], ()))
        for _ in range(2):
            got = within.to_fact(row, valid_at, src.get(row["fact_id"], ()))
            assert got == want and sorted(vars(got)) == sorted(names)
            assert got.scope is not want.scope and got.metadata is not want.metadata
    assert {f.state for f in (within.to_fact(r, valid_at, ()) for r in rows)} == {
        State.LIVE,
        State.ENDED,
    }


def _bm25(rows: list[dict[str, object]], terms: list[str], n: int) -> list[tuple[str, float]]:
    """BM25 as ``within.lexical`` computed it before its postings: every row scored."""
    import math

    wanted = list(dict.fromkeys(within.light_stem(t) for t in terms))
    docs = [(r, *within._terms(str(r["index_text"]))) for r in rows]
    docs = [d for d in docs if d[2]]
    if not wanted or not docs:
        return []
    avg = sum(length for _, _, length in docs) / len(docs)
    idf = {}
    for t in wanted:
        df = sum(1 for _, tf, _ in docs if t in tf)
        idf[t] = max(1e-6, math.log((len(docs) - df + 0.5) / (df + 0.5)))
    scored = []
    for row, tf, length in docs:
        norm = within.BM25_K1 * (1.0 - within.BM25_B + within.BM25_B * length / avg)
        score = sum(
            idf[t] * tf[t] * (within.BM25_K1 + 1.0) / (tf[t] + norm) for t in wanted if t in tf
        )
        if score > 0:
            scored.append((score, str(row["content_hash"]), str(row["id"])))
    scored.sort(key=lambda x: (-x[0], x[1], x[2]))
    return [(i, s) for s, _, i in scored[:n]]


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.lists(st.sampled_from([*WORDS, ""]), max_size=5).map(" ".join), max_size=12),
    terms=st.lists(st.sampled_from([*WORDS, "nothing"]), max_size=4),
    n=st.integers(1, 8),
)
def test_lexical_with_postings_scores_what_scoring_every_row_scores(
    texts: list[str], terms: list[str], n: int
) -> None:
    """The lexicon's postings score only the rows holding a query term: the same
    ranking, scores and ties as scoring every row (``_bm25``), from one ``Rows``
    searched again and from the module function."""
    rows = [
        {"id": f"v{i}", "content_hash": f"h{i % 3}", "index_text": t} for i, t in enumerate(texts)
    ]
    want = _bm25(rows, terms, n)
    view = within.Rows(rows)
    assert view.lexical(terms, n) == want
    assert view.lexical(terms, n) == want
    assert within.lexical(rows, terms, n) == want


KEYS = ["tea", "paris", "green tea", "tea house", "lg:ns.a..k0", '{"v": 1}', "?!", "acme"]


@given(
    keys=st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from([*KEYS, None])), max_size=8),
    query=st.lists(
        st.sampled_from([*KEYS, "Tea", "house", "the", "Acme Inc", "lg:ns.a..k0", "{"]),
        max_size=5,
    ).map(" ".join),
    n=st.integers(1, 8),
)
def test_a_query_naming_no_entitys_first_word_walks_as_the_whole_walk(
    keys: list[tuple[str, str | None]], query: str, n: int
) -> None:
    """``Rows.graph`` answers a query none of whose words starts an entity key
    without building its n-grams (``first_words``): the same ranking as the walk
    over every n-gram (``graph``), from one ``Rows`` searched again."""
    rows = [
        {"id": f"v{i}", "content_hash": f"h{i % 3}", "subject_key": s, "object_key": o}
        for i, (s, o) in enumerate(keys)
    ]
    want = within.graph(rows, query, n)
    view = within.Rows(rows)
    assert view.graph(query, n) == want
    assert view.graph(query, n) == want


def test_a_namespace_searched_again_derives_nothing_again(
    memory: Memory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lexicon, entity index and vector matrix of a prefix's rows are built
    once while its rows stay the same (``HeldRows.view``), again after a write to
    it, and with nothing held; the hits are those a cold search gives."""
    m = memory.scoped(tenant=f"w{next(counter)}")
    for i, w in enumerate(WORDS):
        _put(m, f"ns.{i}", "likes", f"{w} {WORDS[(i + 3) % len(WORDS)]}")
    clock.advance(seconds=10)
    clock.tick = timedelta(0)  # the searches at one instant (recency alike)
    built: list[str] = []
    for name in ("lexicon", "entities", "vector_matrix"):
        real = getattr(within, name)
        monkeypatch.setattr(within, name, lambda *a, _r=real, _n=name: built.append(_n) or _r(*a))

    def hits(q: str) -> list[tuple[str, float]]:
        return [(h.fact.version_id, h.score) for h in m.search(q, k=5, subject_prefix="ns.")]

    first = hits("tea paris")
    assert sorted(built) == ["entities", "lexicon", "vector_matrix"]
    assert hits("tea paris") == first and hits("chess") and len(built) == 3
    _put(m, "ns.new", "likes", "tea tea")
    clock.advance(seconds=10)
    after = hits("tea paris")
    assert len(built) == 6 and hits("chess") and len(built) == 6  # the rows changed: once
    m._retrieval.mirrors.held.clear()
    assert hits("tea paris") == after and len(built) == 9


def test_held_views_are_bounded_by_the_rows_they_were_derived_from() -> None:
    """``HeldRows.view`` derives once per closing read's values, keeps views of at
    most ``cap`` rows in all (dropping every view when a new one would pass it),
    and drops them with the rows (``clear``)."""
    from chronomem.retrieval.cache import HeldRows

    held = HeldRows(cap=6)
    cols = ("id", "superseded_at")
    rows = [{"id": f"v{i}", "superseded_at": None, "text": f"t{i}"} for i in range(6)]
    held.hold("t", cols, rows[:3])
    derived: list[int] = []

    def derive(got: list[dict[str, object]]) -> list[str]:
        derived.append(len(got))
        return [str(r["text"]) for r in got]

    open_ = [(r["id"], None) for r in rows]
    assert held.view("t", cols, open_[:3], derive) == ["t0", "t1", "t2"]
    assert held.view("t", cols, open_[:3], derive) == ["t0", "t1", "t2"] and derived == [3]
    assert held.view("t", cols, open_[:4], derive) is None  # v3 is not held
    closed = [("v0", 5), *open_[1:3]]  # v0 closed since: its own row, derived again
    assert held.view("t", cols, closed, derive) == ["t0", "t1", "t2"] and derived == [3, 3]
    assert held.view("t", cols, closed[:1], derive) and derived == [3, 3, 1]  # 7 rows > 6
    assert held.view("t", cols, open_[:3], derive) and derived == [3, 3, 1, 3]  # dropped
    held.clear()
    assert held.view("t", cols, open_[:1], derive) is None


@pytest.mark.parametrize("known", [False, True])
@pytest.mark.parametrize("states", [frozenset({State.LIVE}), frozenset(State) - {State.RETRACTED}])
def test_a_closing_read_returns_the_drivers_rows(
    memory: Memory, known: bool, states: frozenset[State]
) -> None:
    """The closing read a held namespace runs on every search selects the closing
    columns alone, none the dialect post-processes, so ``Prepared.rows`` returns
    the driver's rows without copying each one (it read ``_r`` too, a boolean:
    every row of a namespace was copied to convert it, and it is always false
    for the states a search within a prefix reads)."""
    scope = memory.scoped(tenant="closing").scope
    q = reads.facts_query(
        scope,
        valid_at=1,
        known_at=1 if known else None,
        states=states,
        subject_prefix="ns.",
        limit=10,
        closing_only=True,
    )
    assert q.columns == reads.CLOSING_COLUMNS
    prepared = reads._facts_prepared(q.shape)
    compiled = prepared._compile(memory.backend.engine.dialect, type(memory.backend))
    assert compiled.results == ()


def test_a_closing_read_takes_no_retracted_state(memory: Memory) -> None:
    """A retracted version is found by another predicate than ``temporal``'s
    valid-time one (``reads.retracted``), which a closing read does not carry."""
    with pytest.raises(ValueError):
        reads.facts_query(
            memory.scope,
            valid_at=1,
            known_at=None,
            states=frozenset({State.LIVE, State.RETRACTED}),
            subject_prefix="ns.",
            closing_only=True,
        )
