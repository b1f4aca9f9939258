"""Issue #14 G: reads and writes by id agree on what a scope can reach.

A read by id (``get``, ``why``) sees the facts of its scope and of the scopes
enclosing it. A write by id (``retract``, ``correct``, ``erase``) changes only
its own scope's facts: an enclosing scope's fact (readable, shared memory) is
a ``ScopeError``; anything the scope cannot read is ``NotFound`` — a
tenant-level memory no longer retracts or erases a user's fact that its own
``why()`` calls NotFound. The LangGraph store follows the same rule for
``erase(namespace, key)``: it erases only an item of its own scope, raises
``ScopeError`` for an item it can ``get`` through an enclosing scope, and
erases nothing it cannot ``get``.

Every ordered pair of the scopes below is tried, on both backends."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from chronomem import Memory, NotFound
from chronomem.errors import ScopeError
from langgraph.store.chronomem import ChronomemStore

SCOPES: dict[str, dict[str, str]] = {
    "tenant": {},
    "user u1": {"user": "u1"},
    "u1 session": {"user": "u1", "session": "s1"},
    "u1 agent": {"user": "u1", "agent": "a1"},
    "user u2": {"user": "u2"},
    "other tenant": {"tenant": "other"},
}
PAIRS = list(itertools.product(SCOPES, SCOPES))
ALL = ["live", "ended", "scheduled", "retracted"]


def _outcome(call: Callable[..., Any], *args: Any) -> str:
    try:
        call(*args)
    except NotFound:
        return "not found"
    except ScopeError:
        return "scope error"
    return "done"


def test_writes_by_id_reach_only_what_reads_by_id_reach(memory: Memory) -> None:
    seen: dict[tuple[str, str], tuple[bool, dict[str, str]]] = {}
    for n, (owner_name, caller_name) in enumerate(PAIRS):
        owner = memory.scoped(**SCOPES[owner_name])
        caller = memory.scoped(**SCOPES[caller_name])
        subject = f"s{n}"
        r = owner.remember(subject, "likes", "tea")
        fid = r.fact_ids[0]
        readable = caller.get(fid) != []
        assert readable == (_outcome(caller.why, fid) == "done")
        writes = {
            "correct": _outcome(caller.correct, fid, "coffee"),
            "retract": _outcome(caller.retract, fid),
            "erase": _outcome(caller.erase, fid),
        }
        seen[owner_name, caller_name] = (readable, writes)
        own = owner_name == caller_name
        for what, outcome in writes.items():
            if own:
                assert outcome == "done", (owner_name, caller_name, what)
            elif readable:
                assert outcome == "scope error", (owner_name, caller_name, what)
            else:
                assert outcome == "not found", (owner_name, caller_name, what)
        if not own:  # the owner's fact is untouched by every refused write
            assert [f.object for f in owner.facts(subject=subject, states=ALL)] == ["tea"]
    # the case, spelled out: tenant-level writes by id do not reach a user's fact
    assert seen["user u1", "tenant"] == (
        False,
        {"correct": "not found", "retract": "not found", "erase": "not found"},
    )
    assert seen["tenant", "user u1"][0] is True  # read-through to shared memory


def test_erase_subject_still_sweeps_narrower_scopes_unless_told_not_to(memory: Memory) -> None:
    """Erasure by subject is the administrative sweep (a data-subject request):
    from a scope it takes that subject's facts in every scope under it, unless
    ``descendants=False``."""
    memory.scoped(user="u1").remember("ann", "likes", "tea")
    memory.remember("ann", "likes", "jazz")
    assert memory.erase_subject("ann", descendants=False)["versions"] == 1
    assert [f.object for f in memory.scoped(user="u1").facts(subject="ann")] == ["tea"]
    assert memory.erase_subject("ann")["versions"] == 1
    assert memory.scoped(user="u1").facts(subject="ann") == []


def test_langgraph_erase_agrees_with_get(memory: Memory) -> None:
    stores = {name: ChronomemStore(memory, **kw) for name, kw in SCOPES.items()}
    for n, (owner_name, caller_name) in enumerate(PAIRS):
        ns, key = ("docs", f"n{n}"), "k"
        owner, caller = stores[owner_name], stores[caller_name]
        owner.put(ns, key, {"text": "hello"})
        readable = caller.get(ns, key) is not None
        own = owner_name == caller_name
        if own:
            assert caller.erase(ns, key)["versions"] > 0
            assert owner.get(ns, key) is None
            continue
        if readable:
            with pytest.raises(ScopeError):
                caller.erase(ns, key)
        else:
            assert set(caller.erase(ns, key).values()) == {0}, (owner_name, caller_name)
        item = owner.get(ns, key)
        assert item is not None and item.value == {"text": "hello"}, (owner_name, caller_name)
