"""One write over many slots: on PostgreSQL each slot's writers take an advisory
lock, and a lock per slot ran out of the server's shared lock table ("out of
shared memory") for a batch of a few thousand slots (issue #30's 5,000 puts)."""

from __future__ import annotations

from chronomem import Memory
from chronomem.backends.postgres import SLOT_LOCK_BUCKETS, slot_bucket


def test_one_write_over_thirty_thousand_slots(memory: Memory) -> None:
    n = 30_000
    receipt = memory.remember_many(
        {"subject": f"user-{i}", "predicate": "lives_in", "obj": "Paris"} for i in range(n)
    )
    assert len(receipt.added) == n
    assert memory.stats().live_facts == n


def test_slot_buckets_are_stable_and_spread() -> None:
    keys = [f"{i:064x}" for i in range(4096)]
    buckets = [slot_bucket(k) for k in keys]
    assert buckets == [slot_bucket(k) for k in keys]  # the same lock for the same slot
    assert len(set(buckets)) == SLOT_LOCK_BUCKETS  # and every bucket in use
