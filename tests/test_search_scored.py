"""``Memory.search_scored`` (``retrieval.within.scored``): a search within a
prefix's rows that returns each kept hit as (``FactRow``, state, score, cosine).
It must return exactly ``search``'s hits under the same prefix and filters: the
same versions in the same order with the same scores (compared with ``==``), the
same states, and the cosine ``search`` puts in each hit's explanation; and
``None`` where ``search`` would not search within the prefix's rows or where the
caller must go through ``search`` (a reranker, the served-read log)."""

from __future__ import annotations

import itertools
from datetime import timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import EndOp, FactRow, Memory, State
from chronomem.retrieval import within

from .conftest import T0, ManualClock

counter = itertools.count()
WORDS = ["tea", "coffee", "paris", "berlin", "study", "studies", "botany", "visited", "chess"]
SUBJECTS = ["ns.a.x", "ns.a.y", "ns.ab.z", "ns.b.w", "other"]

facts = st.lists(
    st.tuples(
        st.sampled_from(SUBJECTS),
        st.sampled_from(["likes", "lives_in", "studies"]),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
        st.sampled_from(["keep", "end", "keep", "retract"]),
        st.integers(min_value=0, max_value=400),  # days between this fact and the next
    ),
    min_size=1,
    max_size=16,
)
queries = st.lists(
    st.sampled_from([*WORDS, "ns.a.x", "what", "does", "in 2024", "last year"]),
    min_size=1,
    max_size=4,
)


