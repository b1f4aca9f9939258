"""Set-wise writes (issue #19): a batch larger than any page, with closings, on
both backends, reads back exactly what a reference dictionary says; text that
PostgreSQL stores escaped (backslashes, NUL) survives the array insert; and the
PostgreSQL array insert never loses rows when the tenant has no clock row."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import create_engine, func, select

from chronomem import Memory
from chronomem.backends import of
from chronomem.schema import sources

from .conftest import ManualClock, utc

JAN = utc(2026, 1, 1)


def test_a_large_batch_with_closings_reads_back_exactly(memory: Memory, clock: ManualClock) -> None:
    odd = ["plain", "back\\slash", "nul\x00byte", "tab\tand \\0 literal", "ünïcode ✓"]
    expected: dict[str, str] = {}
    first: dict[str, tuple[int, str]] = {}
    ops = []
    for i in range(1500):
        subject = f"person {i % 700} {odd[i % len(odd)]}"
        obj = f"city {i} {odd[(i * 3) % len(odd)]}"
        # one value per slot: a later write in the batch supersedes the earlier one
        ops.append(
            memory.assertion(
                subject,
                "lives_in",
                obj,
                valid_from=JAN + timedelta(minutes=i),
                exact=True,
                cardinality="one",
            )
        )
        expected[subject] = obj
        first.setdefault(subject, (i, obj))
    receipt = memory.apply(ops)
    assert len(receipt.fact_ids) == 1500  # every value holds for a while: all stored
    clock.advance(hours=1)
    first_known = clock()
    clock.advance(hours=1)
    # a second batch closes every current version written by the first
    ops2 = [
        memory.assertion(
            s,
            "lives_in",
            o + " moved",
            valid_from=JAN + timedelta(days=30),
            exact=True,
            cardinality="one",
        )
        for s, o in expected.items()
    ]
    memory.apply(ops2)
    for s, o in list(expected.items())[::37]:
        now = memory.facts(
            subject=s, predicate="lives_in", exact=True, valid_at=JAN + timedelta(days=31)
        )
        assert [f.object for f in now] == [o + " moved"]
        before = memory.facts(
            subject=s, predicate="lives_in", exact=True, valid_at=JAN + timedelta(days=29)
        )
        assert [f.object for f in before] == [o]
        i, o1 = first[s]
        early = memory.facts(
            subject=s, predicate="lives_in", exact=True, valid_at=JAN + timedelta(minutes=i)
        )
        assert [f.object for f in early] == [o1]
        # as believed before the second batch: unchanged
        then = memory.facts(
            subject=s,
            predicate="lives_in",
            exact=True,
            valid_at=JAN + timedelta(days=31),
            known_at=first_known,
        )
        assert [f.object for f in then] == [o]


def test_pg_array_insert_falls_back_without_a_clock_row(pg_url: str) -> None:
    Memory(pg_url).close()  # creates the schema
    engine = create_engine(pg_url)
    rows = [
        {
            "tenant": "no-clock-row",
            "fact_id": f"f{i}",
            "episode_id": f"e{i}",
            "recorded_at": i,
            "extractor": "x\\y\x00z",
        }
        for i in range(50)
    ]
    with engine.begin() as conn:
        of(conn).insert_rows(conn, sources, rows)
    with engine.connect() as conn:
        n = conn.execute(
            select(func.count()).where(sources.c.tenant == "no-clock-row")
        ).scalar_one()
        extractors = set(
            conn.execute(
                select(sources.c.extractor).where(sources.c.tenant == "no-clock-row")
            ).scalars()
        )
    engine.dispose()
    assert n == 50
    assert extractors == {"x\\y\x00z"}
