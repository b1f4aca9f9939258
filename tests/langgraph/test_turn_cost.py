"""A LangGraph turn costs the same whatever the store's size (issue #32): a
``get``, a ``put`` and a ``search`` inside one namespace of 20 items, on a
store that also holds 50 or 400 items in other namespaces, run as many
statements (and on SQLite about as many virtual machine instructions: the
reads search indexes, they do not scan the tenant's rows). Written against the
public ``BaseStore`` API only, so it holds whatever the item layout."""

from __future__ import annotations

from langgraph.store.base import PutOp

from langgraph.store.chronomem import ChronomemStore

from ..statements import Cost, counting
from .conftest import StoreFactory

NS = ("users", "me", "notes")


def _grown(store: ChronomemStore, others: int) -> None:
    store.batch(
        [PutOp(("users", f"o{i % 10}", "notes"), f"k{i}", {"text": f"other {i}"})
         for i in range(others)]
        + [PutOp(NS, f"n{i}", {"text": f"note {i} about tea"}) for i in range(20)]
    )  # fmt: skip


def _turn(store: ChronomemStore, i: int) -> Cost:
    with counting(store.memory) as cost:
        assert store.get(NS, "n3") is not None
        store.put(NS, f"new{i}", {"text": f"turn {i} likes tea"})
        found = store.search(NS, limit=10)
    assert len(found) == 10
    return cost


def test_a_get_put_search_turn_costs_the_same_at_50_and_400(make_store: StoreFactory) -> None:
    # two stores on one database: separate tenants
    small = make_store(tenant="small")
    large = make_store(tenant="large")
    _grown(small, 50)
    _grown(large, 400)
    _turn(small, 0), _turn(large, 0)  # warm
    a, b = _turn(small, 1), _turn(large, 1)
    assert len(a.statements) == len(b.statements), (a.statements, b.statements)
    if a.vm_steps or b.vm_steps:  # SQLite: scanning 350 more items would show
        assert abs(a.vm_steps - b.vm_steps) <= max(50, a.vm_steps // 20), (a.vm_steps, b.vm_steps)
