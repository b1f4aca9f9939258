"""A search within a prefix skips its closing read while the tenant's clock
stamp has not moved since the read was kept (``HeldRows.stamped``), and while
the valid instant searched stays short of the next one at which a version of
the prefix begins or ends. Every write moves the stamp — from another
``Memory`` on the same store too, a write stamped in the past (``import_fact``)
and an erasure among them — so what a long-lived reader finds is what a reader
holding nothing finds. Model: after each step the long-lived reader's search
equals the same search by a second reader whose held rows are dropped first."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, example, given, settings

from chronomem import Memory
from chronomem.errors import NotFound, TimeTravel
from chronomem.retrieval.cache import HeldRows

from .conftest import ManualClock

SUBJECTS = ["ada", "bob", "cid"]
CITIES = ["paris", "rome", "oslo", "lima"]

# ("now", subject, city): a write at the clock's instant; ("past", subject, city,
# back): an import stamped ``back`` seconds before the latest stamp; ("from" | "to",
# subject, city, ahead): a write valid from / until ``ahead`` seconds on;
# ("erase", subject): every fact about the subject erased; ("tick", seconds): the
# clock moves (so does the valid instant searched); ("ask",): the reader searches
STEP = st.one_of(
    st.tuples(st.just("now"), st.sampled_from(SUBJECTS), st.sampled_from(CITIES)),
    st.tuples(
        st.just("past"),
        st.sampled_from(SUBJECTS),
        st.sampled_from(CITIES),
        st.integers(min_value=0, max_value=2),
    ),
    st.tuples(
        st.sampled_from(["from", "to"]),
        st.sampled_from(SUBJECTS),
        st.sampled_from(CITIES),
        st.integers(min_value=1, max_value=3),
    ),
    st.tuples(st.just("erase"), st.sampled_from(SUBJECTS)),
    st.tuples(st.just("tick"), st.integers(min_value=1, max_value=3)),
    st.tuples(st.just("ask")),
)


def found(memory: Memory) -> list[tuple[Any, ...]]:
    """A search within the prefix: every hit, in order, with its score."""
    return [
        (h.fact.version_id, h.fact.object, h.fact.state, h.score)
        for h in memory.search("lives in paris rome", k=50, subject_prefix="ns ")
        if h.fact
    ]


def lean(memory: Memory) -> list[tuple[Any, ...]]:
    """``found`` by the lean route (``search_scored``: on a SQLite file its first
    try runs outside a transaction, ``within._OneStatement``)."""
    hits = memory.search_scored("lives in paris rome", k=50, subject_prefix="ns ")
    assert hits is not None
    return [(r.version_id, r.object, state, score) for r, state, score, _ in hits]


def fresh(memory: Memory) -> list[tuple[Any, ...]]:
    """``found`` by a reader holding no row (nothing kept, nothing stamped)."""
    memory._engine.retrieval.mirrors.held.clear()
    return found(memory)


@contextlib.contextmanager
def memories(url: str, clock: ManualClock, n: int) -> Iterator[list[Memory]]:
    tenant = uuid.uuid4().hex  # each example starts from an empty tenant of its own
    opened = [Memory(url, clock=clock, tenant=tenant) for _ in range(n)]
    try:
        yield opened
    finally:
        for m in opened:
            m.close()


def run(url: str, steps: list[tuple[Any, ...]]) -> None:
    clock = ManualClock()
    with memories(url, clock, 3) as (writer, reader, other):
        latest = None
        for step in steps:
            kind = step[0]
            if kind == "now":
                latest = writer.remember(f"ns {step[1]}", "lives_in", step[2]).recorded_at
            elif kind == "past" and latest is not None:
                at = latest - timedelta(seconds=step[3])
                # refused (nothing written) when the subject changed after ``at``
                with contextlib.suppress(TimeTravel):
                    writer.import_fact(f"ns {step[1]}", "lives_in", step[2], recorded_at=at)
            elif kind in ("from", "to"):
                when = {
                    ("valid_from" if kind == "from" else "valid_to"): clock()
                    + timedelta(seconds=step[3])
                }
                latest = writer.remember(f"ns {step[1]}", "lives_in", step[2], **when).recorded_at
            elif kind == "erase":
                with contextlib.suppress(NotFound):  # nothing about it yet
                    writer.erase_subject(f"ns {step[1]}")
            elif kind == "tick":
                clock.advance(seconds=step[1])
            else:
                assert found(reader) == fresh(other)
                assert lean(reader) == lean(other) == found(other)
        assert found(reader) == fresh(other)
        assert lean(reader) == lean(other) == found(other)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(STEP, min_size=1, max_size=14))
# another store's write after the reader kept its read
@example([("now", "ada", "paris"), ("ask",), ("ask",), ("now", "bob", "rome")])
# a write closing a version the reader holds, then one stamped in the past
@example(
    [
        ("now", "ada", "paris"),
        ("ask",),
        ("now", "ada", "rome"),
        ("ask",),
        ("past", "bob", "rome", 0),
    ]
)
# an erasure
@example([("now", "ada", "paris"), ("now", "bob", "rome"), ("ask",), ("erase", "ada")])
# no write, but the valid instant passes a version's start, then another's end
@example(
    [
        ("now", "ada", "paris"),
        ("from", "bob", "rome", 2),
        ("to", "cid", "paris", 3),
        ("ask",),
        ("tick", 2),
        ("ask",),
        ("tick", 1),
    ]
)
def test_a_long_lived_reader_finds_what_a_reader_holding_nothing_finds(
    durable_url: str, steps: list[tuple[Any, ...]]
) -> None:
    run(durable_url, steps)


def test_an_unmoved_stamp_answers_without_the_closing_read(
    durable_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's second search is answered by the kept read (the model above
    would pass as well if nothing were ever kept)."""
    answered: list[bool] = []
    real = HeldRows.stamped

    def stamped(self: HeldRows, *args: Any) -> Any:
        out = real(self, *args)
        answered.append(out is not None)
        return out

    monkeypatch.setattr(HeldRows, "stamped", stamped)
    clock = ManualClock()
    with memories(durable_url, clock, 2) as (writer, reader):
        writer.remember("ns ada", "lives_in", "paris")
        first = found(reader)  # (read again in a read transaction: the registry loads)
        assert first and answered[0] is False
        assert found(reader) == first and answered[-1] is True
        clock.advance(seconds=1)
        later = found(reader)  # a later valid instant (recency moves the score)
        assert [h[0] for h in later] == [h[0] for h in first] and answered[-1] is True
        writer.remember("ns bob", "lives_in", "rome")  # another store's write
        assert len(found(reader)) == len(first) + 1 and answered[-1] is False


