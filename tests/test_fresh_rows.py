"""A batch's asserts into empty slots (issue #32): their rows made together.

An assert that alone touches a slot holding no version inserts one new version
(``statemachine.trivial_assert`` answers ``NEW``). The writer takes such asserts
straight to their ``cm_versions`` rows (``writer._fresh``, ``_fresh_rows``): no
``SlotVersion``, no ``trivial_assert`` or ``_direct`` call, the fact and version ids
drawn together (``new_id_pair``). Here, for any such assert, the row is the one
``SlotPlan.assert_`` inserts in an empty slot (``_version_row``), key for key and
in the same order; an assert it declines (a ``valid_for``, a bad interval) takes
the general path; and a batch of new facts calls none of the per-row functions."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import Memory, statemachine, writer
from chronomem.errors import InvalidInterval
from chronomem.ops import AssertOp
from chronomem.scope import Scope
from chronomem.slotkeys import slot_key
from chronomem.statemachine import SlotPlan, new_id_pair

from .conftest import ManualClock

DAY = 86_400_000_000
TX = 10 * DAY


@given(
    st.sampled_from(["Paris", "London"]),
    st.one_of(st.none(), st.integers(0, 30)),
    st.one_of(st.none(), st.integers(0, 60)),
    st.booleans(),
    st.one_of(st.none(), st.integers(-2, 5)),
    st.one_of(st.none(), st.sampled_from(["", "text to index"])),
    st.sampled_from([{}, {"k": "v"}, {"b": [1, 2], "a": "é"}]),
    st.one_of(st.none(), st.sampled_from(["llm"])),
    st.sampled_from([Scope("t"), Scope("t", "u"), Scope("t", "u", "a", "s")]),
)
def test_a_fresh_row_is_the_plans_row(
    obj: str,
    start: int | None,
    end: int | None,
    bounded: bool,
    valid_for: int | None,
    index_text: str | None,
    metadata: dict[str, Any],
    extractor: str | None,
    scope: Scope,
) -> None:
    op = AssertOp(
        "Ada Lovelace",
        "lives_in",
        obj,
        None if start is None else start * DAY,
        None if end is None else end * DAY,
        bounded=bounded,
        metadata=metadata,
        extractor=extractor,
        index_text=index_text,
        valid_for=None if valid_for is None else valid_for * DAY,
    )
    skey, key = "ada lovelace", obj.lower()
    slot = slot_key(scope, skey, "lives_in", None)
    fresh: list[Any] = []
    taken = writer._fresh(op, TX, slot, skey, "lives_in", key, fresh)
    try:
        resolved, vf = writer._interval(op, TX)
    except InvalidInterval:
        assert not taken and not fresh  # ``_direct`` raises it
        return
    if op.valid_for is not None:
        assert not taken and not fresh  # ``_direct`` resolves it
        return
    assert taken and len(fresh) == 1
    *_, fid, vid = fresh[0]
    assert fid < vid  # drawn in the order ``_direct`` draws them
    target = writer._Target(resolved, (slot,), skey, "lives_in", key)
    plan = SlotPlan([])
    version = plan.assert_(
        resolved.obj, key, vf, resolved.valid_to, bounded=resolved.bounded,
        explicit_start=resolved.valid_from is not None,
        extra=writer._assert_extra(target, resolved, scope),
    )  # fmt: skip
    assert version is not None and plan.outcome.added == [version.id] and not plan.closes
    version.id, version.fact_id = vid, fid
    rows: dict[str, Any] = {}
    writer._fresh_rows(fresh, scope, TX, rows)
    assert list(rows) == [slot]
    assert list(rows[slot].items()) == list(writer._version_row("t", version, TX).items())


def test_ids_drawn_in_pairs_sort_in_creation_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two ids of a pair sort as two ``new_id`` calls would, also where the 12-bit
    counter wraps between them (the second then takes a later microsecond)."""
    for start in (0, 0xFFE, 0xFFF):
        monkeypatch.setattr(statemachine, "_counter", itertools.count(start))
        a, b = new_id_pair()
        c = statemachine.new_id()
        assert len(a) == len(b) == len(c) == 24
        assert a < b < c, (start, a, b, c)


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"trivial_assert": 0, "new_id": 0, "_new_row": 0}

    def count(module: Any, name: str) -> None:
        real = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    count(writer, "trivial_assert")
    count(writer, "new_id")
    count(writer, "_new_row")
    return calls


def test_a_batch_of_new_facts_makes_its_rows_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of 300 new facts (and of 300 exact asserts, an adapter's) calls no
    per-row planning function: no ``trivial_assert`` (300 before), no ``_new_row``,
    no single ``new_id`` (600); a repeat of the batch still finds every fact
    unchanged through ``trivial_assert``, and one more value of a one-valued
    slot is planned."""
    with Memory(clock=ManualClock()) as m:
        m.register_predicate("lives_in", cardinality="one")
        calls = _counted(monkeypatch)
        ops = [m.assertion(f"s{i}", "likes", f"o{i}") for i in range(300)]
        first = m.apply(ops)
        assert len(first.added) == 300
        assert calls == {"trivial_assert": 0, "new_id": 0, "_new_row": 0}
        exact = [
            m.assertion(f"k{i}", "doc", f"v{i}", exact=True, cardinality="one") for i in range(300)
        ]
        assert len(m.apply(exact).added) == 300
        assert calls == {"trivial_assert": 0, "new_id": 0, "_new_row": 0}
        again = m.apply(ops)
        assert again.added == [] and len(again.unchanged) == 300
        assert calls["trivial_assert"] == 300 and calls["_new_row"] == 0
        m.apply([m.assertion("s1", "lives_in", "rome")])
        moved = m.apply([m.assertion("s1", "lives_in", "oslo")])
        assert len(moved.added) == 1 and len(moved.superseded) == 1
