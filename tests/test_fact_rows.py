"""``Memory.rows`` (issue #19): the live facts of a few subjects as ``FactRow``
values, one prepared statement per 8 subjects. Whatever the text, on each side of
the 8-subject threshold, at the present and at past instants on both clocks, it
returns exactly the live facts ``facts(subjects=…)`` returns, projected onto a
``FactRow``; with the served-read log on, it is logged as that ``facts`` read."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chronomem import Fact, FactRow, InvalidType, Memory, reads

from .conftest import ManualClock
from .test_point_reads import _load, world

counter = itertools.count()


def _row(f: Fact) -> FactRow:
    """The row a ``Fact`` stands for, field by field (not ``FactRow.of``: the
    test checks the store's rows against the store's facts independently)."""
    return FactRow(*(getattr(f, name) for name in FactRow._fields))


def _same(rows: list[FactRow], facts: list[Fact]) -> None:
    by_version = {r.version_id: r for r in rows}
    assert len(by_version) == len(rows), "a version came back twice"
    assert by_version == {f.version_id: _row(f) for f in facts}
    # each subject's rows together
    seen: list[str] = []
    for r in rows:
        if not seen or seen[-1] != r.subject_key:
            assert r.subject_key not in seen
            seen.append(r.subject_key)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=world, data=st.data())
@example(  # past the 8-subject threshold, with ended, corrected and retracted facts
    spec=[
        (
            f"s{i}\x00\\%",
            [("o", i % 4, ("keep", "end", "correct", "retract")[i % 4]), ("p", 2, "keep")],
        )
        for i in range(10)
    ],
    data=None,
)
def test_rows_are_the_live_facts(
    memory: Memory,
    clock: ManualClock,
    spec: list[tuple[str, list[tuple[str, int, str]]]],
    data: st.DataObject | None,
) -> None:
    m = memory.scoped(tenant=f"t{next(counter)}")
    start = clock()
    _load(m, clock, spec)
    keys = list(dict.fromkeys(s for s, _ in spec))
    wanted_sizes = {1, min(len(keys), reads.INLINE), len(keys)}
    instants = [None, start + timedelta(seconds=4), clock() - timedelta(seconds=2)]
    for n in wanted_sizes:
        some = [*keys[:n], "no such subject", *keys[:1]]  # a missing one, a repeat
        if data is not None:
            some = data.draw(st.permutations(some))
        for at in instants:
            _same(
                m.rows(some, valid_at=at, exact=True),
                m.facts(subjects=some, valid_at=at, exact=True),
            )
            _same(
                m.rows(some, as_of=at, exact=True) if at else m.rows(some, exact=True),
                m.facts(subjects=some, as_of=at, exact=True)
                if at
                else m.facts(subjects=some, exact=True),
            )
            _same(
                m.rows(some, known_at=at, exact=True),
                m.facts(subjects=some, known_at=at, exact=True),
            )


def test_rows_fold_subjects_unless_exact(memory: Memory) -> None:
    memory.remember("Alice", "lives_in", "Paris")
    memory.remember("Alice", "likes", "tea")
    memory.remember("Bob", "likes", "coffee")
    rows = memory.rows(["ALICE", "bob"])
    assert {(r.subject, r.subject_key, r.predicate, r.object) for r in rows} == {
        ("Alice", "alice", "lives_in", "Paris"),
        ("Alice", "alice", "likes", "tea"),
        ("Bob", "bob", "likes", "coffee"),
    }
    assert memory.rows(["ALICE"], exact=True) == []
    assert memory.rows([]) == []
    assert all(r.valid_to is None for r in rows)


def test_rows_refuse_a_bare_string(memory: Memory) -> None:
    with pytest.raises(InvalidType):
        memory.rows("alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidType):
        memory.rows([1])  # type: ignore[list-item]


def test_rows_with_the_read_log_are_logged_as_facts(url: str | None, clock: ManualClock) -> None:
    with Memory(url, clock=clock, read_log=True) as m:
        m.remember("alice", "likes", "tea")
        clock.advance(seconds=1)
        m.remember("bob", "likes", "coffee")
        clock.advance(seconds=1)
        rows = m.rows(["alice", "bob"])
        _same(rows, m.facts(subjects=["alice", "bob"]))
        logged = [r for r in m.reads() if r.op == "facts"]
        assert len(logged) == 2
        assert m.replay(logged[0].id) == m.facts(subjects=["alice", "bob"])


def test_rows_scope_is_the_reads(url: str | None, clock: ManualClock) -> None:
    with Memory(url, clock=clock) as m:
        m.remember("alice", "likes", "tea")
        u = m.scoped(user="u1")
        u.remember("alice", "likes", "cake")
        other = m.scoped(user="u2")
        assert {r.object for r in u.rows(["alice"])} == {"tea", "cake"}
        assert {r.object for r in m.rows(["alice"])} == {"tea"}
        assert {r.object for r in other.rows(["alice"])} == {"tea"}
        assert m.scoped(tenant="elsewhere").rows(["alice"]) == []
