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


def test_stores_in_two_schemas_do_not_share_slot_locks(pg_url: str) -> None:
    """Advisory locks are database-wide: two stores in two schemas of one database,
    the same tenant in each, must not wait on each other's slot locks (they do not
    serialize on one clock row, so a transaction of several writes in each could
    deadlock: seen as a flaky "deadlock detected" between test workers)."""
    import pytest
    from sqlalchemy import text

    from .conftest import drop_pg_schema, make_pg_schema

    other_url, other_schema = make_pg_schema()
    a, b = Memory(pg_url), Memory(other_url)
    try:
        slots = ["slot-1", "slot-2"]
        with a._engine.backend.write() as ca, b._engine.backend.write() as cb:
            a._engine.backend.lock_slots(ca, "default", slots)
            cb.execute(text("SET LOCAL lock_timeout = '2s'"))
            b._engine.backend.lock_slots(cb, "default", slots)  # no wait: another store
        # within one store the lock still excludes
        with a._engine.backend.write() as ca, a._engine.backend.write() as ca2:
            a._engine.backend.lock_slots(ca, "default", slots)
            ca2.execute(text("SET LOCAL lock_timeout = '200ms'"))
            with pytest.raises(Exception, match="lock timeout"):
                a._engine.backend.lock_slots(ca2, "default", slots)
    finally:
        a.close()
        b.close()
        drop_pg_schema(other_schema)
