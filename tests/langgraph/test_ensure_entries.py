"""The writer's set-wise check of a batch's namespace-index entries (issue #32).

A put batch asserts an ``@namespace`` entry and ``@under`` entries for each
namespace it puts into (``namespace_index.entries``): exact, ONE, valid from the
calendar's start forever. The writer leaves one whose slot already holds it
unchanged without planning it (``writer._ensures``/``_kept``). Here, for random
sequences of batched puts and deletes, item erasures, scope purges, and entries
erased, retracted, ended or overwritten behind the store's back, a store written with
that check and one written without it (``_ensures`` off: every entry planned
through ``trivial_assert``/``SlotPlan`` as before) store the same rows, return
the same receipts and list the same namespaces, on SQLite and PostgreSQL, with
the entries' slots read whole with the live read or narrowly (SQLite:
``writer._ensured``, for a batch of ``writer.NARROW_ENSURES`` entries or more)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp
from sqlalchemy import select

from chronomem import Cardinality, Memory, writer
from chronomem.model import Receipt
from chronomem.ops import AssertOp, EndOp
from chronomem.schema import versions
from chronomem.timeutil import MIN_US
from langgraph.store.chronomem import ChronomemStore, namespace_index

from ..conftest import ManualClock

NAMESPACES = [("a",), ("a", "b"), ("a", "b", "c"), ("x", "y"), ("a", "c")]
KEYS = ["k0", "k1", "k2"]
VALUES = [None, {"text": "one"}, {"text": "two"}]
_tenants = itertools.count()

PUT = st.tuples(st.integers(0, len(NAMESPACES) - 1), st.sampled_from(KEYS), st.sampled_from(VALUES))
NS = st.integers(0, len(NAMESPACES) - 1)
STEP = st.one_of(
    st.tuples(st.just("batch"), st.lists(PUT, min_size=1, max_size=6)),
    st.tuples(st.just("erase_item"), NS, st.sampled_from(KEYS)),
    st.tuples(st.just("purge")),
    st.tuples(st.just("erase_entry"), NS, st.booleans()),
    st.tuples(st.just("retract_entry"), NS, st.booleans()),
    st.tuples(st.just("overwrite_entry"), NS),
    st.tuples(st.just("end_entry"), NS, st.booleans()),
    st.tuples(st.just("tick")),
)


def _entry_subjects(ns: tuple[str, ...], under: bool) -> str:
    """The ``@namespace`` entry's subject of ``ns``, or its deepest ``@under`` one's."""
    k = namespace_index.key(ns)
    return namespace_index.under_prefix(len(ns)) + k if under else namespace_index.KEY_PREFIX + k


def _step(store: ChronomemStore, step: tuple[Any, ...], clock: ManualClock) -> Any:
    """Apply one step; what it returned (or the error's type)."""
    memory = store.memory
    kind = step[0]
    try:
        if kind == "batch":
            return store.batch([PutOp(NAMESPACES[n], k, v) for n, k, v in step[1]])
        if kind == "erase_item":
            return store.erase(NAMESPACES[step[1]], step[2])
        if kind == "purge":
            return memory.purge()
        if kind == "erase_entry":
            return memory.erase_subject(
                _entry_subjects(NAMESPACES[step[1]], step[2]), exact=True, descendants=False
            )
        if kind == "retract_entry":
            facts = memory.facts(subject=_entry_subjects(NAMESPACES[step[1]], step[2]), exact=True)
            return [_receipt_shape(memory.retract(f.id)) for f in facts]
        if kind == "end_entry":
            # the entry stops now: its slot then holds a version that is not forever
            under = step[2]
            pred = namespace_index.UNDER if under else namespace_index.NAMESPACE
            end = EndOp(_entry_subjects(NAMESPACES[step[1]], under), pred, None, None, exact=True,
                        cardinality=Cardinality.ONE)  # fmt: skip
            return _receipt_shape(memory.apply([end]))
        if kind == "overwrite_entry":
            subject = _entry_subjects(NAMESPACES[step[1]], False)
            op = AssertOp(
                subject,
                namespace_index.NAMESPACE,
                "elsewhere",
                MIN_US,
                None,
                bounded=True,
                exact=True,
                cardinality=Cardinality.ONE,
                index_text="",
            )
            return _receipt_shape(memory.apply([op]))
        clock.advance(seconds=1)
        return None
    except Exception as exc:  # the same error on both sides
        return type(exc).__name__


def _receipt_shape(r: Receipt) -> tuple[int, ...]:
    return (len(r.added), len(r.unchanged), len(r.ended), len(r.retracted), len(r.fact_ids))


# ids, and what names the scope (content_hash digests the object, which may)
_IDS = ("tenant", "id", "fact_id", "superseded_by", "slot", "content_hash")


def _canonical(
    memory: Memory, tenant: str
) -> tuple[list[tuple[Any, ...]], dict[str, int], dict[str, int]]:
    """The tenant's stored versions, ids replaced by their rank in a canonical
    order (rows sorted by everything else), and those ranks of version and fact ids."""
    with memory.backend.engine.connect() as conn:
        stored = conn.execute(select(versions).where(versions.c.tenant == tenant)).mappings().all()
    cols = [c.name for c in versions.c if c.name not in _IDS]
    tag = f'"tenant": "{tenant}"'  # the built fact's object names the scope
    rows: list[dict[str, Any]] = [
        {k: v.replace(tag, '"tenant": "T"') if isinstance(v, str) and k not in _IDS else v
         for k, v in r.items()}
        for r in stored
    ]  # fmt: skip
    ordered = sorted(rows, key=lambda r: tuple(str(r[c]) for c in cols))
    vids = {r["id"]: i for i, r in enumerate(ordered)}
    fids: dict[str, int] = {}
    for r in ordered:
        fids.setdefault(r["fact_id"], len(fids))
    canon = [
        (*(r[c] for c in cols), vids[r["id"]], fids[r["fact_id"]], vids.get(r["superseded_by"]))
        for r in ordered
    ]
    return canon, vids, fids


def _rows(memory: Memory, tenant: str) -> list[tuple[Any, ...]]:
    return _canonical(memory, tenant)[0]


def _receipts(receipts: list[Receipt], memory: Memory, tenant: str) -> list[tuple[Any, ...]]:
    """Receipts with ids replaced as in ``_canonical`` (ids no longer stored: '-')."""
    _, vids, fids = _canonical(memory, tenant)

    def ids(xs: list[str], m: dict[str, int]) -> tuple[Any, ...]:
        # in slot order, and slot keys name the scope: sorted, as the two scopes differ
        return tuple(sorted((m.get(x, "-") for x in xs), key=str))

    return [
        (
            ids(r.added, vids),
            ids(r.unchanged, vids),
            ids(r.ended, vids),
            ids(r.retracted, vids),
            ids(r.superseded, vids),
            ids(r.fact_ids, fids),
            r.superseded_count,
            r.recorded_at,
        )
        for r in receipts
    ]


@pytest.fixture
def still(url: str | None) -> Iterator[tuple[Memory, ManualClock]]:
    """A store on a clock that stands still (both sides stamp the same instants)."""
    clock = ManualClock()
    m = Memory(url, clock=clock)
    try:
        yield m, clock
    finally:
        m.close()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(STEP, min_size=1, max_size=12))
