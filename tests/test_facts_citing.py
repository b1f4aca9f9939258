"""``Memory.facts_citing``: the live facts whose sources include one of the given
episodes, found through the sources' episode index (issue #32: CrewAI's forget of
a message). The same facts as ``facts()`` filtered by their sources, over random
histories, and the same cost at 50 and 500 facts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem_adapters.conformance import KitClock

from .langchain.tracing import tracing
from .statements import decoded_facts

steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("assert"),
            st.sampled_from(["ada", "bo"]),
            st.sampled_from(["likes", "city"]),
            st.sampled_from(["x", "y", "z"]),
            st.lists(st.integers(0, 3), max_size=2, unique=True),  # source episodes
        ),
        st.tuples(st.just("end"), st.sampled_from(["ada", "bo"]), st.sampled_from(["likes"])),
        st.tuples(st.just("retract"), st.integers(0, 5)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps, st.lists(st.integers(0, 4), max_size=3), st.booleans())
def test_the_facts_citing_episodes_are_the_live_facts_with_those_sources(
    history: list[tuple[Any, ...]], asked: list[int], past: bool
) -> None:
    clock = KitClock(datetime(2026, 1, 1, tzinfo=timezone.utc), timedelta(seconds=1))
    with Memory(clock=clock) as root:
        root.register_predicate("city", cardinality="one")
        m = root.scoped(user="u")
        eps = [m.add_episode(f"said {i}").id for i in range(4)]
        eps.append(root.add_episode("tenant-wide").id)  # index 4: an enclosing scope's
        added: list[str] = []
        marks = []
        for step in history:
            if step[0] == "assert":
                _, s, p, o, src = step
                added += m.remember(s, p, o, source=[eps[i] for i in src]).fact_ids
            elif step[0] == "end":
                m.end(step[1], step[2])
            elif added:
                m.retract(added[step[1] % len(added)])
            marks.append(clock.mark())
        ids = [eps[i] for i in asked]
        when: dict[str, Any] = {"as_of": marks[len(marks) // 2]} if past else {}
        want = [f for f in m.facts(**when) if set(f.source_episode_ids) & set(ids)]
        got = m.facts_citing(ids, **when)
        assert sorted(got, key=lambda f: f.version_id) == sorted(want, key=lambda f: f.version_id)


def test_facts_citing_costs_the_same_at_50_and_500_facts(memory: Memory) -> None:
    costs = []
    for n in (50, 500):
        m = memory.scoped(tenant=f"t{n}")
        ep = m.add_episode("I like tea.")
        m.remember("ada", "likes", "tea", source=[ep.id])
        others = [m.add_episode(f"note {i}") for i in range(5)]
        m.remember_many(
            {"subject": f"s{i}", "predicate": "likes", "obj": "x", "source": [others[i % 5].id]}
            for i in range(n)
        )
        m.facts_citing([ep.id])  # warm
        with decoded_facts() as decoded, tracing(m) as cost:
            got = m.facts_citing([ep.id])
        assert [(f.subject, f.object) for f in got] == [("ada", "tea")]
        costs.append((len(cost.statements), decoded[0]))
    assert costs[0] == costs[1], costs
