"""``Memory.holds_live_fact``: whether a scope holds any live fact at a read's
instants, in one statement that stops at the first (the LlamaIndex block asks it
before a message search that could only bring in live facts). Checked against
``facts()`` over random histories, at every step's instants, on both backends."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory

from .conftest import ManualClock
from .langchain.tracing import tracing  # every statement, prepared reads too

SUBJECTS = ["ann", "bob"]
VALUES = ["paris", "berlin", "rome"]
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["remember", "end", "retract", "episode"]),
        st.sampled_from(SUBJECTS),
        st.sampled_from(VALUES),
    ),
    max_size=6,
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_agrees_with_the_live_facts_at_every_step(
    memory: Memory, clock: ManualClock, steps
) -> None:
    memory.purge()
    instants = []
    for op, subject, value in steps:
        clock.advance(minutes=1)
        if op == "remember":
            memory.remember(subject, "lives_in", value)
        elif op == "end":
            if memory.facts(subject=subject, predicate="lives_in"):
                memory.end(subject, "lives_in")
        elif op == "retract":
            for f in memory.facts(subject=subject, predicate="lives_in"):
                memory.retract(f.id)
        else:
            memory.add_episode(f"{subject} talks about {value}")
        instants.append(clock())
    for t in [*instants, clock()]:
        expected = bool(memory.facts(valid_at=t, known_at=t))
        assert memory.holds_live_fact(valid_at=t, known_at=t) is expected
        for user in SUBJECTS:  # a narrower scope sees the facts of the scope enclosing it
            assert memory.scoped(user=user).holds_live_fact(valid_at=t, known_at=t) is expected


def test_a_fact_of_another_scope_is_not_seen(memory: Memory) -> None:
    memory.scoped(user="ann").remember("ann", "lives_in", "paris")
    assert memory.scoped(user="ann").holds_live_fact()
    assert not memory.scoped(user="bob").holds_live_fact()
    assert not memory.holds_live_fact()  # the unscoped handle sees no user's facts


def test_one_statement_whatever_the_store_holds(memory: Memory) -> None:
    memory.apply([memory.assertion(f"s{i}", "likes", f"o{i}") for i in range(300)])
    for _ in range(300):
        memory.add_episode("small talk")
    with tracing(memory) as cost:
        assert memory.holds_live_fact()
    assert len(cost.statements) == 1 and cost.episode_rows == 0  # one statement, no episode row