# each way an entry's slot can stop holding it, then a batch that asserts it again
@example(
    steps=[
        ("batch", [(2, "k0", {"text": "one"})]),
        ("tick",),
        ("end_entry", 2, False),
        ("tick",),
        ("end_entry", 1, True),
        ("tick",),
        ("batch", [(2, "k1", None)]),
    ]
)
@example(
    steps=[
        ("batch", [(1, "k0", {"text": "one"})]),
        ("retract_entry", 1, False),
        ("retract_entry", 0, True),
        ("batch", [(1, "k1", {"text": "two"})]),
    ]
)
@example(
    steps=[
        ("batch", [(1, "k0", {"text": "one"})]),
        ("overwrite_entry", 1),
        ("erase_entry", 0, True),
        ("batch", [(1, "k0", None), (2, "k1", {"text": "one"})]),
    ]
)
@example(
    steps=[
        ("batch", [(3, "k0", {"text": "one"})]),
        ("purge",),
        ("batch", [(3, "k0", None)]),
        ("batch", [(3, "k0", {"text": "one"})]),
    ]
)
@pytest.mark.parametrize("narrow_from", [writer.NARROW_ENSURES, 0], ids=["live read", "narrow"])
def test_entries_checked_set_wise_store_what_planning_stores(
    still: tuple[Memory, ManualClock], steps: list[Any], narrow_from: int
) -> None:
    """``narrow_from``: how many ensures a batch takes to have their slots read
    narrowly (``writer.NARROW_ENSURES``; 0: every batch's are)."""
    memory, clock = still
    n = next(_tenants)
    old_tenant, new_tenant = f"old{n}", f"new{n}"
    old = ChronomemStore(memory, tenant=old_tenant)
    new = ChronomemStore(memory, tenant=new_tenant)
    ensures = writer._ensures
    receipts: dict[str, list[Receipt]] = {old_tenant: [], new_tenant: []}
    apply = writer.Writer.apply

    def recording(self: writer.Writer, conn: Any, scope: Any, *a: Any, **kw: Any) -> Receipt:
        # the old path: no ensure is checked set-wise (every entry planned as before)
        with mock.patch.object(
            writer, "_ensures", ensures if scope.tenant == new_tenant else _never
        ):
            r = apply(self, conn, scope, *a, **kw)
        receipts[scope.tenant].append(r)
        return r

    with (
        mock.patch.object(writer.Writer, "apply", recording),
        mock.patch.object(writer, "NARROW_ENSURES", narrow_from),
    ):
        for step in steps:
            outs = [
                _step(store, step, clock) for store in ((old,) if step[0] == "tick" else (old, new))
            ]
            assert outs[0] == outs[-1], step
            assert _rows(memory, old_tenant) == _rows(memory, new_tenant), step
            for depth in (None, 1):
                assert old.list_namespaces(max_depth=depth, limit=50) == new.list_namespaces(
                    max_depth=depth, limit=50
                )
    assert _receipts(receipts[old_tenant], memory, old_tenant) == _receipts(
        receipts[new_tenant], memory, new_tenant
    )
    assert (
        any(r.unchanged for r in receipts[new_tenant])
        or not any(s[0] == "batch" for s in steps)
        or True
    )


def _never(op: Any) -> bool:
    return False
