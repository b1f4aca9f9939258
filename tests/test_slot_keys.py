"""Slot keys are injective: no two slots share a key, whatever characters the
subject, predicate, object or scope hold (issue #14 C), and stores written with
the old (plain-join) keys keep working."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import bindparam, select, update

from chronomem import Memory, keycodec
from chronomem.backends.postgres import lock_key
from chronomem.schema import rekey_legacy_slots, versions
from chronomem.scope import Scope
from chronomem.slotkeys import legacy_slot_key, slot_key

# Text weighted towards the characters the encodings use.
_ALPHABET = st.sampled_from(["a", "b", "~", keycodec.ESC, keycodec.SEP_SLOT, keycodec.SEP_FIELD])
_tricky = st.lists(_ALPHABET, max_size=6).map("".join)
_text = st.one_of(_tricky, st.text(max_size=8))
_parts = st.lists(_text, min_size=1, max_size=4)
_SEPS = [keycodec.SEP_SLOT, keycodec.SEP_FIELD]


@settings(max_examples=400)
@given(a=_parts, b=_parts, sep=st.sampled_from(_SEPS))
def test_join_is_injective(a: list[str], b: list[str], sep: str) -> None:
    if a != b:
        assert keycodec.join(a, sep) != keycodec.join(b, sep)
    assert keycodec.split(keycodec.join(a, sep), sep) == a


@settings(max_examples=300)
@given(parts=st.lists(st.text(max_size=8), min_size=1, max_size=4), sep=st.sampled_from(_SEPS))
def test_join_equals_the_legacy_join_without_special_characters(parts: list[str], sep: str) -> None:
    """No migration for ordinary text: the key is what older stores hold."""
    if not any(keycodec.ESC in p or sep in p for p in parts):
        assert keycodec.join(parts, sep) == keycodec.legacy_join(parts, sep)


_slot = st.tuples(_text, _text, st.one_of(st.none(), _text.filter(bool)))


@settings(max_examples=400)
@given(x=_slot, y=_slot, user=st.sampled_from([None, "u1", "u2"]))
def test_slot_key_is_injective(
    x: tuple[str, str, str | None], y: tuple[str, str, str | None], user: str | None
) -> None:
    scope = Scope("t", user)
    if x != y:
        assert slot_key(scope, *x) != slot_key(scope, *y)
    assert slot_key(scope, *x) != slot_key(Scope("t", "other"), *x)


@given(t1=st.text(min_size=1, max_size=6), t2=st.text(min_size=1, max_size=6), s=_tricky)
def test_lock_key_is_injective(t1: str, t2: str, s: str) -> None:
    if t1 != t2:
        assert lock_key(t1, s) != lock_key(t2, s)
    assert lock_key(t1, s + keycodec.SEP_FIELD) != lock_key(t1 + keycodec.SEP_FIELD, s)


def test_the_reported_collision_keeps_both_facts(memory: Memory) -> None:
    memory.apply([memory.assertion("a\x1eb", "c", "A", exact=True, cardinality="one")])
    memory.apply([memory.assertion("a", "b\x1ec", "B", exact=True, cardinality="one")])
    live = sorted((f.subject, f.predicate, f.object) for f in memory.facts())
    assert live == [("a", "b\x1ec", "B"), ("a\x1eb", "c", "A")]


def test_escape_character_collisions_keep_both_facts(memory: Memory) -> None:
    # With the escape character itself: "x\x1d" + "~y" vs "x" + "\x1d~y"-shaped parts.
    e, s = keycodec.ESC, keycodec.SEP_SLOT
    pairs = [(f"x{e}", f"~{s}y"), (f"x{e}~", f"{s}y"), (f"x{e}{s}", "y"), ("x", f"{e}~y")]
    for subj, pred in pairs:
        memory.apply([memory.assertion(subj, pred, "v", exact=True, cardinality="one")])
    live = sorted((f.subject, f.predicate) for f in memory.facts())
    assert live == sorted(pairs)


def test_many_valued_slots_with_separators_stay_apart(memory: Memory) -> None:
    s = keycodec.SEP_SLOT
    memory.apply([memory.assertion("a", f"p{s}x", "o", exact=True, cardinality="many")])
    memory.apply([memory.assertion("a", "p", f"x{s}o", exact=True, cardinality="many")])
    memory.apply([memory.assertion("a", "p", "other", exact=True, cardinality="one")])
    live = sorted((f.predicate, f.object) for f in memory.facts())
    assert live == [("p", "other"), ("p", f"x{s}o"), (f"p{s}x", "o")]


def _set_legacy_keys(memory: Memory) -> int:
    """Rewrite every row's slot to the key an older chronomem stored."""
    with memory.backend.write() as conn:
        rows = conn.execute(select(versions)).mappings().all()
        changes = []
        for r in rows:
            scope = Scope(r["tenant"], r["user_id"] or None, r["agent_id"] or None)
            for okey in (r["object_key"], None):
                if r["slot"] == slot_key(scope, r["subject_key"], r["predicate"], okey):
                    old = legacy_slot_key(scope, r["subject_key"], r["predicate"], okey)
                    if old != r["slot"]:
                        changes.append({"t": r["tenant"], "vid": r["id"], "new": old})
                    break
        conn.execute(
            update(versions)
            .where(versions.c.tenant == bindparam("t"), versions.c.id == bindparam("vid"))
            .values(slot=bindparam("new")),
            changes,
        )
        return len(changes)


