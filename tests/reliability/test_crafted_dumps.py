"""Issue #31, items 1-5 and 10: a dump is input from outside. A crafted or damaged
dump is refused with nothing written; what import writes obeys every rule a
normal write obeys. Both backends."""

from __future__ import annotations

import io
from typing import Any

import pytest

from chronomem import Memory
from chronomem.errors import ChronomemError, InvalidInput, TimeTravel
from chronomem.exchange import import_jsonl
from tests.conftest import ManualClock, utc
from tests.reliability._dumps import dump, load, recount, snapshot


def _two_users(m: Memory) -> tuple[Any, Any]:
    alice, bob = m.scoped(user="alice"), m.scoped(user="bob")
    a = alice.remember("alice", "lives_in", "Paris").fact_ids[0]
    b = bob.remember("bob", "lives_in", "Rome").fact_ids[0]
    return a, b


def _refused(
    dst: Memory, recs: list[dict[str, Any]], match: str | None, err: type = InvalidInput
) -> None:
    before = snapshot(dst)
    with pytest.raises(err, match=match):
        load(dst, recs)
    assert snapshot(dst) == before


def _versions(recs: list[dict[str, Any]], user: str) -> list[dict[str, Any]]:
    return [r for r in recs if r["type"] == "version" and r["scope"].get("user") == user]


# -- item 1: scope breach --------------------------------------------------------------------
def test_a_dump_cannot_give_bob_alices_fact_id(memory: Memory) -> None:
    _two_users(memory)
    recs = dump(memory)
    (a,), (b,) = _versions(recs, "alice"), _versions(recs, "bob")
    b["fact_id"] = a["fact_id"]
    dst = memory.scoped(tenant="copy")
    _refused(dst, recs, "two scopes")


def test_a_dump_cannot_give_bob_alices_slot(memory: Memory) -> None:
    _two_users(memory)
    recs = dump(memory)
    (a,), (b,) = _versions(recs, "alice"), _versions(recs, "bob")
    b["slot"] = a["slot"]
    _refused(memory.scoped(tenant="copy"), recs, "slot")


def test_records_outside_the_headers_scope_are_refused(memory: Memory) -> None:
    _two_users(memory)
    alice_dump = dump(memory.scoped(user="alice"))
    (b,) = _versions(dump(memory), "bob")
    _refused(memory.scoped(tenant="copy"), recount([*alice_dump, b]), "outside the dump's scope")


@pytest.mark.parametrize("name", ["x\x00y", "x\x1fy", " padded", "u" * 300, ""])
def test_scope_names_are_checked_as_a_write_checks_them(memory: Memory, name: str) -> None:
    memory.scoped(user="alice").remember("alice", "likes", "tea")
    recs = dump(memory)
    for r in recs[1:]:
        if "scope" in r:
            r["scope"] = {"user": "alice", "agent": name} if name else {"agent": "", "user": "x"}
    _refused(memory.scoped(tenant="copy"), recs, None, ChronomemError)


def test_an_import_into_another_tenant_keys_slots_for_that_tenant(memory: Memory) -> None:
    memory.remember("alice", "lives_in", "Paris")
    dst = memory.scoped(tenant="copy")
    load(dst, dump(memory))
    dst.remember("alice", "lives_in", "Rome")  # lives_in holds one value
    assert [f.object for f in dst.facts(subject="alice")] == ["Rome"]
    assert dst.check().ok


# -- item 2: silent loss ---------------------------------------------------------------------
def test_a_truncated_dump_is_refused(memory: Memory, clock: ManualClock) -> None:
    for i in range(4):
        memory.remember("alice", "likes", f"thing {i}")
        clock.advance(days=1)
    recs = dump(memory)
    _refused(memory.scoped(tenant="copy"), recs[:-2], "cut short")


def test_a_dump_missing_a_successor_is_refused(memory: Memory, clock: ManualClock) -> None:
    memory.remember("alice", "lives_in", "Paris")
    clock.advance(days=1)
    memory.remember("alice", "lives_in", "Rome")
    recs = dump(memory)
    closed = next(r for r in recs if r["type"] == "version" and r["superseded_by"])
    cut = recount([r for r in recs if r.get("id") != closed["superseded_by"]])
    _refused(memory.scoped(tenant="copy"), cut, "successor")


def test_a_dump_after_an_erase_imports(memory: Memory, clock: ManualClock) -> None:
    memory.remember("alice", "lives_in", "Paris", valid_from=utc(2020, 1, 1))
    clock.advance(days=1)
    rome = memory.remember("alice", "lives_in", "Rome", valid_from=utc(2020, 1, 1)).fact_ids[0]
    clock.advance(days=1)
    memory.erase(rome)  # Paris's closed version still names Rome's as its successor
    recs = dump(memory)
    assert recs[0]["erased_successors"]
    dst = memory.scoped(tenant="copy")
    load(dst, recs)
    assert dst.check().ok
    assert dst.facts(subject="alice") == memory.facts(subject="alice")


