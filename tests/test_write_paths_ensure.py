"""The writer's check of an assert that only ensures a fact (issue #32).

An exact assert of a ONE slot from a given instant forever, citing no source
(``writer._ensures``: a LangGraph batch's namespace-index entries), is left
unchanged without a ``SlotVersion`` or a plan when its slot already holds it
(``writer._kept``). Here, for any current versions of a slot, loaded as stored
rows or as ``SlotVersion``s, ``_kept`` names exactly the version
``trivial_assert`` leaves unchanged, and nothing when ``trivial_assert`` would
insert or plan. Whole stores written with and without the check are compared
in ``tests/langgraph/test_ensure_entries.py``; here also a core batch."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import Cardinality, Memory, writer
from chronomem.model import ALL_STATES
from chronomem.ops import AssertOp, EndOp
from chronomem.statemachine import SlotVersion, trivial_assert
from chronomem.timeutil import MIN_US

from .conftest import ManualClock

DAY = 86_400_000_000
OBJECTS = ["Paris", "London"]

VERSIONS = st.lists(
    st.tuples(
        st.integers(0, 6),  # starts on this day
        st.one_of(st.none(), st.integers(1, 4)),  # for this many days, or forever
        st.sampled_from(OBJECTS),
        st.integers(0, 9),  # the version id's rank
    ),
    max_size=4,
)


def _ensure(obj: str, start_day: int) -> AssertOp:
    return AssertOp(
        "s", "p", obj, start_day * DAY, None, bounded=True, exact=True,
        cardinality=Cardinality.ONE, index_text="",
    )  # fmt: skip


def _row(v: SlotVersion) -> tuple[Any, ...]:
    """``v`` as the prepared reads return it: a tuple in ``cm_versions``' column order."""
    row: list[Any] = [None] * len(writer._COL)
    for name, value in (
        ("id", v.id), ("fact_id", v.fact_id), ("object", v.object),
        ("object_key", v.object_key), ("valid_from", v.valid_from), ("valid_to", v.valid_to),
        ("slot", "slot"),
    ):  # fmt: skip
        row[writer._COL[name]] = value
    return tuple(row)


@given(VERSIONS, st.sampled_from(OBJECTS), st.integers(0, 6))
def test_kept_is_what_trivial_assert_leaves_unchanged(
    pieces: list[tuple[int, int | None, str, int]], obj: str, start: int
) -> None:
    current = [
        SlotVersion(f"v{rank}{i}", f"f{i}", o, o, day * DAY,
                    None if length is None else (day + length) * DAY)
        for i, (day, length, o, rank) in enumerate(pieces)
    ]  # fmt: skip
    op = _ensure(obj, start)
    assert writer._ensures(op)
    found = trivial_assert(current, obj, start * DAY, None, bounded=True, explicit_start=True)
    expected = (found.fact_id, found.id) if isinstance(found, SlotVersion) else None
    assert writer._kept(current, op) == expected
    assert writer._kept([_row(v) for v in current], op) == expected
    assert writer._kept([*map(_row, current[:1]), *current[1:]], op) == expected


def test_only_exact_forever_one_asserts_without_sources_are_ensures() -> None:
    base = _ensure("Paris", 0)
    assert writer._ensures(base)
    for other in (
        AssertOp("s", "p", "Paris", None, None, bounded=True, exact=True,
                 cardinality=Cardinality.ONE),  # from the transaction time
        AssertOp("s", "p", "Paris", 0, DAY, bounded=True, exact=True,
                 cardinality=Cardinality.ONE),  # not forever
        AssertOp("s", "p", "Paris", 0, None, bounded=False, exact=True,
                 cardinality=Cardinality.ONE),  # until the next change
        AssertOp("s", "p", "Paris", 0, None, bounded=True, exact=True,
                 cardinality=Cardinality.MANY),
        AssertOp("s", "p", "Paris", 0, None, bounded=True, exact=True,
                 cardinality=Cardinality.ONE, sources=("e",)),
        EndOp("s", "p", None, None, exact=True, cardinality=Cardinality.ONE),
    ):  # fmt: skip
        assert not writer._ensures(other)


def _state(m: Memory) -> list[tuple[Any, ...]]:
    return sorted(
        (f.subject, f.predicate, f.object, f.valid_from, f.valid_to, f.state.value)
        for f in m.facts(exact=True, states=ALL_STATES)
    )


@pytest.mark.parametrize("narrow_from", [writer.NARROW_ENSURES, 0], ids=["whole", "narrow"])
def test_a_core_batch_of_ensures_as_planned(url: str | None, narrow_from: int) -> None:
    """The same batches of ensures (present, missing, changed, repeated in a batch,
    over an ended slot) through the check and through the planner: same receipts
    (kinds and counts), same facts; with their slots read whole, or narrowly
    (``narrow_from`` 0: ``writer._ensured`` for any batch, on SQLite)."""
    memory = Memory(url, clock=ManualClock())  # standing still: both sides stamp alike
    old, new = memory.scoped(tenant="old"), memory.scoped(tenant="new")
    start = MIN_US

    def ensure(s: str, o: str) -> AssertOp:
        return AssertOp(s, "p", o, start, None, bounded=True, exact=True,
                        cardinality=Cardinality.ONE, index_text="")  # fmt: skip

    batches: list[list[Any]] = [
        [ensure("a", "1"), ensure("b", "1")],
        [ensure("a", "1"), ensure("b", "1"), ensure("c", "1")],
        [EndOp("b", "p", None, None, exact=True, cardinality=Cardinality.ONE)],
        [ensure("a", "1"), ensure("b", "1"), ensure("c", "2")],
        [ensure("a", "1"), ensure("a", "1"), ensure("c", "2")],
    ]
    for ops in batches:
        with mock.patch.object(writer, "_ensures", lambda op: False):
            r_old = old.apply(ops)
        with mock.patch.object(writer, "NARROW_ENSURES", narrow_from):
            r_new = new.apply(ops)
        shape = [
            (len(r.added), len(r.unchanged), len(r.ended), len(r.superseded), len(r.fact_ids))
            for r in (r_old, r_new)
        ]
        assert shape[0] == shape[1], ops
        assert _state(old) == _state(new)
    memory.close()
