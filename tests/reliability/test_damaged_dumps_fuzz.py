"""Issue #31: hypothesis damages and crafts dumps (truncated, reordered, records
dropped, ids, fact ids and slots swapped across scopes, scopes moved, future
instants, bad registry rows, counts fixed up or not). Each is either refused with
nothing written, or imported into its empty tenant with ``check()`` clean, every
other tenant unchanged and the importing tenant's clock not dragged forward.
Both backends; ``CHRONOMEM_FUZZ_EXAMPLES`` examples (12 by default, 200 with
``--slow``)."""

from __future__ import annotations

import copy
import itertools
import os
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem.errors import ChronomemError
from tests.conftest import ManualClock, utc
from tests.reliability._dumps import dump, load, recount, snapshot

EXAMPLES = int(
    os.environ.get("CHRONOMEM_FUZZ_EXAMPLES", "200" if os.environ.get("CHRONOMEM_SLOW") else "12")
)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_TENANTS = itertools.count()


def _history(m: Memory, clock: ManualClock) -> None:
    m.register_predicate("works_at", cardinality="one", aliases=["employer"])
    ep = m.add_episode("the company moved to Paris")
    alice, bob = m.scoped(user="alice"), m.scoped(user="bob", agent="x")
    alice.remember("alice", "works_at", "Acme", valid_from=utc(2024, 1, 1), source=ep)
    clock.advance(days=1)
    alice.remember("alice", "works_at", "Globex", valid_from=utc(2025, 1, 1))
    bob_ep = bob.add_episode("I like tea")
    tea = bob.remember("bob", "likes", "tea", source=bob_ep).fact_ids[0]
    clock.advance(days=1)
    bob.correct(tea, "green tea")
    m.remember("carol", "lives_in", "Rome", valid_to=utc(2031, 1, 1))
    clock.advance(days=1)
    gone = alice.remember("alice", "works_at", "Initech", valid_from=utc(2025, 6, 1)).fact_ids[0]
    clock.advance(days=1)
    alice.erase(gone)
    clock.advance(days=1)


def _edit(recs: list[dict[str, Any]], op: tuple[str, int, int, Any]) -> list[dict[str, Any]]:
    kind, i, j, value = op
    body = recs[1:]
    if not body:
        return recs
    i, j = i % len(body), j % len(body)
    a, b = body[i], body[j]
    if kind == "truncate":
        return recs[: 1 + i]
    if kind == "drop":
        return [recs[0], *body[:i], *body[i + 1 :]]
    if kind == "reorder":
        body[i], body[j] = b, a
    elif kind == "swap" and a["type"] == b["type"] and value in a and value in b:
        a[value], b[value] = b[value], a[value]
    elif kind == "future" and "recorded_at" in a:
        a["recorded_at"] = "3000-01-01T00:00:00+00:00"
    elif kind == "registry" and a["type"] == "predicate":
        a[value] = "several"
    elif kind == "scope" and "scope" in a:
        a["scope"] = value
    elif kind == "field" and value in a:
        a[value] = b.get(value)
    return [recs[0], *body]


FIELDS = st.sampled_from(["id", "fact_id", "slot", "superseded_by", "episode_id", "subject_key",
                          "valid_from", "superseded_at", "canonical", "cardinality"])  # fmt: skip
OPS = st.one_of(
    st.tuples(st.sampled_from(["truncate", "drop", "reorder", "future"]), st.integers(0, 99),
              st.integers(0, 99), st.none()),
    st.tuples(st.just("swap"), st.integers(0, 99), st.integers(0, 99), FIELDS),
    st.tuples(st.just("field"), st.integers(0, 99), st.integers(0, 99), FIELDS),
    st.tuples(st.just("registry"), st.integers(0, 99), st.integers(0, 99),
              st.sampled_from(["cardinality", "volatility"])),
    st.tuples(st.just("scope"), st.integers(0, 99), st.integers(0, 99),
              st.sampled_from([{}, {"user": "alice"}, {"user": "bob"}, {"user": "bob", "agent": "x"},
                               {"agent": "x"}, {"user": "mallory"}])),
)  # fmt: skip


@FUZZ
@given(ops=st.lists(OPS, min_size=1, max_size=3), fix_counts=st.booleans(), scoped=st.booleans())
def test_a_damaged_dump_is_refused_whole_or_imports_clean(
    memory: Memory, clock: ManualClock, ops: list[Any], fix_counts: bool, scoped: bool
) -> None:
    if memory.stats().versions == 0:
        _history(memory, clock)
    recs = copy.deepcopy(dump(memory.scoped(user="alice") if scoped else memory))
    for op in ops:
        recs = _edit(recs, op)
    if fix_counts:
        recs = recount(recs)
    dst = memory.scoped(tenant=f"fuzz{next(_TENANTS)}")
    before = snapshot(memory)
    try:
        load(dst, recs)
    except ChronomemError as exc:
        event(f"refused: {type(exc).__name__}")
        assert snapshot(memory) == before
        return
    event("imported")
    after = snapshot(memory)
    for table, rows in before.items():  # every other tenant exactly as it was
        theirs = [r for r in after[table] if repr(dst.scope.tenant) not in r]
        assert theirs == rows, table
    assert memory.check().ok
    dst.remember("zed", "likes", "jazz")  # the clock was not dragged forward
    assert "jazz" in [f.object for f in dst.facts(as_of=dst.now())]
