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
from sqlalchemy import text

from chronomem import Memory, reads
from chronomem.schema import SCHEMA_VERSION
from chronomem_adapters.conformance import KitClock

from .langchain.tracing import tracing
from .reliability._support import raw, version_indexes
from .statements import counting, decoded_facts, versions_plan

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
        assert m.count_facts(p) == len(m.facts(predicate=p))
        assert m.count_facts(p, as_of=past) == len(m.facts(predicate=p, as_of=past))
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


def _walk(m: Memory) -> tuple[int, int, str]:
    m.newest_facts("likes", limit=5)  # warm: the predicate registry, the prepared page
    with decoded_facts() as decoded, tracing(m) as trace:
        page = m.newest_facts("likes", limit=5, offset=3)
    assert page == _page(m, "likes", 5, 3)
    (sql, params), *_ = (
        (s, p) for s, p in zip(trace.statements, trace.params, strict=True) if "ORDER BY" in s
    )
    return decoded[0], trace.vm_steps, versions_plan(m, sql, params)


def test_a_page_walks_the_newest_index_at_200_and_2000_facts(memory: Memory) -> None:
    """Schema v11's ``cm_versions_newest``: the page is read in the index's order
    (valid from, recorded at, the subject key's head), not by sorting every current
    version of the predicate; facts written in one batch (one valid from, one
    recorded at: ties to the head) included. SQLite runs as many instructions at
    either size (the rows examined follow the page); PostgreSQL's plan scans the
    index, sorting only ties within it (``Incremental Sort``)."""
    walks = []
    for n in (200, 2000):
        m = memory.scoped(tenant=f"t{n}")
        for at in range(0, n, 500):
            m.remember_many(
                {"subject": f"s{i}", "predicate": "likes", "obj": "tea"}
                for i in range(at, min(n, at + 500))
            )
        m.remember_many({"subject": f"o{i}", "predicate": "city", "obj": "x"} for i in range(n))
        walks.append(_walk(m))
    for decoded, _, plan in walks:
        assert decoded == 5
        assert "cm_versions_newest" in plan, plan
        assert "USE TEMP B-TREE FOR ORDER BY" not in plan, plan  # SQLite: no whole sort
        assert "Sort  (" not in plan.replace("Incremental Sort  (", ""), plan  # PostgreSQL
    if memory.backend.engine.dialect.name == "sqlite":
        assert walks[0][1] == walks[1][1], (walks[0][1], walks[1][1])


def test_an_older_store_gets_the_newest_index(durable_url: str) -> None:
    with Memory(durable_url) as m:
        m.remember_many({"subject": f"s{i}", "predicate": "likes", "obj": "tea"} for i in range(20))
    with raw(durable_url) as conn:  # what a v10 store looks like
        conn.execute(text("DROP INDEX cm_versions_newest"))
        conn.execute(text("UPDATE cm_meta SET value = '10' WHERE key = 'schema_version'"))
        conn.commit()  # PostgreSQL's connection is transactional: else nothing changed
    with raw(durable_url) as conn:
        assert (
            conn.execute(text("SELECT value FROM cm_meta WHERE key = 'schema_version'")).scalar()
            == "10"
        )
    with Memory(durable_url) as m:
        assert [f.subject for f in m.newest_facts("likes", limit=2)] == ["s0", "s1"]
    with raw(durable_url) as conn:
        assert "cm_versions_newest" in version_indexes(durable_url)
        version = conn.execute(
            text("SELECT value FROM cm_meta WHERE key = 'schema_version'")
        ).scalar()
        assert version == str(SCHEMA_VERSION)


def test_a_count_is_one_statement_and_decodes_no_fact_at_200_and_2000_facts(
    memory: Memory,
) -> None:
    costs = []
    for n in (200, 2000):
        m = memory.scoped(tenant=f"c{n}")
        m.remember_many({"subject": f"s{i}", "predicate": "likes", "obj": "tea"} for i in range(n))
        m.remember_many({"subject": f"o{i}", "predicate": "city", "obj": "x"} for i in range(50))
        m.count_facts("likes")  # warm: the predicate registry
        with decoded_facts() as decoded, counting(m) as cost:
            assert m.count_facts("likes") == n
        costs.append((len(cost.statements), decoded[0]))
    assert costs[0] == costs[1], costs
    assert costs[0][1] == 0 and costs[0][0] <= 2, costs  # PostgreSQL: the registry's check too
