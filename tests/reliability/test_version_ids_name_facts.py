"""Issue #14 K: every method taking a fact id also takes a version id or a ``Fact``.

``Receipt.added`` lists version ids, so ``retract(r.added[0])`` — the natural
thing right after ``r = remember(...)`` — used to fail with "no fact … in this
scope". A version id names exactly one fact (the fact it is a version of), so
``retract``, ``correct``, ``erase``, ``get``, ``why`` and ``apply`` with
``RetractOp``/``CorrectOp`` resolve it to that fact; a ``Fact`` names its
``id``. An id of another scope's version stays NotFound, with the id the
caller gave in the message (never the other scope's fact id)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chronomem import CorrectOp, Fact, Memory, NotFound, RetractOp, State

from ..conftest import utc

ALL = [s.value for s in State]
JAN, JUN, SEP = utc(2025, 1, 1), utc(2025, 6, 1), utc(2025, 9, 1)


def _ref(kind: str, m: Memory, fact_id: str, version_id: str) -> Any:
    if kind == "fact id":
        return fact_id
    if kind == "version id":
        return version_id
    return next(f for f in m.get(fact_id) if f.version_id == version_id)  # a Fact


KINDS = ["fact id", "version id", "Fact"]


@pytest.mark.parametrize("kind", KINDS)
def test_retract_takes_what_the_receipt_gives(memory: Memory, kind: str) -> None:
    r = memory.remember("alice", "works_at", "Acme", valid_from=JAN)
    ref = _ref(kind, memory, r.fact_ids[0], r.added[0])
    out = memory.retract(ref)
    assert out.retracted == r.added
    assert memory.facts(subject="alice") == []
    assert [(f.id, f.state) for f in memory.facts(subject="alice", states=ALL)] == [
        (r.fact_ids[0], State.RETRACTED)
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_correct_erase_get_why_take_a_version_id_or_a_fact(memory: Memory, kind: str) -> None:
    first = memory.remember("alice", "lives_in", "Paris", valid_from=JAN)
    # a bounded value inside Paris's interval splits it: the Paris fact now has
    # several versions, and every one of their ids names it
    fid = first.fact_ids[0]
    memory.remember("alice", "lives_in", "Rome", valid_from=SEP, valid_to=utc(2025, 10, 1))
    versions = {f.version_id for f in memory.why(fid).versions}
    assert first.added[0] in versions
    for vid in versions:
        ref = _ref(kind, memory, fid, vid) if kind != "Fact" else memory.get(fid)[0]
        assert [f.id for f in memory.get(ref)] == [f.id for f in memory.get(fid)]
        assert memory.get(ref) == memory.get(fid)
        assert memory.why(ref).fact_id == fid
        assert memory.why(ref).versions == memory.why(fid).versions
    current = next(f for f in memory.get(fid) if f.superseded_at is None)
    ref = _ref(kind, memory, fid, current.version_id)
    fixed = memory.correct(ref, "Lyon")
    assert fixed.retracted and fixed.added
    assert [f.object for f in memory.facts(subject="alice", valid_at=JUN)] == ["Lyon"]
    lyon = fixed.fact_ids[-1]
    lyon_version = memory.get(lyon)[0]
    ref = _ref(kind, memory, lyon, lyon_version.version_id)
    assert memory.erase(ref)["versions"] >= 1
    assert memory.get(lyon) == []
    with pytest.raises(NotFound):
        memory.why(lyon)


@pytest.mark.parametrize("op", ["retract", "correct"])
def test_apply_resolves_version_ids_in_ops(memory: Memory, op: str) -> None:
    r = memory.remember("bob", "likes", "tea")
    made: Any = RetractOp(r.added[0]) if op == "retract" else CorrectOp(r.added[0], "coffee")
    out = memory.apply([made])
    assert out.retracted == r.added
    assert [f.object for f in memory.facts(subject="bob")] == (
        [] if op == "retract" else ["coffee"]
    )


def test_an_old_version_id_names_the_same_fact(memory: Memory) -> None:
    r = memory.remember("carol", "lives_in", "Oslo", valid_from=JAN)
    memory.end("carol", "lives_in", at=JUN)  # closes r.added[0], inserts the ended version
    old = r.added[0]
    assert {f.version_id for f in memory.get(old)} != {old}  # the old version is not current
    memory.retract(old)
    assert memory.facts(subject="carol", states=["live", "ended", "scheduled"]) == []


def test_another_scopes_version_id_is_not_found_and_not_leaked(memory: Memory) -> None:
    victim = memory.scoped(user="victim")
    attacker = memory.scoped(user="attacker")
    r = victim.remember("dave", "likes", "secrets")
    vid, fid = r.added[0], r.fact_ids[0]
    calls: list[Callable[[], Any]] = [
        lambda: attacker.retract(vid),
        lambda: attacker.correct(vid, "x"),
        lambda: attacker.erase(vid),
        lambda: attacker.why(vid),
        lambda: attacker.apply([RetractOp(vid)]),
    ]
    for call in calls:
        with pytest.raises(NotFound) as err:
            call()
        assert fid not in str(err.value)
    assert attacker.get(vid) == []
    assert [f.object for f in victim.facts(subject="dave")] == ["secrets"]


def test_a_fact_of_another_scope_passed_as_object_is_not_found(memory: Memory) -> None:
    u1 = memory.scoped(user="u1")
    u1.remember("eve", "likes", "x")
    theirs: Fact = u1.facts(subject="eve")[0]
    with pytest.raises(NotFound):
        memory.scoped(user="u2").retract(theirs)
    with pytest.raises(NotFound):
        memory.scoped(user="u2").why(theirs)
