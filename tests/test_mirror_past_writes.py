"""A search mirror follows the tenant's clock: after syncing to a stamp it reads only
rows recorded or closed after it. A write stamped at or before the clock's last stamp
(``import_fact`` or ``apply(recorded_at=…)`` of the past) must still reach every other
process's mirror: such a write moves the rewrite marker (``Backend.advance_clock``),
and a mirror seeing it reload. Model: a fresh ``Memory`` on the same store, whose
mirror loads everything, holds exactly what the long-lived one holds after a search."""

from __future__ import annotations

import contextlib
import uuid
from datetime import timedelta

import hypothesis.strategies as st
from hypothesis import HealthCheck, example, given, settings

from chronomem import Memory
from chronomem.errors import TimeTravel

from .conftest import ManualClock

SUBJECTS = ["ada", "bob", "cid", "dan"]
CITIES = ["paris", "rome", "oslo", "kyiv", "lima"]

# ("now", subject, city): a write at the clock's time; ("past", subject, city, back):
# an import stamped ``back`` seconds before the latest stamp (0: at it); ("ask",): the
# long-lived reader searches
STEP = st.one_of(
    st.tuples(st.just("now"), st.sampled_from(SUBJECTS), st.sampled_from(CITIES)),
    st.tuples(
        st.just("past"),
        st.sampled_from(SUBJECTS),
        st.sampled_from(CITIES),
        st.integers(min_value=0, max_value=3),
    ),
    st.tuples(st.just("ask")),
)


def held(memory: Memory) -> list[tuple[str, int]]:
    """What the memory's mirror of its tenant holds: each version and its close."""
    mirror = memory._engine.retrieval.mirrors.get(memory.scope.tenant).v
    ids = [mirror.ids[p] for p in range(mirror.n)]
    return sorted(zip(ids, (int(s) for s in mirror.sup.a[: mirror.n]), strict=True))


def found(memory: Memory) -> list[tuple[str, str]]:
    """The facts a search finds (no episodes are searched: every hit is a fact)."""
    return sorted((h.fact.id, h.fact.object) for h in memory.search("lives in", k=50) if h.fact)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(STEP, min_size=1, max_size=14))
# imports at the reader's synced stamp and before it, after it searched
@example(
    [("now", "ada", "paris"), ("ask",), ("past", "bob", "rome", 0), ("past", "cid", "oslo", 2)]
)
# an import closing a version the reader holds, stamped at the reader's synced stamp
@example([("now", "ada", "paris"), ("now", "bob", "rome"), ("ask",), ("past", "ada", "lima", 0)])
def test_a_long_lived_mirror_holds_what_a_fresh_one_loads(durable_url: str, steps) -> None:
    clock = ManualClock(tick=timedelta(seconds=1))
    tenant = uuid.uuid4().hex  # each example starts from an empty tenant of its own
    writer = Memory(durable_url, clock=clock, tenant=tenant)
    reader = Memory(durable_url, clock=clock, tenant=tenant)
    try:
        latest = None
        for step in steps:
            if step[0] == "now":
                latest = writer.remember(step[1], "lives_in", step[2]).recorded_at
            elif step[0] == "past" and latest is not None:
                at = latest - timedelta(seconds=step[3])
                # refused (nothing written) when the subject changed after ``at``
                with contextlib.suppress(TimeTravel):
                    writer.import_fact(step[1], "lives_in", step[2], recorded_at=at)
            elif step[0] == "ask":
                reader.search("lives in")
        got = found(reader)
        fresh = Memory(durable_url, clock=clock, tenant=tenant)
        try:
            assert got == found(fresh)
            assert held(reader) == held(fresh)
        finally:
            fresh.close()
    finally:
        writer.close()
        reader.close()
