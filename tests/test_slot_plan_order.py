"""A slot's plan does not depend on the order the database returns its versions in.

A scan returns a slot's current rows in physical order, and on PostgreSQL that
order changes when VACUUM frees space that later inserts reuse. The plan sorts
the versions itself, so the same writes against the same versions give the same
outcome — including which fact id survives a merge of several facts (the
earliest-starting version's). ``test_model_based`` depends on this: its histories
must replay identically for hypothesis to shrink them.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chronomem.statemachine import SlotPlan, SlotVersion

DAY = 86_400_000_000


def stored(pieces: list[tuple[int, int, str]]) -> list[SlotVersion]:
    """Non-overlapping stored versions ``(start day, length, object)``, one fact each."""
    out, at = [], 0
    for i, (gap, length, obj) in enumerate(pieces):
        at += gap
        out.append(
            SlotVersion(f"v{i:03d}", f"f{i:03d}", obj, obj.lower(), at * DAY, (at + length) * DAY)
        )
        at += length
    return out


def outcome(versions: list[SlotVersion], ops: list[tuple[str, int, int]]) -> Any:
    plan = SlotPlan(versions)
    for obj, start, length in ops:
        plan.assert_(obj, obj.lower(), start * DAY, (start + length) * DAY, bounded=True,
                     explicit_start=True)  # fmt: skip

    def fact(fid: str) -> str:  # a new fact's id is random: name it by its object
        return fid if fid.startswith("f") else "new"

    inserts = sorted(
        (fact(v.fact_id), v.object, v.valid_from, v.valid_to) for v in plan.inserts.values()
    )
    closes = sorted((vid, reason) for vid, (reason, _by) in plan.closes.items())
    merges = sorted((fact(a), fact(b)) for a, b in plan.outcome.merges)
    return inserts, closes, merges, [fact(f) for f in plan.outcome.fact_ids]


PIECES = st.lists(
    st.tuples(st.integers(0, 3), st.integers(1, 4), st.sampled_from(["Paris", "London"])),
    min_size=1,
    max_size=6,
)
OPS = st.lists(
    st.tuples(st.sampled_from(["Paris", "London"]), st.integers(0, 30), st.integers(1, 20)),
    min_size=1,
    max_size=3,
)


@given(pieces=PIECES, ops=OPS, order=st.randoms(use_true_random=False))
def test_the_plan_ignores_the_order_of_the_stored_versions(pieces, ops, order) -> None:
    versions = stored(pieces)
    shuffled = list(versions)
    order.shuffle(shuffled)
    assert outcome(shuffled, ops) == outcome(versions, ops)


@given(pieces=PIECES.filter(lambda p: len(p) >= 2))
def test_a_merge_keeps_the_fact_of_the_earliest_starting_version(pieces) -> None:
    versions = stored([(gap, length, "Paris") for gap, length, _ in pieces])
    start = versions[0].valid_from // DAY
    end = versions[-1].valid_to // DAY
    plan = SlotPlan(list(reversed(versions)))
    merged = plan.assert_("Paris", "paris", start * DAY, end * DAY, bounded=True,
                          explicit_start=True)  # fmt: skip
    assert merged is not None  # no single version covers the whole span
    assert merged.fact_id == "f000"
    assert (merged.valid_from, merged.valid_to) == (versions[0].valid_from, versions[-1].valid_to)
    assert sorted(plan.closes) == sorted(v.id for v in versions)
