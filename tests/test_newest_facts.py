"""``Memory.newest_facts``: a page of one predicate's live facts, newest version
first, the order and the cut in SQL (issue #32). The page is the one ``facts``
gives sorted by ``reads.newest_first`` and cut, over random histories, at the
present and at past instants, with the served-read log on or off; and it costs
the same statements and fact rows whatever the number of facts stored."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory, reads
from chronomem_adapters.conformance import KitClock

from .statements import counting, decoded_facts

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
SUBJECTS = ["a", "b", "ab", "é", "B", "a b"]

steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("remember"),
            st.sampled_from(SUBJECTS),
            st.sampled_from(["likes", "city"]),
            st.sampled_from(["x", "y", "z"]),
            st.integers(-3, 3),  # valid from, days from the clock's now (ties, future)
        ),
        st.tuples(st.just("end"), st.sampled_from(SUBJECTS), st.sampled_from(["likes", "city"])),
        st.tuples(st.just("tick"), st.integers(0, 2)),
    ),
    min_size=1,
    max_size=16,
)


def _page(m: Memory, predicate: str, limit: int, offset: int, **when: Any) -> list[Any]:
    found = m.facts(predicate=predicate, **when)
    return sorted(found, key=reads.newest_first)[offset : offset + limit]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps, st.integers(0, 6), st.integers(0, 4), st.booleans())
def test_a_page_is_the_facts_sorted_newest_first_and_cut(
    history: list[tuple[Any, ...]], limit: int, offset: int, read_log: bool
) -> None:
    clock = KitClock(T0, timedelta(0))
    m = Memory(clock=clock, read_log=read_log)
    m.register_predicate("city", cardinality="one")
    marks = []
    for step in history:
        if step[0] == "remember":
            _, s, p, o, days = step
            m.remember(s, p, o, valid_from=clock.mark() + timedelta(days=days))
        elif step[0] == "end":
            m.end(step[1], step[2])
        else:
            clock.advance(hours=step[1])
        marks.append(clock.mark())
    for p in ("likes", "city"):
        got = m.newest_facts(p, limit=limit, offset=offset)
        assert got == _page(m, p, limit, offset)
        past = marks[len(marks) // 2]
        assert m.newest_facts(p, limit=limit, offset=offset, as_of=past) == _page(
            m, p, limit, offset, as_of=past
        )
        later = T0 + timedelta(days=2)
        assert m.newest_facts(p, limit=limit, valid_at=later) == _page(
            m, p, limit, 0, valid_at=later
        )
    m.close()


def test_a_page_costs_the_same_at_50_and_500_facts(memory: Memory) -> None:
    costs = []
    for n in (50, 500):
        m = memory.scoped(tenant=f"t{n}")
        m.remember_many({"subject": f"s{i}", "predicate": "likes", "obj": "tea"} for i in range(n))
        m.newest_facts("likes", limit=5)  # warm: the predicate registry
        with decoded_facts() as decoded, counting(m) as cost:
            page = m.newest_facts("likes", limit=5, offset=3)
        assert page == _page(m, "likes", 5, 3)
        costs.append((cost.shape, decoded[0]))
    assert costs[0] == costs[1], costs
    assert costs[0][1] == 5