# -- item 3: clock drag ----------------------------------------------------------------------
def test_a_future_instant_in_a_dump_is_refused(memory: Memory) -> None:
    memory.remember("alice", "likes", "tea")
    recs = dump(memory)
    for r in recs:
        if r["type"] == "version":
            r["recorded_at"] = "3000-01-01T00:00:00+00:00"
    dst = memory.scoped(tenant="copy")
    _refused(dst, recs, "clock", TimeTravel)
    dst.remember("bob", "likes", "coffee")
    assert [f.object for f in dst.facts(as_of=dst.now())] == ["coffee"]


# -- item 4: a dump cannot lock a tenant -----------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value"),
    [("cardinality", "several"), ("volatility", "glacial"), ("name", "Not Folded"),
     ("canonical", "nothing_here")],
)  # fmt: skip
def test_registry_rows_are_checked_as_a_registration(
    memory: Memory, field: str, value: str
) -> None:
    memory.register_predicate("works_at", cardinality="one")
    memory.register_predicate("hobby", aliases=["pastime"])
    recs = dump(memory)
    pred = next(r for r in recs if r["type"] == "predicate" and r["name"] == "pastime")
    if field != "canonical":
        pred = next(r for r in recs if r["type"] == "predicate" and r["name"] == "works_at")
    pred[field] = value
    dst = memory.scoped(tenant="copy")
    _refused(dst, recs, field if field != "canonical" else "names no predicate")
    dst.register_predicate("lives_in_now", cardinality="one")  # the tenant still works
    dst.remember("alice", "lives_in_now", "Paris")
    assert dst.search("Paris", k=1)


# -- item 5: export what import needs --------------------------------------------------------
def test_a_user_export_citing_a_tenant_episode_imports(memory: Memory) -> None:
    ep = memory.add_episode("the company moved to Paris")
    alice = memory.scoped(user="alice")
    fid = alice.remember("alice", "works_in", "Paris", source=ep).fact_ids[0]
    recs = dump(alice)
    dst = memory.scoped(tenant="copy")
    counts = load(dst, recs)
    assert counts["episodes"] == 1 and counts["sources"] == 1
    why = dst.scoped(user="alice").why(fid)
    assert [e.text for e in why.episodes] == ["the company moved to Paris"]
    assert dst.check().ok


# -- item 10: only chronomem errors ----------------------------------------------------------
def _line_refused(memory: Memory, line: str) -> None:
    recs = dump(memory)
    head = "\n".join(__import__("json").dumps(r) for r in recs[:1])
    dst = memory.scoped(tenant="copy")
    before = snapshot(dst)
    with pytest.raises(InvalidInput):
        import_jsonl(dst, io.StringIO(head + "\n" + line))
    assert snapshot(dst) == before


def test_deeply_nested_json_is_an_invalid_input(memory: Memory) -> None:
    memory.remember("alice", "likes", "tea")
    _line_refused(memory, '{"type": "episode", "metadata": ' + "[" * 5000 + "]" * 5000 + "}")
    _line_refused(memory, '{"type": "episode", "metadata": {"a": ' + "[" * 150 + "]" * 150 + "}}")
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(1500):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(InvalidInput, match="nests deeper"):
        memory.remember("alice", "likes", "tea", metadata=deep)
    with pytest.raises(InvalidInput, match="nests deeper"):
        memory.add_episode("hello", metadata=deep)


def test_lone_surrogates_and_huge_instants_in_a_dump_are_invalid_input(memory: Memory) -> None:
    memory.remember("alice", "likes", "tea")
    recs = dump(memory)
    for field, value in (("object", "\ud800"), ("recorded_at", 2**70), ("valid_to", -(2**70)),
                         ("metadata", {"k": "\udfff"}), ("content_hash", "x" * 41)):  # fmt: skip
        edited = [dict(r) for r in recs]
        for r in edited:
            if r["type"] == "version":
                r[field] = value
        _refused(memory.scoped(tenant="copy"), edited, None)


def test_an_export_is_one_snapshot_under_concurrent_writes(durable_url: str) -> None:
    """The export counts, then streams: a write committed in between by another
    process must not be in the dump (its counts would then say it was cut short)."""
    from chronomem.exchange import export_records

    with Memory(durable_url) as m, Memory(durable_url) as other:
        m.remember("alice", "likes", "tea")
        records = export_records(m)
        header = next(records)
        other.remember("bob", "likes", "coffee")
        recs = [header, *records]
        assert sum(r["type"] == "version" for r in recs) == header["counts"]["versions"] == 1
        load(m.scoped(tenant="copy"), recs)
