"""Backend plumbing: URLs, schemas on PostgreSQL, the I1 constraint."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import create_engine, text

from chronomem import InvalidInput, Memory
from tests.conftest import PG_URL, drop_pg_schema, make_pg_schema, require_pg


def test_a_store_in_one_schema_never_uses_another_schemas_tables_on_the_search_path() -> None:
    require_pg()
    first_url, first = make_pg_schema()
    second_url, second = make_pg_schema()
    try:
        a = Memory(first_url)
        a.remember("alice", "likes", "tea")
        a.close()
        # second schema first on the path, the populated one after it
        both = second_url.replace(f"{second},public", f"{second},{first},public")
        b = Memory(both)
        assert b.facts() == []
        b.remember("bob", "likes", "coffee")
        b.close()
        eng = create_engine(PG_URL)
        with eng.connect() as conn:
            n = conn.execute(text(f'SELECT count(*) FROM "{second}".cm_versions')).scalar()
            m = conn.execute(text(f'SELECT count(*) FROM "{first}".cm_versions')).scalar()
        eng.dispose()
        assert (n, m) == (1, 1)
    finally:
        drop_pg_schema(first)
        drop_pg_schema(second)


def test_postgres_enforces_i1_with_an_exclusion_constraint(pg_url: str) -> None:
    m = Memory(pg_url)
    m.remember("alice", "lives_in", "Paris")
    eng = create_engine(pg_url)
    with eng.connect() as conn, pytest.raises(Exception, match="cm_versions_i1"):
        # a second current version of the same slot over an overlapping interval
        conn.execute(
            text(
                "INSERT INTO cm_versions (tenant, id, fact_id, user_id, agent_id, session_id, slot, "
                "subject, subject_key, subject_hash, predicate, object, object_key, valid_from, "
                "valid_to, recorded_at, metadata, content_hash) "
                "SELECT tenant, 'x', 'y', user_id, agent_id, session_id, slot, subject, subject_key, "
                "subject_hash, predicate, 'Rome', 'rome', valid_from, NULL, recorded_at, '{}', 'h' "
                "FROM cm_versions"
            )
        )
    eng.dispose()
    m.close()


@pytest.mark.parametrize("url", ["mysql://x", "http://example", 42])
def test_unsupported_urls_are_clear_errors(url: object) -> None:
    with pytest.raises((InvalidInput, TypeError)):
        Memory(url)  # type: ignore[arg-type]


def test_sqlite_file_reopens_with_its_data(tmp_path) -> None:
    path = tmp_path / "m.db"
    m = Memory(str(path))
    m.remember("alice", "lives_in", "Paris")
    m.close()
    again = Memory(f"sqlite:///{path}")
    assert [f.object for f in again.facts()] == ["Paris"]
    again.close()


NASTY = [
    "a\x00b",
    "back\\slash",
    "\\0",
    "\\\\0\x00",
    "quo\"te's",
    "emoji 🧠",
    "rtl \u202eabc",
    "e\u0301",
]


@pytest.mark.parametrize("value", NASTY)
def test_any_unicode_round_trips_and_keys_stay_exact(memory: Memory, value: str) -> None:
    memory.remember(value, "likes", value)
    [f] = memory.facts(subject=value)
    assert (f.subject, f.object) == (value, value)
    ep = memory.add_episode(value, role=value)
    assert (memory.get_episode(ep.id).text, memory.get_episode(ep.id).role) == (value, value)
    memory.apply([memory.assertion(f"ns/{value}/k", "f", value, exact=True, cardinality="one")])
    assert [x.object for x in memory.facts(subject_prefix=f"ns/{value}/", exact=True)] == [value]
    # the escaped form on PostgreSQL is never matched as a prefix
    assert memory.facts(subject_prefix="ns/\\\\", exact=True) == [] or "\\" in value


def test_end_others_ends_exactly_the_dropped_fields_in_one_write(memory: Memory) -> None:
    from chronomem import EndOthersOp

    doc = "ns/users/u1"
    memory.apply([memory.assertion(doc, f, v, exact=True, cardinality="one") for f, v in
                  (("city", '"Paris"'), ("age", "30"), ("pet", '"cat"'))])  # fmt: skip
    r = memory.apply(
        [memory.assertion(doc, "city", '"Rome"', exact=True, cardinality="one"),
         EndOthersOp(doc, frozenset({"city"}), exact=True)]
    )  # fmt: skip
    live = {f.predicate: f.object for f in memory.facts(subject=doc, exact=True)}
    assert live == {"city": '"Rome"'}
    ended = {f.predicate for f in memory.facts(subject=doc, exact=True, states=["ended"])}
    assert ended == {"city", "age", "pet"}
    assert len(r.ended) == 2 and r.superseded_count == 3


def test_erase_subject_and_facts_for_many_subjects(memory: Memory) -> None:
    for s in ("ann", "bob", "cyd"):
        memory.remember(s, "likes", "tea")
        memory.remember(s, "lives_in", "Oslo")
    assert {f.subject for f in memory.facts(subjects=["ann", "BOB"])} == {"ann", "bob"}
    counts = memory.erase_subject("Ann")
    assert counts["versions"] == 2
    assert memory.facts(subject="ann", states=["live", "ended", "retracted"]) == []
    assert len(memory.facts()) == 4


def test_migrations_run_once_and_a_newer_schema_is_refused(tmp_path) -> None:
    from chronomem import SchemaMismatch
    from chronomem.schema import SCHEMA_VERSION

    path = str(tmp_path / "m.db")
    Memory(path).close()
    Memory(path).close()  # reopening does not re-run v1 (it would fail on existing tables)
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as conn:
        version = conn.execute(
            text("SELECT value FROM cm_meta WHERE key='schema_version'")
        ).scalar()
        assert version == str(SCHEMA_VERSION)
        conn.execute(
            text("UPDATE cm_meta SET value = :v WHERE key='schema_version'"),
            {"v": str(SCHEMA_VERSION + 1)},
        )
    eng.dispose()
    with pytest.raises(SchemaMismatch, match="newer"):
        Memory(path)


def test_superseded_by_always_names_a_stored_version_even_when_a_plan_drops_its_own_piece(
    memory: Memory, clock
) -> None:
    from chronomem import EndOp, RetractOp

    until = clock.now + timedelta(days=30)
    memory.apply([memory.assertion("s", "p", "v", valid_to=until, exact=True, cardinality="one")])
    # end + a merging bounded assert in one write: the ended piece is born and dropped
    memory.apply(
        [EndOp("s", "p", None, None, exact=True, cardinality="one"),
         memory.assertion("s", "p", "v", valid_to=until + timedelta(days=1), exact=True, cardinality="one")]
    )  # fmt: skip
    r = memory.remember("alice", "lives_in", "Paris")
    memory.apply([RetractOp(r.fact_ids[0])])
    r2 = memory.apply(
        [memory.assertion("bob", "lives_in", "Rome"), memory.assertion("bob", "lives_in", "Oslo")]
    )
    memory.apply([RetractOp(r2.fact_ids[-1])])
    with memory.backend.read() as conn:
        ids = set(conn.execute(text("SELECT id FROM cm_versions")).scalars())
        dangling = conn.execute(
            text("SELECT id, superseded_by FROM cm_versions WHERE superseded_by IS NOT NULL")
        ).all()
    assert [d for d in dangling if d.superseded_by not in ids] == []


def test_huge_unique_token_text_has_the_same_outcome_on_both_backends(memory: Memory) -> None:
    """Issue #14 F: ~900 kB of unique tokens raised ``string is too long for
    tsvector`` on PostgreSQL and was accepted on SQLite. Now both store the whole
    text and index its first ``INDEX_MAX_CHARS`` characters: words there are
    found, words past it are not (the text still reads back exactly)."""
    from chronomem.schema import INDEX_MAX_CHARS

    words = [f"w{i:06d}x" for i in range(110_000)]  # 8 chars + a space each: 990 kB
    big = " ".join(words)
    assert len(big) > 900_000
    inside = words[INDEX_MAX_CHARS // 9 - 50]
    outside = words[-1]
    r = memory.remember("doc", "text_is", big)
    ep = memory.add_episode(big)
    assert memory.facts(subject="doc")[0].object == big
    assert memory.get_episode(ep.id).text == big
    hits = memory.search(inside, k=5, include_episodes=True)
    assert not hits.degraded, hits.failed_legs
    assert r.fact_ids[0] in [h.fact.id for h in hits if h.fact is not None]
    assert ep.id in [h.episode.id for h in hits if h.episode is not None]
    with memory.backend.read() as conn:  # the text index itself: inside yes, outside no
        for table in ("cm_versions", "cm_episodes"):
            for word, expected in ((inside, 1), (outside, 0)):
                if conn.dialect.name == "sqlite":
                    sql = f"SELECT count(*) FROM {table}_fts WHERE {table}_fts MATCH ?"
                    n = conn.exec_driver_sql(sql, (f'"{word}"',)).scalar()
                else:
                    sql = f"SELECT count(*) FROM {table} WHERE tsv @@ to_tsquery('simple', %s)"
                    n = conn.exec_driver_sql(sql, (word,)).scalar()
                assert n == expected, (table, word)