def test_rows_keyed_by_the_legacy_join_are_rekeyed(memory: Memory) -> None:
    s = keycodec.SEP_SLOT
    memory.apply(
        [
            memory.assertion(f"al{s}ice", "city", "Paris", exact=True, cardinality="one"),
            memory.assertion("bob", "likes", f"tea{s}", exact=True, cardinality="many"),
            memory.assertion("carol", "plain", "x", exact=True, cardinality="one"),
        ]
    )
    assert _set_legacy_keys(memory) == 2  # the plain row's key is the same in both forms
    with memory.backend.write() as conn:
        assert rekey_legacy_slots(conn) == 2
    with memory.backend.write() as conn:
        assert rekey_legacy_slots(conn) == 0  # idempotent
    # the rekeyed slots are the ones new writes use: a new value supersedes the old
    memory.apply([memory.assertion(f"al{s}ice", "city", "Rome", exact=True, cardinality="one")])
    memory.apply([memory.assertion("bob", "likes", f"tea{s}", exact=True, cardinality="many")])
    live = sorted((f.subject, f.object) for f in memory.facts())
    assert live == [(f"al{s}ice", "Rome"), ("bob", f"tea{s}"), ("carol", "x")]
    past = memory.facts(subject=f"al{s}ice", exact=True, states=["live", "ended"])
    assert sorted(f.object for f in past) == ["Paris", "Rome"]


@pytest.mark.parametrize("backend", ["sqlite"])
def test_legacy_rows_without_rekey_would_duplicate(memory: Memory) -> None:
    """Why the re-key is needed: a legacy-keyed row is not found by the new key."""
    s = keycodec.SEP_SLOT
    memory.apply([memory.assertion(f"a{s}b", "c", "A", exact=True, cardinality="one")])
    _set_legacy_keys(memory)
    memory.apply([memory.assertion(f"a{s}b", "c", "B", exact=True, cardinality="one")])
    assert len(memory.facts()) == 2


def test_opening_an_older_store_rekeys_its_legacy_rows(durable_url: str) -> None:
    """The re-key runs as a schema migration when a store of an older version opens."""
    from sqlalchemy import update

    from chronomem.schema import meta

    s = keycodec.SEP_SLOT
    m = Memory(durable_url)
    m.apply([m.assertion(f"al{s}ice", "city", "Paris", exact=True, cardinality="one")])
    assert _set_legacy_keys(m) == 1
    with m.backend.write() as conn:  # as an older version left it
        conn.execute(update(meta).where(meta.c.key == "schema_version").values(value="4"))
    m.close()
    m = Memory(durable_url)
    m.apply([m.assertion(f"al{s}ice", "city", "Rome", exact=True, cardinality="one")])
    assert [f.object for f in m.facts()] == ["Rome"]  # superseded, not duplicated
    m.close()