def _put(m: Memory, subject: str, predicate: str, obj: str) -> str:
    return m.apply([m.assertion(subject, predicate, obj, exact=True)]).fact_ids[0]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    spec=facts,
    words=queries,
    prefix=st.sampled_from(["ns.", "ns.a.", "ns.a.x", "ns.b"]),
    k=st.sampled_from([1, 3, 10, 30]),
    states=st.sampled_from([None, [State.LIVE, State.ENDED], [State.LIVE, State.SCHEDULED]]),
    min_score=st.sampled_from([0.0, 0.0, 0.005, 0.016]),
    when=st.sampled_from(["now", "now", "past", "valid", "before"]),
    vector_weight=st.sampled_from([None, None, 0.0]),
)
def test_search_scored_returns_searchs_hits_and_scores(
    memory: Memory,
    clock: ManualClock,
    spec: list[tuple[str, str, str, str, int]],
    words: list[str],
    prefix: str,
    k: int,
    states: list[State] | None,
    min_score: float,
    when: str,
    vector_weight: float | None,
) -> None:
    """Now, as of a past instant, at a past valid instant known now (scheduled
    versions, a shorter age), and
    with a vector leg that votes 0 (its hits all score 0.0: ties, broken by the
    tiebreak alone)."""
    m = memory.scoped(tenant=f"s{next(counter)}")
    instants = [clock()]
    for subject, predicate, obj, then, days in spec:
        fid = _put(m, subject, predicate, obj)
        clock.advance(seconds=1)
        if then == "end":
            m.apply([EndOp(subject, predicate, obj, None, exact=True)])
        elif then == "retract":
            m.retract(fid)
        instants.append(clock())
        clock.advance(days=days)  # recency apart (held rows searched again below)
    query = " ".join(words)
    clock.tick = timedelta(0)  # both searches at one instant (recency alike)
    mid = instants[len(instants) // 2]
    at = {"now": {}, "past": {"as_of": mid}, "valid": {"valid_at": mid}, "before": {"as_of": T0}}
    embedder = m._engine.retrieval.embedder  # type: ignore[union-attr]
    if vector_weight is not None:
        setattr(embedder, "vector_weight", vector_weight)  # noqa: B010 (not its attribute)
    try:
        for _ in range(2):  # cold, then over the held rows
            kw = {"k": k, "subject_prefix": prefix, "states": states, "min_score": min_score}
            kw.update(at[when])
            hits = m.search(query, exact=True, **kw)  # type: ignore[arg-type]
            scored = m.search_scored(query, exact=True, **kw)  # type: ignore[arg-type]
            assert scored is not None
            assert [(r.version_id, s) for r, _, s, _ in scored] == [
                (h.fact.version_id, h.score) for h in hits if h.fact is not None
            ]
            for (row, state, _, cosine), h in zip(scored, hits, strict=True):
                f = h.fact
                assert f is not None
                assert row == FactRow.of(f)
                assert state is f.state
                assert cosine == h.explain.get("cosine")
    finally:
        if vector_weight is not None:
            delattr(embedder, "vector_weight")


def test_hits_of_equal_score_come_in_searchs_order(memory: Memory, clock: ManualClock) -> None:
    """A vector leg voting 0 scores its own hits 0.0 alike: ``search_scored``
    orders them by tiebreak (content hash, then version id), as ``search``
    does, not in the order the rows were read."""
    m = memory.scoped(tenant=f"s{next(counter)}")
    texts = ["tea coffee", "paris berlin", "study chess", "botany visited", "coffee paris"]
    for i, text in enumerate([*texts, "chess tea", "berlin botany"]):
        _put(m, f"ns.{i}", "likes", text)
    clock.tick = timedelta(0)  # both searches at one instant (recency alike)
    embedder = m._engine.retrieval.embedder  # type: ignore[union-attr]
    setattr(embedder, "vector_weight", 0.0)  # noqa: B010 (not its attribute)
    zeros = []
    try:
        for query in ["tea", "chess", "paris studies", "visited"]:
            hits = m.search(query, subject_prefix="ns.", exact=True, k=30)
            scored = m.search_scored(query, subject_prefix="ns.", exact=True, k=30)
            assert scored is not None
            zeros.append([s for _, _, s, _ in scored].count(0.0))
            assert [(r.version_id, s) for r, _, s, _ in scored] == [
                (h.fact.version_id, h.score) for h in hits if h.fact is not None
            ]
    finally:
        delattr(embedder, "vector_weight")
    assert max(zeros) > 2  # ties to break


def test_search_scored_defers_to_search(memory: Memory, clock: ManualClock) -> None:
    """``None`` (the caller runs ``search``): retracted versions asked for, a
    prefix past ``ROW_CAP``, a reranker set; ``[]`` for an empty query or k 0."""
    m = memory.scoped(tenant=f"s{next(counter)}")
    _put(m, "ns.a", "likes", "green tea")
    clock.advance(seconds=1)
    assert m.search_scored("tea", subject_prefix="ns.", exact=True)
    assert m.search_scored("tea", subject_prefix="ns.", states=[State.RETRACTED]) is None
    assert m.search_scored(" ", subject_prefix="ns.") == []
    assert m.search_scored("tea", subject_prefix="ns.", k=0) == []
    cap = within.ROW_CAP
    within.ROW_CAP = 0
    try:
        assert m.search_scored("tea", subject_prefix="ns.") is None
    finally:
        within.ROW_CAP = cap
    m.set_reranker(lambda q, hits: hits)  # type: ignore[arg-type]
    try:
        assert m.search_scored("tea", subject_prefix="ns.") is None
    finally:
        m.set_reranker(None)


def test_search_scored_is_not_served_with_the_read_log_on(url: str | None) -> None:
    """With the served-read log on, a search must be logged: ``None``, and the
    caller's ``search`` logs it."""
    with Memory(url, read_log=True) as m:
        _put(m, "ns.a", "likes", "green tea")
        assert m.search_scored("tea", subject_prefix="ns.", exact=True) is None


@settings(max_examples=60, deadline=None)
@given(
    vecs=st.lists(
        st.sampled_from([(1.0, 0.0), (0.6, 0.8), (0.8, -0.6), (-1.0, 0.0), (0.0, 1.0)]),
        min_size=0,
        max_size=12,
    ),
    hashes=st.lists(st.sampled_from(["a", "b", "c"]), min_size=12, max_size=12),
    n=st.integers(min_value=1, max_value=14),
)
def test_rows_vector_ranks_as_sorting_the_tuples(
    vecs: list[tuple[float, float]], hashes: list[str], n: int
) -> None:
    """``Rows.vector``'s numpy ranking (``np.lexsort``) is the order of sorting the
    rows' (-cosine, content hash, id) tuples, ties (equal vectors) included, and
    its cosines are every row's."""
    rows = [
        {"id": f"v{9 - i}", "content_hash": hashes[i], "_vec": np.asarray(v, "<f4").tobytes()}
        for i, v in enumerate(vecs)
    ]
    q = np.asarray([0.6, 0.8], dtype=np.float32)
    cos, ranked = within.Rows(rows).vector(q, n)
    assert cos == within.cosines(rows, q)
    want = sorted((-c, r["content_hash"], r["id"]) for r in rows if (c := cos[r["id"]]) > 0)
    assert ranked == [(i, -c) for c, _, i in want[:n]]
