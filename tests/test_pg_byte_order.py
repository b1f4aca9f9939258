"""Schema v15 (issue #32): on PostgreSQL the id, slot key and key hash columns
(``schema.BYTE_ORDER_COLUMNS``) compare as bytes (``COLLATE "C"``), not through the
database's collation, so a batch's index entries are placed by ``memcmp``. A store
of an older version is migrated on open with its rows unchanged and I1 still
enforced; reads keep their order (code point order, SQLite's) for any keys."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, text

from chronomem import Memory, State, reads
from chronomem.schema import BYTE_ORDER_COLUMNS, SCHEMA_VERSION

from .reliability._support import raw

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
ALL = [s.value for s in State]

_COLUMNS = text(
    "SELECT a.attname, format_type(a.atttypid, a.atttypmod), c.collname "
    "FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation "
    "WHERE a.attrelid = CAST(:t AS regclass) AND a.attnum > 0 AND NOT a.attisdropped"
)
# every index key column of a table that has a collation, with it
_INDEX_KEYS = text(
    "SELECT CAST(i.indexrelid AS regclass)::text, a.attname, c.collname "
    "FROM pg_index i, unnest(CAST(i.indkey AS int2[]), CAST(i.indcollation AS oid[])) "
    "AS k(attnum, coll) JOIN pg_collation c ON c.oid = k.coll "
    "JOIN pg_attribute a ON a.attnum = k.attnum "
    "WHERE i.indrelid = CAST(:t AS regclass) AND a.attrelid = i.indrelid"
)


def _collations(conn: Connection) -> dict[tuple[str, str], str]:
    return {
        (t, name): coll
        for t in BYTE_ORDER_COLUMNS
        for name, _, coll in conn.execute(_COLUMNS, {"t": t}).all()
    }


def _index_keys(conn: Connection) -> set[tuple[str, str, str]]:
    return {tuple(r) for t in BYTE_ORDER_COLUMNS for r in conn.execute(_INDEX_KEYS, {"t": t})}


def _dump(conn: Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in byte order of its text (Python's sort)."""
    out = {}
    for t in (*BYTE_ORDER_COLUMNS, "cm_predicates", "cm_txclock", "cm_meta"):
        rows = conn.execute(text(f"SELECT * FROM {t}")).all()
        out[t] = sorted((tuple(map(repr, r)) for r in rows), key=repr)
    return out


def _fill(m: Memory) -> None:
    m.register_predicate("lives_in", cardinality="one")
    ep = m.add_episode("ann moved to Łódź", occurred_at=T0)
    m.remember("Ann", "lives_in", "Łódź", valid_from=T0, source=[ep])
    m.remember("Ann", "lives_in", "Zürich", valid_from=T0 + timedelta(days=3))  # supersedes
    m.remember_many(
        {"subject": f"s{i} ß", "predicate": "likes", "obj": f"tea {i % 3}"} for i in range(40)
    )
    m.end("s1 ß", "likes", "tea 1")
    m.facts(subject="Ann")  # a read the read log keeps


def test_a_new_store_compares_its_keys_as_bytes(pg_url: str) -> None:
    Memory(pg_url).close()
    with raw(pg_url) as conn:
        got = _collations(conn)
        keys = _index_keys(conn)
    for t, names in BYTE_ORDER_COLUMNS.items():
        for name in names:
            assert got[(t, name)] == "C", (t, name)
    # the primary keys, the I1 constraint's and every other index over them too
    for index, column in [
        ("cm_versions_pkey", "id"),
        ("cm_versions_slot_current", "slot"),
        ("cm_versions_fact", "fact_id"),
        ("cm_versions_subject", "subject_hash"),
        ("cm_versions_i1", "slot"),
        ("cm_vectors_pkey", "item_id"),
        ("cm_sources_pkey", "episode_id"),
        ("cm_episodes_pkey", "id"),
    ]:
        assert (index, column, "C") in keys, (index, column, sorted(keys))
    # the other text columns keep the database's collation
    assert got[("cm_versions", "tenant")] == "default"
    assert got[("cm_versions", "subject_key")] == "default"


def _insert_overlapping(conn: Connection) -> None:
    """A second current version of a current version's slot, over an overlapping
    interval (what I1 refuses)."""
    conn.execute(
        text(
            "INSERT INTO cm_versions (tenant, id, fact_id, user_id, agent_id, session_id, slot, "
            "subject, subject_key, subject_hash, predicate, object, object_key, valid_from, "
            "valid_to, recorded_at, metadata, content_hash) "
            "SELECT tenant, 'x', 'y', user_id, agent_id, session_id, slot, subject, "
            "subject_key, subject_hash, predicate, 'Rome', 'rome', valid_from, NULL, "
            "recorded_at, '{}', 'h' FROM cm_versions "
            "WHERE superseded_at IS NULL AND predicate = 'lives_in'"
        )
    )


