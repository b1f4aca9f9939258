"""``Memory.newest_by_instant``: a page of one predicate's live facts ordered by an
instant in their metadata (schema v13's ``INSTANT_ORDERS`` index), the order and the
cut in SQL (issue #32). The page is the one ``facts`` gives sorted in that order and
cut, ``where`` applied, over random histories on both databases; None where the index
cannot order the facts (no index for the predicate or key, a current version whose
key is no UTC ISO text, the served-read log on)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Fact, Memory
from chronomem_adapters.conformance import KitClock

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
P = "crewai_record"  # the predicate schema.INSTANT_ORDERS indexes by created_at
SUBJECTS = ["a", "b", "ab", "é", "B", "a b"]
SHAPED = [
    "2026-01-01T00:00:00+00:00",
    "2026-01-01T00:00:00.000001+00:00",
    "2026-01-01T00:00:01+00:00",
    "2025-12-31T23:59:59.999999+00:00",
]
UNSHAPED = [None, "2026-01-01T00:00:00", "2026-01-01T01:00:00+01:00", "x", 5]

steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("remember"),
            st.sampled_from(SUBJECTS),
            st.sampled_from([P, "likes"]),
            st.sampled_from(["x", "y", "z"]),
            st.integers(-3, 3),  # valid from, days from the clock's now (ties, future)
            st.sampled_from(SHAPED),
            st.sampled_from(["/a", "/b"]),
        ),
        st.tuples(st.just("end"), st.sampled_from(SUBJECTS), st.sampled_from([P, "likes"])),
        st.tuples(st.just("tick"), st.integers(0, 2)),
    ),
    min_size=1,
    max_size=16,
)


def _page(m: Memory, limit: int, offset: int, scope: str | None) -> list[Fact]:
    """The documented order over ``facts``: the instant text descending, the subject
    key descending, then valid from, object key and version id ascending."""
    found = [
        f for f in m.facts(predicate=P, exact=True) if scope is None or f.metadata["k"] == scope
    ]
    found.sort(key=lambda f: (f.valid_from, f.object, f.version_id))
    found.sort(key=lambda f: (f.metadata["created_at"], f.subject_key), reverse=True)
    return found[offset : offset + limit]


_tenants = iter(range(10**9))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps, st.integers(0, 6), st.integers(0, 4), st.sampled_from([None, "/a"]))
def test_a_page_is_the_facts_in_the_instant_order_and_cut(
    url: str | None, ops: list[tuple[Any, ...]], limit: int, offset: int, scope: str | None
) -> None:
    clock = KitClock(T0)
    root = Memory(url, clock=clock)
    try:
        m = root.scoped(tenant=f"i{next(_tenants)}")  # examples share a database
        for op in ops:
            if op[0] == "remember":
                _, s, p, o, days, created, k = op
                m.remember(
                    s, p, o, valid_from=clock.now + timedelta(days=days),
                    metadata={"created_at": created, "k": k},
                )  # fmt: skip
            elif op[0] == "end":
                m.end(op[1], op[2])
            else:
                clock.advance(seconds=op[1])

        def keep(meta: Any) -> bool:
            return scope is None or meta["k"] == scope

        got = m.newest_by_instant(
            P, "created_at", limit=limit, offset=offset, where=None if scope is None else keep
        )
        assert got == _page(m, limit, offset, scope)
    finally:
        root.close()


def test_none_where_the_index_cannot_order(url: str | None) -> None:
    m = Memory(url)
    try:
        m.remember("a", P, "x", metadata={"created_at": SHAPED[0]})
        m.remember("b", "likes", "x", metadata={"created_at": SHAPED[0]})
        assert [f.subject for f in m.newest_by_instant(P, "created_at", limit=5) or []] == ["a"]
        assert m.newest_by_instant("likes", "created_at", limit=5) is None  # no index
        assert m.newest_by_instant(P, "updated_at", limit=5) is None
        for value in UNSHAPED:
            meta = {} if value is None else {"created_at": value}
            added = m.remember("c", P, "y", metadata=meta).added[0]
            assert m.newest_by_instant(P, "created_at", limit=5) is None, value
            m.retract(added)
            assert m.newest_by_instant(P, "created_at", limit=5) is not None, value
    finally:
        m.close()


def test_none_with_the_read_log_on() -> None:
    with Memory(read_log=True) as m:
        m.remember("a", P, "x", metadata={"created_at": SHAPED[0]})
        assert m.newest_by_instant(P, "created_at", limit=5) is None


def test_ties_follow_valid_from_then_object(url: str | None) -> None:
    """One subject's live values at one instant: valid from ascending, then the object
    (the order ``facts`` lists them in, which a stable sort keeps)."""
    clock = KitClock(T0)
    m = Memory(url, clock=clock)
    try:
        at = clock.now
        for obj, days in (("x", -1), ("y", -2), ("z", -1)):
            meta = {"created_at": SHAPED[0]}
            m.remember("b", P, obj, valid_from=at + timedelta(days=days), metadata=meta)
        got = m.newest_by_instant(P, "created_at", limit=5)
        assert got is not None
        assert [(f.subject, f.object) for f in got] == [("b", "y"), ("b", "x"), ("b", "z")]
        assert got == _page(m, 5, 0, None)
    finally:
        m.close()
