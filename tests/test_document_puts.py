"""A planned write's document puts (``DocumentOp``) applied set-wise
(``writer._documents``: a new subject's one version, or the close and piece of
a running version and the new one) must store what their ``ops()`` store
through the general path (``SlotPlan``). Two tenants on clocks moved alike take
the same random writes into subjects that hold nothing, a running document,
another running value beside it, an ended or expiring one, a value starting in
the future, or the very object put; then the same document puts (each ending
its other values or not, with an ensure-like ``then``), one planned as
``DocumentOp``s, one as their ``ops()``. Every version row (ids replaced by the
rows they name), every vector and the receipts' counts agree, on SQLite and
PostgreSQL, in a tenant's scope and a user's (whose read is not the writer's:
the puts go through ``ops()`` there)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chronomem import Cardinality, Memory, statemachine, writer
from chronomem.ops import AssertOp, DocumentOp, EndOp, PlannedOp
from chronomem.timeutil import MIN_US

from .conftest import ManualClock

SUBJECTS = [f"doc:{i}" for i in range(10)]  # more than one point read's 8
BUSY = SUBJECTS[:3]  # the subjects the earlier writes go to
OBJECTS = ["a", "b", "c"]
HOUR = 3_600_000_000
PRE = st.one_of(
    st.tuples(
        st.just("assert"),
        st.sampled_from(BUSY),
        st.sampled_from(["item", "other"]),
        st.sampled_from(OBJECTS),
        st.sampled_from([None, None, 2, 300]),  # valid for (seconds)
    ),
    st.tuples(
        st.just("end"),
        st.sampled_from(BUSY),
        st.sampled_from(["item", "other"]),
        st.none(),
        st.none(),
    ),
    st.tuples(
        st.just("future"),
        st.sampled_from(BUSY),
        st.just("item"),
        st.sampled_from(OBJECTS),
        st.none(),
    ),
)
PUTS = st.lists(
    st.tuples(
        st.sampled_from([*BUSY * 3, *SUBJECTS]), st.sampled_from([*OBJECTS, "d"]), st.booleans()
    ),
    min_size=1,
    max_size=10,
    unique_by=lambda p: p[0],
)
STEPS = st.lists(
    st.tuples(st.lists(PRE, max_size=6), PUTS, st.booleans(), st.integers(0, 100)),
    min_size=1,
    max_size=4,
)
_tenants = itertools.count()


def _op(step: tuple[Any, ...], now: int) -> AssertOp | EndOp:
    """A ``PRE`` step's write at ``now`` (µs)."""
    kind, subject, predicate, obj, valid_for = step
    if kind == "end":
        return EndOp(subject, predicate, None, None, exact=True, cardinality=Cardinality.ONE)
    start = now + HOUR if kind == "future" else None
    return AssertOp(
        subject,
        predicate,
        obj or "",
        start,
        None,
        bounded=True,
        exact=True,
        cardinality=Cardinality.ONE,
        index_text=f"text {obj}",
        valid_for=None if valid_for is None else valid_for * 1_000_000,
    )


def _ensure(subject: str) -> AssertOp:
    """An index entry's assert (as an item store's namespace index writes it)."""
    return AssertOp(
        subject, "@entry", "x", MIN_US, None, bounded=True, exact=True,
        cardinality=Cardinality.ONE, index_text="",
    )  # fmt: skip


def _stored(memory: Memory) -> list[Any]:
    """Every version row of the memory's tenant (ids replaced by what the rows
    they name hold), and each vector with its version's row."""
    tenant = memory.scope.tenant
    with memory.backend.engine.connect() as conn:
        sql = (
            "SELECT id, fact_id, superseded_by, subject, predicate, object, valid_from, "
            "valid_to, recorded_at, superseded_at, closed_reason, index_text, metadata, "
            "user_id, extractor, subject_hash, content_hash FROM cm_versions WHERE tenant = "
        )
        pg = conn.dialect.name != "sqlite"
        rows = conn.exec_driver_sql(
            sql + ("%(t)s" if pg else "?"), {"t": tenant} if pg else (tenant,)
        ).all()
        vecs = conn.exec_driver_sql(
            "SELECT item_id, vec FROM cm_vectors WHERE tenant = " + ("%(t)s" if pg else "?"),
            {"t": tenant} if pg else (tenant,),
        ).all()
    body = {r[0]: tuple(r[3:]) for r in rows}
    first: dict[str, tuple[Any, ...]] = {}
    for r in rows:  # a fact: its earliest version's body
        b = body[r[0]]
        if r[1] not in first or repr(b) < repr(first[r[1]]):
            first[r[1]] = b
    out = sorted(((body[r[0]], first[r[1]], body.get(r[2])) for r in rows), key=repr)
    return [out, sorted(((body[i], bytes(v)) for i, v in vecs), key=repr)]


def _counts(receipt: Any) -> tuple[int, ...]:
    return (
        len(receipt.added),
        len(receipt.unchanged),
        len(receipt.ended),
        len(receipt.retracted),
        len(receipt.superseded),
        receipt.superseded_count,
        len(receipt.fact_ids),
    )


