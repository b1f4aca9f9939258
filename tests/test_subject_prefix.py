"""Subject-prefix reads go through the index on subject heads (schema v6) and
return exactly the keys that start with the prefix, character for character.

``reads.subject_range`` turns a prefix into bounds on the first
``SUBJECT_HEAD`` characters of a key; the exact prefix test stays in the query,
so the bounds only have to hold every matching key (never drop one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from chronomem import Memory
from chronomem.reads import subject_range
from chronomem.schema import SCHEMA_VERSION, SUBJECT_HEAD

from .reliability._support import raw

# the characters where code point order, UTF-8 byte order and the successor step
# have edges: the last BMP and astral code points, around the surrogate gap
EDGES = "a", "b", "/", ".", "é", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0010ffff"
# (no NUL or backslash: a prefix holding one gets no range, by design)
chars = st.one_of(
    st.sampled_from(EDGES),
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\\"),
)
keys = st.text(chars, min_size=1, max_size=8)
# stored keys may hold what PostgreSQL escapes (NUL, backslash): prefixes taken
# from them take the scan, which must agree too
stored_keys = st.text(st.one_of(chars, st.sampled_from("\x00\\")), min_size=1, max_size=8)


def holds(key: str, prefix: str) -> bool:
    """Does the index range of ``prefix`` admit ``key``?"""
    bounds = subject_range(prefix)
    if bounds is None:
        return True  # no range: the read scans
    low, high = bounds
    head = key[:SUBJECT_HEAD]
    return head >= low and (high is None or head < high)


@given(prefix=keys, tail=st.text(chars, max_size=6))
def test_every_key_with_the_prefix_is_inside_its_range(prefix: str, tail: str) -> None:
    assert holds(prefix + tail, prefix)


@given(prefix=st.text(chars, min_size=SUBJECT_HEAD - 2, max_size=SUBJECT_HEAD + 3), tail=keys)
def test_long_prefixes_bound_the_head_only(prefix: str, tail: str) -> None:
    assert holds(prefix + tail, prefix)


@given(prefix=keys, other=st.text(chars, max_size=10))
def test_the_range_admits_nothing_but_the_prefix(prefix: str, other: str) -> None:
    """Tight too: every head inside ``[low, high)`` starts with ``low`` (a wider
    range would still be correct, but would scan rows of other prefixes)."""
    bounds = subject_range(prefix)
    assert bounds is not None
    low, high = bounds
    assert low == prefix[:SUBJECT_HEAD]
    for head in (other, low + other, low[:-1] + other):
        head = head[:SUBJECT_HEAD]
        if head >= low and (high is None or head < high):
            assert head.startswith(low), (head, low, high)


def test_no_range_for_what_the_index_cannot_order() -> None:
    assert subject_range("") is None
    assert subject_range("a\x00b") is None  # SQLite's text functions stop at a NUL
    assert subject_range("a\\b") is None  # PostgreSQL stores a backslash escaped
    assert subject_range("\U0010ffff\U0010ffff") == ("\U0010ffff\U0010ffff", None)
    assert subject_range("a\U0010ffff") == ("a\U0010ffff", "b")
    assert subject_range("a\ud7ff") == ("a\ud7ff", "a\ue000")  # over the surrogates


@pytest.fixture
def store(memory: Memory) -> Iterator[Memory]:
    yield memory


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(stored=st.lists(stored_keys, min_size=1, max_size=12, unique=True), data=st.data())
def test_prefix_reads_return_exactly_the_keys_with_the_prefix(
    store: Memory, stored: list[str], data: st.DataObject
) -> None:
    m = store.scoped(user=f"u{abs(hash(tuple(stored)))}")  # a fresh scope per example
    stored = [f"k{k}" for k in stored]  # a key must hold more than white space
    long = [k * (SUBJECT_HEAD // len(k) + 2) for k in stored[:2]]  # heads cut inside them
    every = stored + long
    m.apply([m.assertion(k, "p", "v", exact=True) for k in every])
    prefixes = {k[:n] for k in every for n in (1, len(k) // 2, len(k), SUBJECT_HEAD + 1)}
    prefixes |= {f"k{data.draw(keys)}"}
    for prefix in sorted(prefixes):
        got = sorted(f.subject for f in m.facts(subject_prefix=prefix, exact=True))
        assert got == sorted(k for k in every if k.startswith(prefix)), prefix


def test_an_older_store_gets_the_index_and_prefix_reads_use_it(durable_url: str) -> None:
    with Memory(durable_url) as m:
        m.apply([m.assertion(f"ns.a.{i}", "p", "v", exact=True) for i in range(50)])
    with raw(durable_url) as conn:  # what a v5 store looks like
        conn.execute(text("DROP INDEX cm_versions_subject_head"))
        conn.execute(text("UPDATE cm_meta SET value = '5' WHERE key = 'schema_version'"))
    with Memory(durable_url) as m:
        assert [f.subject for f in m.facts(subject_prefix="ns.a.4", exact=True)] == [
            "ns.a.4",
            *(f"ns.a.4{i}" for i in range(10)),
        ]
    with raw(durable_url) as conn:
        version = conn.execute(
            text("SELECT value FROM cm_meta WHERE key = 'schema_version'")
        ).scalar()
        assert version == str(SCHEMA_VERSION)
        if conn.dialect.name == "sqlite":
            plan = conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT id FROM cm_versions WHERE tenant = 'default' "
                "AND substr(subject_key, 1, 200) >= 'ns.a.4' "
                "AND substr(subject_key, 1, 200) < 'ns.a.5' AND superseded_at IS NULL"
            ).fetchall()
        else:
            conn.exec_driver_sql("SET enable_seqscan = off")
            plan = conn.exec_driver_sql(
                "EXPLAIN SELECT id FROM cm_versions WHERE tenant = 'default' "
                "AND (substr(subject_key, 1, 200) COLLATE \"C\") >= 'ns.a.4' "
                "AND (substr(subject_key, 1, 200) COLLATE \"C\") < 'ns.a.5'"
            ).fetchall()
        assert "cm_versions_subject_head" in " ".join(str(r) for r in plan)
