"""``Memory.facts_with_values``: the live facts ``(subject, predicate, o)`` for the
objects asked, found by their slot keys (issue #32: CrewAI's recall checks whether
the messages it found were forgotten without reading every forget marker). The
same facts as ``facts(subject=, predicate=, exact=True)`` filtered by object, over
random histories in a scope and the scope enclosing it, at the present and at a
past instant; and the same statements, rows and plan at 200 and 2,000 values."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import EndOp, Memory
from chronomem.errors import ScopeError
from chronomem_adapters.conformance import KitClock

from .langchain.tracing import tracing
from .statements import decoded_facts, versions_plan

VALUES = ["a", "b", "c", "d"]
steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("assert"),
            st.booleans(),  # written in the enclosing scope
            st.sampled_from(["M", "N"]),
            st.sampled_from(["mark", "other"]),
            st.sampled_from(VALUES),
        ),
        st.tuples(st.just("end"), st.sampled_from(["M", "N"]), st.sampled_from(VALUES)),
        st.tuples(st.just("retract"), st.integers(0, 5)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps, st.lists(st.sampled_from([*VALUES, "z"]), max_size=3), st.booleans())
def test_the_facts_with_values_are_the_subjects_facts_with_those_objects(
    history: list[tuple[Any, ...]], asked: list[str], past: bool
) -> None:
    clock = KitClock(datetime(2026, 1, 1, tzinfo=timezone.utc), timedelta(seconds=1))
    with Memory(clock=clock) as root:
        m = root.scoped(user="u", session="s")
        added: list[str] = []
        marks = []
        for step in history:
            if step[0] == "assert":
                _, wide, s, p, o = step
                w = root.scoped(user="u") if wide else m
                added += w.apply([w.assertion(s, p, o, exact=True)]).fact_ids
            elif step[0] == "end":
                m.apply([EndOp(step[1], "mark", step[2], None, exact=True)])
            elif added:
                with contextlib.suppress(ScopeError):  # an enclosing scope's: not m's
                    m.retract(added[step[1] % len(added)])
            marks.append(clock.mark())
        when: dict[str, Any] = {"as_of": marks[len(marks) // 2]} if past else {}
        for view in (m, root.scoped(user="u"), root):
            want = [
                f
                for f in view.facts(subject="M", predicate="mark", exact=True, **when)
                if f.object in asked
            ]
            got = view.facts_with_values("M", "mark", asked, **when)
            assert sorted(got, key=lambda f: f.version_id) == sorted(
                want, key=lambda f: f.version_id
            )


def test_facts_with_values_cost_the_same_at_200_and_2000_values(memory: Memory) -> None:
    costs = []
    for n in (200, 2000):
        m = memory.scoped(tenant=f"t{n}", user="u")
        m.apply([m.assertion("M", "mark", f"e{i}", exact=True) for i in range(n)])
        asked = ["e3", "e7", "nope"]
        m.facts_with_values("M", "mark", asked)  # warm
        with decoded_facts() as decoded, tracing(m) as cost:
            got = m.facts_with_values("M", "mark", asked)
        assert sorted(f.object for f in got) == ["e3", "e7"]
        (sql, params), *_ = (
            (s, p)
            for s, p in zip(cost.statements, cost.params, strict=True)
            if "FROM cm_versions" in s
        )
        if n == 2000:  # PostgreSQL scans a table of 200 rows whatever its indexes
            plan = versions_plan(m, sql, params)
            assert "cm_versions_slot_current" in plan, plan
        costs.append((len(cost.statements), decoded[0], cost.vm_steps))
    assert costs[0] == costs[1], costs