@pytest.mark.parametrize("user", [None, "ann"], ids=["tenant scope", "user scope"])
@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
# the cases at the edges of the set-wise path, each met for sure
@example(steps=[([("assert", "doc:0", "item", "a", 300)], [("doc:0", "b", False)], False, 0)])
@example(steps=[([("assert", "doc:0", "other", "a", None)], [("doc:0", "b", True)], True, 0)])
@example(steps=[([("assert", "doc:0", "other", "a", 300)], [("doc:0", "b", True)], False, 0)])
@example(steps=[([("assert", "doc:0", "item", "a", None)], [("doc:0", "a", True)], False, 0)])
@example(steps=[([("future", "doc:0", "item", "a", None)], [("doc:0", "b", True)], False, 0)])
@example(
    steps=[
        ([("assert", "doc:0", "item", "a", None), ("end", "doc:0", "item", None, None)],
         [("doc:0", "b", True)], False, 0),
        ([], [("doc:0", "c", True), ("doc:1", "c", False)], True, 5),
        ([], [("doc:0", "a", True), ("doc:1", "d", True)], False, 5),
    ]
)  # fmt: skip
def test_document_puts_store_what_their_ops_store(
    url: str | None, user: str | None, steps: list[Any]
) -> None:
    n = next(_tenants)
    clocks = ManualClock(), ManualClock()
    memories = [
        Memory(url, clock=clocks[0], tenant=f"d{n}", user=user),
        Memory(url, clock=clocks[1], tenant=f"o{n}", user=user),
    ]
    try:
        for pre, puts, ensure, wait in steps:
            receipts = []
            for clock, memory in zip(clocks, memories, strict=True):
                clock.advance(seconds=wait)
                for p in pre:  # each its own write, a second apart
                    memory.apply([_op(p, int(memory.now().timestamp() * 1_000_000))])
                    clock.advance(seconds=1)
                clock.advance(seconds=1)
                docs = [DocumentOp(s, "item", o, f"text {o}", ends) for s, o, ends in puts]

                def plan(
                    rows: list[Any], docs: list[DocumentOp] = docs, m: Memory = memory
                ) -> list[PlannedOp]:
                    if m is memories[0]:
                        return list(docs)
                    return [x for d in docs for x in d.ops()]

                then = [_ensure("entry:1"), _ensure("entry:2")] if ensure else []
                receipts.append(
                    _counts(memory.apply_planned([s for s, _, _ in puts], plan, then=then))
                )
            assert receipts[0] == receipts[1]
            assert _stored(memories[0]) == _stored(memories[1])
    finally:
        for m in memories:
            m.close()


class _NoPlans(writer.SlotPlan):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("planned a slot")


def test_new_subjects_and_running_documents_are_written_without_slot_plans(
    memory: Memory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The simple cases take the set-wise path (no ``SlotPlan``; ``SlotPlan`` is
    what the general path plans an overwrite with), and one subject that is not
    simple (another value beside its document) sends the whole plan through
    the general path."""
    if memory.backend.for_update or memory.backend.sends_together():
        pytest.skip("set-wise where the writer's own read serves the plan (SQLite)")
    memory.apply([_op(("assert", s, "item", "a", None), 0) for s in SUBJECTS[:3]])
    clock.advance(seconds=1)
    monkeypatch.setattr(writer, "SlotPlan", _NoPlans)
    docs = [DocumentOp(s, "item", "b", "text b", True) for s in SUBJECTS[:6]]
    got = memory.apply_planned(SUBJECTS[:6], lambda rows: docs)
    assert (len(got.added), len(got.superseded)) == (6, 3)
    memory.apply([_op(("assert", SUBJECTS[0], "other", "x", None), 0)])
    clock.advance(seconds=1)
    docs = [DocumentOp(s, "item", "c", "text c", True) for s in SUBJECTS[:2]]
    with pytest.raises(AssertionError, match="planned a slot"):
        memory.apply_planned(SUBJECTS[:2], lambda rows: docs)


def test_ids_drawn_together_sort_in_creation_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch's ids (``new_ids``) are distinct and sort as as many ``new_id``
    calls would, also where the 12-bit counter wraps among them."""
    for start in (0, 0xFFD, 0xFFF):
        monkeypatch.setattr(statemachine, "_counter", itertools.count(start))
        drawn = statemachine.new_ids(5)
        after = statemachine.new_id()
        assert len(set(drawn)) == 5
        assert all(len(i) == 24 for i in drawn)
        assert drawn == sorted(drawn), (start, drawn)
        if start == 0:  # no wrap: the next id follows in the same microsecond or later
            assert drawn[-1] < after, (drawn, after)
    assert statemachine.new_ids(0) == []


def _ids_one_by_one(counters: list[int], tail: int, us: int, later: int) -> list[str]:
    """``new_ids``' ids as its loop makes them (the clock reads ``later`` after a wrap)."""
    count = len(counters)
    tails = f"{tail:0{8 * count}x}"
    stamp = f"{us:013x}"
    out = []
    for i, n in enumerate(counters):
        n &= 0xFFF
        if n == 0 and i:
            us = max(later, us + 1)
            stamp = f"{us:013x}"
        out.append(f"{stamp}{n:03x}{tails[8 * i : 8 * i + 8]}")
    return out


@given(
    start=st.integers(0, 3 * 0x1000),
    count=st.integers(1, 0x1800),
    seed=st.integers(0, 2**32),
)
@settings(max_examples=60, deadline=None)
def test_ids_drawn_together_are_the_loops_ids(start: int, count: int, seed: int) -> None:
    """``new_ids`` without a wrap (its parts joined in C) and with one gives the
    ids its per-id loop gives for the same counters, random draw and clock."""
    us = 1_764_000_000_000_000
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(statemachine, "_counter", itertools.count(start))
        mp.setattr(statemachine.time, "time_ns", lambda: us * 1000)
        statemachine._tail.seed(seed)
        drawn = statemachine.new_ids(count)
    statemachine._tail.seed(seed)
    tail = statemachine._tail.getrandbits(32 * count)
    statemachine._tail.seed()  # random again, as the module left it
    assert drawn == _ids_one_by_one(list(range(start, start + count)), tail, us, us)