def test_a_v14_store_with_data_migrates_with_its_rows_unchanged(pg_url: str) -> None:
    with Memory(pg_url, read_log=True) as m:
        _fill(m)
        facts = m.facts(states=ALL)
    with raw(pg_url) as conn:  # what a v14 store looks like: the database's collation
        before = _dump(conn)
        for t, names in BYTE_ORDER_COLUMNS.items():
            kinds = {n: k for n, k, _ in conn.execute(_COLUMNS, {"t": t}).all()}
            alter = ", ".join(f'ALTER COLUMN {n} TYPE {kinds[n]} COLLATE "default"' for n in names)
            conn.execute(text(f"ALTER TABLE {t} {alter}"))
        conn.execute(text("UPDATE cm_meta SET value = '14' WHERE key = 'schema_version'"))
        conn.commit()
        assert set(_collations(conn).values()) == {"default"}
        assert _dump(conn) == {**before, "cm_meta": _dump(conn)["cm_meta"]}
    with Memory(pg_url) as m:  # migrates to v15 (its reads not logged: the rows stay)
        assert m.facts(states=ALL) == facts
    with raw(pg_url) as conn:
        assert _dump(conn) == before  # the same rows, the version row back at 15
        got = _collations(conn)
        assert all(got[(t, n)] == "C" for t, names in BYTE_ORDER_COLUMNS.items() for n in names)
        version = conn.execute(text("SELECT value FROM cm_meta WHERE key = 'schema_version'"))
        assert version.scalar() == str(SCHEMA_VERSION)
    with raw(pg_url) as conn, pytest.raises(Exception, match="cm_versions_i1"):
        _insert_overlapping(conn)  # I1 is still enforced
    with Memory(pg_url) as m:  # writes and reads as before
        m.remember("Ann", "lives_in", "Kraków", valid_from=T0 + timedelta(days=5))
        assert [f.object for f in m.facts(subject="Ann", predicate="lives_in")] == ["Kraków"]
        assert len(m.facts(predicate="likes")) == 39
        assert m.search("Kraków", k=1)[0].fact.object == "Kraków"


def test_i1_refuses_an_overlapping_version_of_one_slot(pg_url: str) -> None:
    with Memory(pg_url) as m:
        m.remember("Ann", "lives_in", "Łódź", valid_from=T0)
    with raw(pg_url) as conn, pytest.raises(Exception, match="cm_versions_i1"):
        _insert_overlapping(conn)


# Subjects, predicates and objects from characters whose byte order differs from a
# linguistic collation's (case, accents, other scripts, punctuation)
_NAMES = st.text(alphabet="aAbBéÉzZ ß-_.ŁłЖж中ǅ", min_size=1, max_size=4).filter(str.strip)
_counter = itertools.count()


def _facts_order(f: Any) -> tuple[Any, ...]:
    """``Memory.facts``' order: subject key, predicate, valid from, object key, version
    id, text in code point order (Python's)."""
    return (f.subject_key, f.predicate, f.valid_from, f.object_key, f.version_id)


@pytest.fixture(scope="module")
def shared_pg(request: pytest.FixtureRequest) -> Iterator[str]:
    from tests.conftest import drop_pg_schema, make_pg_schema, require_pg

    require_pg()
    url, schema = make_pg_schema()
    try:
        yield url
    finally:
        drop_pg_schema(schema)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(_NAMES, st.sampled_from(["likes", "city", "é_x"]), _NAMES, st.integers(0, 2)),
        min_size=1,
        max_size=12,
    )
)
def test_reads_keep_code_point_order_for_any_keys(
    shared_pg: str, writes: list[tuple[str, str, str, int]]
) -> None:
    with Memory(shared_pg) as base:
        m = base.scoped(tenant=f"t{next(_counter)}")
        m.apply([m.assertion(s, p, o, valid_from=T0 + timedelta(days=d)) for s, p, o, d in writes])
        got = m.facts()
        assert got == sorted(got, key=_facts_order)
        for p in {p for _, p, _, _ in writes}:
            page = m.newest_facts(p, limit=20)
            assert page == sorted(m.facts(predicate=p), key=reads.newest_first)
