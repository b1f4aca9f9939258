"""PostgreSQL: the writer's own ``ANALYZE`` leaves the read plans on their indexes.

The writer analyzes ``cm_versions`` and ``cm_vectors`` itself when this process's
inserts reach 2k rows, and after every doubling (``postgres._analyze_on_doubling``),
so that a table that grew since its last statistics is not planned as a tiny one;
only the columns the read plans use (``postgres.ANALYZED_COLUMNS``). Right after
each of those ANALYZEs (2k, 4k, 8k rows; autovacuum off for both tables, so these
statistics are the writer's alone), the statements the key read paths really send
(captured with ``statements.counting``) are planned with ``EXPLAIN (FORMAT JSON)``:
no sequential scan of either table, and each path's own index. Without the
writer's ANALYZE the same plans take other indexes (the control)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event

from chronomem import Memory
from chronomem.backends import postgres as pg_backend
from chronomem.retrieval import cache

from .conftest import T0, ManualClock
from .statements import counting

TABLES = ("cm_versions", "cm_vectors")
BATCH = 1000
CHECKPOINTS = (2000, 4000, 8000)  # where the writer analyzes (ANALYZE_FIRST, doubled)
SLOT = {"cm_versions_slot_current", "cm_versions_i1"}
SUBJECT = {"cm_versions_current", "cm_versions_subject"}
PREDICATES = ("lives_in", "works_at", "likes", "speaks", "plays", "visited", "studies", "reads")
ADJ = ("amber", "ancient", "blue", "quiet", "rapid", "silver", "golden", "hidden", "wild", "calm")
NOUN = ("harbor", "valley", "garden", "bridge", "tower", "forest", "river", "castle", "market")


def _facts(n: int) -> list[tuple[str, str, str, int]]:
    """``n`` distinct (subject, predicate, object, minute) facts, about n / 3 subjects."""
    rng = random.Random(5)
    out: list[tuple[str, str, str, int]] = []
    seen: set[tuple[str, str, str]] = set()
    while len(out) < n:
        f = (
            f"user {rng.randrange(n // 3)}",
            rng.choice(PREDICATES),
            f"{rng.choice(ADJ)} {rng.choice(NOUN)} {rng.randrange(50)}",
        )
        if f not in seen:
            seen.add(f)
            out.append((*f, len(out)))
    return out


@pytest.fixture(params=["postgres", "pgvector"])
def store(request: pytest.FixtureRequest) -> Iterator[Memory]:
    url = request.getfixturevalue("pg_url" if request.param == "postgres" else "pgvector_url")
    m = Memory(url, clock=ManualClock(start=T0 + timedelta(days=30)))
    with m.backend.engine.begin() as conn:
        for t in TABLES:  # the statistics are the writer's alone
            conn.exec_driver_sql(f"ALTER TABLE {t} SET (autovacuum_enabled = false)")
    try:
        yield m
    finally:
        m.close()


def _scans(node: dict[str, Any], out: list[tuple[str, str | None, str | None]]) -> None:
    out.append((node["Node Type"], node.get("Relation Name"), node.get("Index Name")))
    for child in node.get("Plans", ()):
        _scans(child, out)


def _plan(memory: Memory, sql: str, params: Any) -> list[tuple[str, str | None, str | None]]:
    with memory.backend.engine.connect() as conn:
        plan = conn.exec_driver_sql("EXPLAIN (FORMAT JSON) " + sql, params or ()).scalar()
    out: list[tuple[str, str | None, str | None]] = []
    _scans(plan[0]["Plan"], out)
    return out


def _plans_of(memory: Memory, call: Callable[[], Any]) -> dict[str, Any]:
    """The plan nodes of each statement ``call`` sends that reads either table (by
    its text), but pgvector's exact leg: below ``pgvector.EXACT_BELOW`` vectors it
    reads every vector of the tenant by design (its HNSW form is checked apart)."""
    with counting(memory) as cost:
        call()
    plans: dict[str, Any] = {}
    for sql, params in zip(cost.statements, cost.params, strict=True):
        reads = sql.lstrip().upper().startswith(("SELECT", "WITH"))
        if reads and any(t in sql for t in TABLES) and "<=>" not in sql:
            plans[" ".join(sql.split())[:160]] = _plan(memory, sql, params)
    return plans


def _paths(memory: Memory, facts: list[tuple[str, str, str, int]]) -> dict[str, Any]:
    """Each key read path: the call, and the indexes its statements must use (one
    of each set: a slot's current versions are in two indexes, its own and I1's
    exclusion index; a subject's in the current-version index and the one over all
    its versions)."""
    s, p, o, minute = facts[-7]
    fid = memory.facts(subject=s, predicate=p, exact=True)[0].id
    past = T0 + timedelta(minutes=minute // 2)
    tenant = memory.scope.tenant
    ids = [f.id for f in memory.facts(subject=s, exact=True)]
    with memory.backend.engine.connect() as conn:
        version_ids = [r[0] for r in conn.exec_driver_sql("SELECT id FROM cm_versions LIMIT 20")]

    def rescore() -> None:  # the vector leg's exact re-score of its candidates
        with memory.backend.read() as conn:
            cache.stored_vectors(conn, tenant, "v", version_ids)

    assert ids
    return {
        "slot load": (
            lambda: memory.apply(
                [memory.assertion(s, p, o + " again", valid_from=T0 + timedelta(minutes=minute))]
            ),
            [SLOT],
        ),
        "subject, predicate": (
            lambda: memory.facts(subject=s, predicate=p, exact=True),
            [SUBJECT],
        ),
        "subject": (lambda: memory.facts(subject=s, exact=True), [SUBJECT]),
        "subject as of": (
            lambda: memory.facts(subject=s, predicate=p, as_of=past, exact=True),
            [SUBJECT],
        ),
        "fact by id": (lambda: memory.get(fid), [{"cm_versions_fact"}]),
        "subject prefix": (
            lambda: memory.facts(subject_prefix=s[:6], exact=True),
            [{"cm_versions_subject_head"}],
        ),
        "newest of a predicate": (
            lambda: memory.newest_facts(p, limit=10, exact=True),
            [{"cm_versions_newest"}],
        ),
        "search": (
            lambda: memory.search(f"{o.split()[0]} {o.split()[1]}", k=10),
            [{"cm_versions_tsv"}, {"cm_versions_pkey"}],
        ),
        "vector re-score": (rescore, [{"cm_vectors_pkey"}]),
    }


def _misplanned(memory: Memory, facts: list[tuple[str, str, str, int]]) -> dict[str, Any]:
    """Each path whose plans scan a table or miss its index: what they used."""
    memory.search("amber harbor", k=10)  # the vector mirror loaded (one read of every row)
    bad: dict[str, Any] = {}
    for name, (call, want) in _paths(memory, facts).items():
        plans = _plans_of(memory, call)
        nodes = [node for plan in plans.values() for node in plan]
        used = {index for _, _, index in nodes if index}
        scans = any(kind == "Seq Scan" and rel in TABLES for kind, rel, _ in nodes)
        if scans or any(not (one_of & used) for one_of in want):
            bad[name] = plans
    return bad


def _pgvector_leg_misplanned(memory: Memory) -> list[Any] | None:
    """The pgvector leg's HNSW form (a tenant of 50k vectors or more): its statement
    must be served by the HNSW index, not a scan and a sort of every vector."""
    from chronomem.retrieval import legs
    from chronomem.retrieval import pgvector as pgv

    if not memory._retrieval.pgvector:
        return None
    q = memory._retrieval.embedder.embed(["amber harbor"])[0]
    tf = legs.TimeFilter(2**62, None, frozenset({legs.State.LIVE}))
    seen: list[tuple[str, Any]] = []

    def capture(c: Any, cur: Any, stmt: str, params: Any, ctx: Any, many: bool) -> None:
        if "<=>" in stmt:
            seen.append((stmt, params))

    with memory.backend.read() as conn:
        event.listen(conn, "before_cursor_execute", capture)
        try:
            pgv.fact_leg(conn, memory.scope, tf, q, 10, rows_in_tenant=pgv.EXACT_BELOW)
        finally:
            event.remove(conn, "before_cursor_execute", capture)
    assert len(seen) == 1
    nodes = _plan(memory, *seen[0])
    if any(index == "cm_vectors_hnsw" for _, _, index in nodes):
        return None
    return nodes


def _load_to_checkpoints(memory: Memory) -> Iterator[tuple[int, list[Any]]]:
    """Load in batches of ``BATCH``; yield at each checkpoint, once the writer's
    ANALYZE of each table ran with that batch."""
    facts = _facts(CHECKPOINTS[-1])
    analyzed: list[str] = []

    def note(c: Any, cur: Any, stmt: str, *_: Any) -> None:
        if stmt.lstrip().upper().startswith("ANALYZE"):
            analyzed.append(stmt)

    engine = memory.backend.engine
    event.listen(engine, "before_cursor_execute", note)
    try:
        for at in range(0, len(facts), BATCH):
            memory.apply(
                [
                    memory.assertion(s, p, o, valid_from=T0 + timedelta(minutes=m), exact=True)
                    for s, p, o, m in facts[at : at + BATCH]
                ]
            )
            if at + BATCH in CHECKPOINTS:
                yield at + BATCH, list(analyzed)
                analyzed.clear()
    finally:
        event.remove(engine, "before_cursor_execute", note)


def test_the_plans_right_after_the_writers_analyze_use_their_indexes(store: Memory) -> None:
    facts = _facts(CHECKPOINTS[-1])
    for n, analyzed in _load_to_checkpoints(store):
        assert sorted(s.split()[1] for s in analyzed) == sorted(TABLES), (n, analyzed)
        assert _misplanned(store, facts[:n]) == {}, n
        if n >= 4000:  # 2k vectors: a scan and a sort is the cheaper plan, rightly
            assert _pgvector_leg_misplanned(store) is None, n


def test_without_the_writers_analyze_some_plan_misses_its_index(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the control: the same checks, no ANALYZE at all, find a plan on another index
    monkeypatch.setattr(pg_backend, "ANALYZE_FIRST", 10**9)
    m = Memory(pg_url, clock=ManualClock(start=T0 + timedelta(days=30)))
    try:
        with m.backend.engine.begin() as conn:
            for t in TABLES:
                conn.exec_driver_sql(f"ALTER TABLE {t} SET (autovacuum_enabled = false)")
        facts = _facts(CHECKPOINTS[-1])
        for n, analyzed in _load_to_checkpoints(m):
            assert analyzed == []
            if n == CHECKPOINTS[-1]:
                assert _misplanned(m, facts[:n]) != {}
    finally:
        m.close()
