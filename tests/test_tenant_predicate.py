"""Citus readiness (issue #19): every statement chronomem sends PostgreSQL is routed
to one tenant.

``tests/citus_guard.py`` reads each statement (SQLAlchemy's ``before_cursor_execute``
on the ``Engine`` class) and its bound parameters; it is installed for the whole
suite from ``tests/conftest.py``. Here it is first tested on statements written
to pass and to fail, then driven through the whole public API — every ``Memory``
method, every retrieval leg (with and without pgvector), erasure, purge, the
integrity check and the LangGraph store — on PostgreSQL, with a second tenant
in the same schema so a statement that forgot its tenant would see foreign rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp
from sqlalchemy import create_engine, text

from chronomem import Memory, State
from chronomem.exchange import export_records, import_records
from chronomem.extraction import RuleExtractor
from langgraph.store.chronomem import ChronomemStore

from .citus_guard import analyse, recording, violations
from .conftest import ManualClock, utc

DISTRIBUTED = {
    "cm_versions",
    "cm_episodes",
    "cm_sources",
    "cm_vectors",
    "cm_predicates",
    "cm_txclock",
}


def why(sql: str, params: Any = None, many: bool = False, sweep: bool = False) -> list[str]:
    return violations(sql, params if params is not None else {}, many, sweep=sweep)


# -- the reader, on statements written to pass or fail -----------------------------------

ROUTED = [
    (
        "SELECT cm_versions.id FROM cm_versions WHERE cm_versions.tenant = %(t)s::VARCHAR",
        {"t": "a"},
    ),
    ("SELECT id FROM cm_versions WHERE tenant = 'a' AND id = %(i)s", {"i": "x"}),
    ("SELECT * FROM cm_versions WHERE ((tenant = %(t)s) AND id = %(i)s)", {"t": "a", "i": "x"}),
    ("SELECT * FROM cm_versions WHERE tenant = ANY(CAST(%(t)s AS text[]))", {"t": ["a", "a"]}),
    ("SELECT * FROM cm_versions WHERE tenant IN (%(t_1)s, %(t_2)s)", {"t_1": "a", "t_2": "a"}),
    ("SELECT * FROM cm_versions WHERE tenant = %s AND id = %s", ("a", "x")),
    (
        "SELECT * FROM cm_versions WHERE tenant = %(t)s AND valid_from BETWEEN 1 AND 2",
        {"t": "a"},
    ),
    (  # colocated join, pinned through the join's tenant equality
        "SELECT v.id FROM cm_versions AS v JOIN cm_sources s ON s.tenant = v.tenant "
        "AND s.fact_id = v.fact_id WHERE v.tenant = %(t)s",
        {"t": "a"},
    ),
    (  # correlated subquery joined to the outer table on tenant
        "SELECT id FROM cm_versions WHERE cm_versions.tenant = %(t)s AND NOT (EXISTS "
        "(SELECT * FROM cm_versions AS later WHERE later.tenant = cm_versions.tenant "
        "AND later.fact_id = cm_versions.fact_id))",
        {"t": "a"},
    ),
    (  # derived table
        "SELECT cand.id FROM (SELECT cm_versions.id AS id FROM cm_versions WHERE "
        "cm_versions.tenant = %(t)s ORDER BY id LIMIT 5) AS cand ORDER BY cand.id",
        {"t": "a"},
    ),
    (
        "WITH x AS (SELECT id FROM cm_versions WHERE tenant = %(t)s) "
        "SELECT * FROM x JOIN cm_sources s ON s.tenant = %(t)s AND s.fact_id = x.id",
        {"t": "a"},
    ),
    (
        "SELECT id FROM cm_versions WHERE tenant = %(t)s UNION ALL "
        "SELECT id FROM cm_episodes WHERE tenant = %(t)s",
        {"t": "a"},
    ),
    (
        "SELECT * FROM cm_versions WHERE (cm_versions.tenant, cm_versions.slot) IN "
        "((%(a)s, %(b)s), (%(c)s, %(d)s))",
        {"a": "t", "b": "s1", "c": "t", "d": "s2"},
    ),
    ("UPDATE cm_txclock SET last_us=%(v)s WHERE cm_txclock.tenant = %(t)s", {"v": 1, "t": "a"}),
    ("DELETE FROM cm_sources WHERE cm_sources.tenant = %(t)s AND fact_id = 'f'", {"t": "a"}),
    (
        "INSERT INTO cm_predicates (tenant, name, canonical) VALUES (%(t)s, 'a', 'a') "
        "ON CONFLICT (tenant, name) DO UPDATE SET canonical = excluded.canonical",
        {"t": "a"},
    ),
    (
        "INSERT INTO cm_sources (tenant, fact_id) VALUES (%(t_m0)s, 'f'), (%(t_m1)s, 'g')",
        {"t_m0": "a", "t_m1": "a"},
    ),
    (
        "SELECT id FROM cm_versions WHERE tenant = %(t)s FOR UPDATE",
        {"t": "a"},
    ),
    (  # the writer's one-statement bulk insert: the tenant column is an unnest()ed array
        "INSERT INTO cm_versions (tenant, id) SELECT tenant, id FROM unnest("
        "CAST(%(c0)s AS VARCHAR(255)[]), CAST(%(c1)s AS VARCHAR(32)[])) AS u(tenant, id)",
        {"c0": ["a", "a"], "c1": ["x", "y"]},
    ),
    (
        "INSERT INTO cm_sources (tenant, fact_id) SELECT tenant, fact_id FROM cm_versions "
        "WHERE tenant = %(t)s",
        {"t": "a"},
    ),
    (  # get's one statement: the fact a reference names, found by subqueries in a CASE
        "SELECT v.id FROM cm_versions v LEFT OUTER JOIN cm_sources s ON s.tenant = v.tenant "
        "AND s.fact_id = v.fact_id WHERE v.tenant = %(t)s AND v.fact_id = CASE WHEN (EXISTS "
        "(SELECT * FROM cm_versions AS f WHERE f.tenant = %(t)s AND f.fact_id = %(r)s)) "
        "THEN %(r)s ELSE (SELECT b.fact_id FROM cm_versions AS b WHERE b.tenant = %(t)s "
        "AND b.id = %(r)s) END",
        {"t": "a", "r": "x"},
    ),
]


@pytest.mark.parametrize(("sql", "params"), ROUTED, ids=range(len(ROUTED)))
def test_routed_statements_pass(sql: str, params: Any) -> None:
    assert why(sql, params) == []


NOT_ROUTED = [
    ("SELECT * FROM cm_versions", {}, "not filtered"),
    (
        "SELECT * FROM cm_versions WHERE tenant = %(t)s OR id = %(i)s",
        {"t": "a", "i": "x"},
        "not filtered",
    ),
    ("SELECT * FROM cm_versions WHERE NOT (tenant = %(t)s)", {"t": "a"}, "not filtered"),
    ("SELECT * FROM cm_versions WHERE tenant <> %(t)s", {"t": "a"}, "not filtered"),
    ("SELECT * FROM cm_versions WHERE tenant = ANY(%(t)s)", {"t": ["a", "b"]}, "2 tenant values"),
    ("SELECT * FROM cm_versions WHERE tenant IN (%(a)s, %(b)s)", {"a": "a", "b": "b"}, "2 tenant"),
    (
        "SELECT * FROM cm_versions v JOIN cm_sources s ON s.fact_id = v.fact_id WHERE v.tenant = 'a'",
        {},
        "cm_sources (as s) is not filtered",
    ),
    (
        "SELECT * FROM cm_versions v, cm_episodes e WHERE v.tenant = %(a)s AND e.tenant = %(b)s",
        {"a": "a", "b": "b"},
        "2 tenant values",
    ),
    (
        "SELECT id FROM cm_versions WHERE tenant = 'a' AND EXISTS "
        "(SELECT 1 FROM cm_sources WHERE cm_sources.fact_id = cm_versions.fact_id)",
        {},
        "cm_sources (as cm_sources) is not filtered",
    ),
    (
        "SELECT id FROM cm_versions WHERE tenant = 'a' UNION SELECT id FROM cm_episodes",
        {},
        "cm_episodes",
    ),
    ("INSERT INTO cm_vectors (kind, item_id) VALUES ('v', 'x')", {}, "carries no tenant"),
    (
        "INSERT INTO cm_sources (tenant, fact_id) SELECT tenant, fact_id FROM cm_versions",
        {},
        "not filtered",
    ),
    (
        "INSERT INTO cm_versions (tenant, id) SELECT tenant, id FROM unnest("
        "CAST(%(c0)s AS VARCHAR(255)[]), CAST(%(c1)s AS VARCHAR(32)[])) AS u(tenant, id)",
        {"c0": ["a", "b"], "c1": ["x", "y"]},
        "2 tenant values",
    ),
    (
        "INSERT INTO cm_sources (tenant, fact_id) SELECT x, k FROM unnest(%(ks)s) AS u(k)",
        {"ks": ["f"]},
        "tenant inserted is not a value",
    ),
    ("UPDATE cm_versions SET superseded_at = 1 WHERE id = %(i)s", {"i": "x"}, "not filtered"),
    ("DELETE FROM cm_vectors WHERE kind = 'v'", {}, "not filtered"),
    ("TRUNCATE cm_versions", {}, "TRUNCATE"),
    ("SELECT * FROM cm_versions WHERE tenant = %(t)s", {}, "<unbound>"),
    (
        "SELECT id FROM cm_versions WHERE tenant = %(t)s AND fact_id = CASE WHEN (EXISTS "
        "(SELECT * FROM cm_versions AS f WHERE f.fact_id = %(r)s)) THEN %(r)s END",
        {"t": "a", "r": "x"},
        "cm_versions (as f) is not filtered",
    ),
]


@pytest.mark.parametrize(("sql", "params", "reason"), NOT_ROUTED, ids=range(len(NOT_ROUTED)))
def test_unrouted_statements_fail(sql: str, params: Any, reason: str) -> None:
    found = why(sql, params)
    assert found and reason in "; ".join(found), found


def test_an_executemany_across_tenants_fails_and_one_tenant_passes() -> None:
    sql = "INSERT INTO cm_episodes (tenant, id) VALUES (%(tenant)s::VARCHAR, %(id)s::VARCHAR)"
    assert why(sql, [{"tenant": "a", "id": "1"}, {"tenant": "a", "id": "2"}], True) == []
    assert (
        "2 tenant values"
        in why(sql, [{"tenant": "a", "id": "1"}, {"tenant": "b", "id": "2"}], True)[0]
    )


EXEMPT = [
    "SELECT 1",
    "CREATE INDEX cm_versions_fact ON cm_versions (tenant, fact_id)",
    "ALTER TABLE cm_vectors ADD COLUMN embedding vector(8)",
    "DROP INDEX IF EXISTS cm_vectors_hnsw",
    "VACUUM (ANALYZE) cm_versions",
    "ANALYZE cm_versions",
    "SET LOCAL hnsw.ef_search = 100",
    "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest(CAST(%(keys)s AS text[])) AS k ORDER BY k",
    "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'cm_vectors'::regclass AND attname = 'embedding'",
    "SELECT cm_meta.value FROM cm_meta WHERE cm_meta.key = %(key_1)s::VARCHAR",
    "INSERT INTO cm_meta (key, value) VALUES (%(key)s::VARCHAR, %(value)s::VARCHAR)",
]


@pytest.mark.parametrize("sql", EXEMPT)
def test_exempt_statements(sql: str) -> None:
    assert why(sql, {"keys": ["x"], "key_1": "k", "key": "k", "value": "v"}) == []


def test_a_sweep_may_span_tenants_but_must_join_on_tenant() -> None:
    colocated = (
        "SELECT count(*) FROM cm_sources WHERE NOT (EXISTS (SELECT * FROM cm_versions "
        "WHERE cm_versions.tenant = cm_sources.tenant AND cm_versions.fact_id = cm_sources.fact_id))"
    )
    assert why(colocated, sweep=True) == []
    assert why(colocated) != []  # outside a sweep it would be a fan-out
    self_join = (
        "SELECT count(*) FROM cm_versions AS a JOIN cm_versions AS b ON a.tenant = b.tenant "
        "AND a.slot = b.slot WHERE a.superseded_at IS NULL"
    )
    assert why(self_join, sweep=True) == []
    assert why("SELECT * FROM cm_versions a JOIN cm_versions b ON a.slot = b.slot", sweep=True)
    assert why(
        "SELECT * FROM cm_sources WHERE NOT EXISTS "
        "(SELECT 1 FROM cm_versions v WHERE v.fact_id = cm_sources.fact_id)",
        sweep=True,
    )


def test_unreadable_statements_on_cm_tables_fail_closed() -> None:
    assert "not understood" in why("SELECT * FROM cm_versions WHERE (tenant = 'a'")[0]
    assert why("SELECT * FROM pg_class WHERE (relname = 'x'") == []


# -- the whole public API on PostgreSQL --------------------------------------------------


@pytest.fixture(params=["postgres", "pgvector"])
def pg(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue("pg_url" if request.param == "postgres" else "pgvector_url"))


def _seed_other_tenant(url: str, clock: ManualClock) -> None:
    """Rows of another tenant in the same tables, with the same subjects."""
    with Memory(url, clock=clock, tenant="other") as m:
        m.remember("alice", "lives_in", "Oslo", valid_from=utc(2025, 1, 1))
        m.add("Alice works at Initech.", occurred_at=utc(2025, 2, 1))
        m.register_predicate("mood", cardinality="one", volatility="fast", aliases=["feels"])


def _drive_memory(url: str, clock: ManualClock) -> None:
    with Memory(url, clock=clock, tenant="acme") as m:
        spec = m.register_predicate("lives_in", cardinality="one", aliases=["resides_in"])
        assert m.predicate("resides_in").name == spec.name
        r1 = m.remember("alice", "lives_in", "Paris", valid_from=utc(2025, 1, 1))
        clock.advance(days=1)
        m.remember("alice", "lives_in", "Rome", valid_from=utc(2025, 6, 1))
        m.remember_many(
            [
                {"subject": "bob", "predicate": "likes", "obj": "tea"},
                {"subject": "bob", "predicate": "likes", "obj": "chess"},
                m.assertion("carol", "works_at", "Initech", valid_for=timedelta(days=30)),
            ]
        )
        ep = m.add_episode("Bob says he likes tea and chess.", role="user")
        m.add_episodes([{"text": "Carol moved to Berlin.", "occurred_at": utc(2025, 3, 1)}])
        m.remember("bob", "owns", "a bike", source=ep)
        receipt = m.add(
            [
                {"role": "user", "content": "I live in Lisbon now and I work at Globex."},
                {"role": "assistant", "content": "Noted."},
            ],
            extractor=RuleExtractor(),
        )
        assert receipt.extracted >= 1
        m.end("bob", "likes", "chess", at=utc(2026, 1, 1))
        tea = m.facts(subject="bob", predicate="likes")[0]
        m.correct(tea, "green tea")
        bike = m.facts(subject="bob", predicate="owns")[0]
        m.import_fact("dave", "plays", "go", recorded_at=utc(2025, 12, 1))
        clock.advance(days=1)

        assert m.get(r1.added[0])
        assert m.get_episode(ep.id).text.startswith("Bob")
        assert len(m.episodes(limit=5, since=utc(2020, 1, 1), role="user")) >= 1
        m.facts(states=list(State))
        m.facts(subject_prefix="b", known_at=utc(2026, 1, 2))
        m.facts(as_of=utc(2025, 7, 1))
        assert [f.object for f in m.history("alice", "lives_in")][:2] == ["Paris", "Rome"]
        prov = m.why(bike)
        assert prov.episodes and prov.episodes[0].id == ep.id
        m.timeline("alice").text()
        m.stats()
        for kw in (
            {},
            {"include_episodes": True},
            {"subject": "bob"},
            {"subject_prefix": "al", "predicates": ["lives_in"]},
            {"as_of": utc(2025, 7, 1), "states": ["live", "ended", "retracted"]},
        ):
            m.search("where does alice live tea", **kw)
        assert "Rome" in m.recall("alice lives", include_history=True, include_episodes=True)
        assert m.check().ok
        assert m.check(repair=True).ok

        dump = list(export_records(m))  # chronomem.exchange: a dump, into a fresh tenant
        assert import_records(m.scoped(tenant="copy"), enumerate(dump, start=1))
        assert m.scoped(tenant="copy").history("alice", "lives_in")

        user = m.scoped(user="u1", session="s1")
        user.remember("alice", "nickname", "Al")
        user.add("My sister is called Eve.")
        user.search("alice nickname", include_episodes=True)
        user.stats()
        m.retract(bike)
        m.erase(tea.id)
        m.erase_subject("carol")
        user.purge()
        m.scoped(user="nobody").purge()


def _drive_langgraph(url: str, clock: ManualClock) -> None:
    store = ChronomemStore(url, clock=clock, tenant="acme")
    try:
        ns = ("users", "u1", "prefs")
        store.put(ns, "k1", {"text": "likes dark roast coffee", "n": 1})
        store.put(("users", "u2"), "k1", {"text": "prefers tea"})
        clock.advance(hours=1)
        store.put(ns, "k1", {"text": "likes espresso", "n": 2})
        store.batch(
            [
                PutOp(ns, "k2", {"text": "walks the dog"}),
                PutOp(ns, "k3", {"text": "reads novels"}),
                GetOp(ns, "k1"),
                SearchOp(ns, query="coffee", limit=3),
                ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            ]
        )
        item = store.get(ns, "k1")
        assert item is not None and item.value["n"] == 2
        assert store.search(("users",), query="espresso", limit=5)
        store.search(ns, filter={"n": 2})
        store.list_namespaces(prefix=("users",))
        store.history(ns, "k1")
        store.as_of(utc(2026, 1, 1)).get(ns, "k1")
        store.delete(ns, "k2")
        store.erase(ns, "k3")
    finally:
        store.close()


@pytest.fixture
def recorded(pg: str) -> Iterator[tuple[str, Any]]:
    clock = ManualClock(start=utc(2026, 1, 1), tick=timedelta(seconds=1))
    _seed_other_tenant(pg, clock)
    with recording() as rec:
        yield pg, (rec, clock)


def test_every_public_call_filters_on_one_tenant(
    recorded: tuple[str, Any], request: pytest.FixtureRequest
) -> None:
    url, (rec, clock) = recorded
    _drive_memory(url, clock)
    _drive_langgraph(url, clock)
    with Memory(url) as m:
        pgvector = bool(m._engine.retrieval.pgvector)
    assert pgvector == (request.node.callspec.params["pg"] == "pgvector")
    assert rec.offences == [], "\n".join(map(str, rec.offences))
    # the run was not vacuous: every distributed table and every kind of statement
    kinds = Counter(k for k, _ in rec.checked)
    tables = {t for _, rels in rec.checked for t in rels.split(",") if t}
    assert {"SELECT", "INSERT", "UPDATE", "DELETE"} <= set(kinds), kinds
    assert tables >= DISTRIBUTED, tables
    assert len(rec.checked) > 200
    # the fact and episode legs ran: lexical everywhere, pgvector's where it is installed
    assert any("to_tsquery" in s and "cm_episodes" in s for s in rec.statements)
    if pgvector:
        assert any("<=>" in s for s in rec.statements)


def test_other_tenants_rows_survive_the_run(recorded: tuple[str, Any]) -> None:
    """The same run leaves the other tenant as it was (the filters are the right ones)."""
    url, (_, clock) = recorded
    with Memory(url, clock=clock, tenant="other") as other:
        before = (other.stats(), [f.object for f in other.facts()], len(other.episodes()))
        _drive_memory(url, clock)
        after = (other.stats(), [f.object for f in other.facts()], len(other.episodes()))
    assert before == after
    assert "Oslo" in before[1]


def test_the_guard_sees_a_real_unrouted_statement(pg_url: str) -> None:
    """Through a real engine and server: the event fires and the offence is recorded."""
    with Memory(pg_url, tenant="acme") as m:
        m.remember("alice", "lives_in", "Paris")
    eng = create_engine(pg_url)
    try:
        with recording(include_tests=True) as rec, eng.connect() as conn:
            conn.execute(text("SELECT count(*) FROM cm_versions")).scalar()
            conn.execute(text("SELECT count(*) FROM cm_versions WHERE tenant = :t"), {"t": "acme"})
    finally:
        eng.dispose()
    assert len(rec.checked) == 2
    assert len(rec.offences) == 1 and "not filtered" in rec.offences[0].why[0]


def test_analysis_is_cached_per_statement_text() -> None:
    sql = "SELECT id FROM cm_versions WHERE tenant = %(t)s"
    assert analyse(sql) is analyse(sql)