def test_an_unmoved_stamp_skips_the_range_count(
    durable_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the clock is at the stamp a view is kept at, the first statement
    does not count the prefix's range again (``size`` None: the statement's
    ``CASE`` skips it); any write, from another store too, brings the count back,
    and a prefix past ``ROW_CAP`` still leaves the prefix (``search_scored``
    answers None) as it did before anything was kept."""
    from chronomem import reads
    from chronomem.retrieval import within

    sizes: list[int | None] = []
    real = reads.prefix_size_and_registry

    def spy(*args: Any, **kw: Any) -> Any:
        out = real(*args, **kw)
        sizes.append(None if out is None else out.size)
        return out

    monkeypatch.setattr(reads, "prefix_size_and_registry", spy)
    clock = ManualClock()
    with memories(durable_url, clock, 2) as (writer, reader):
        writer.remember("ns ada", "lives_in", "paris")
        first = found(reader)  # (read again in a read transaction: the registry loads)
        assert sizes[0] == 1
        assert found(reader) == first and sizes[-1] is None
        del sizes[:]
        writer.remember("ns bob", "lives_in", "rome")  # another store's write
        clock.advance(seconds=1)
        assert len(found(reader)) == len(first) + 1 and sizes[0] == 2
        assert found(reader) and sizes[-1] is None
        monkeypatch.setattr(within, "ROW_CAP", 1)  # the kept view was counted under 2,000
        assert reader.search_scored("paris", subject_prefix="ns ", exact=True) is None
        assert sizes[-1] == 2
