"""``ChronomemStorage.list_records``: a page of the current records, newest
``created_at`` first, builds a ``MemoryRecord`` for the page's records only. The
records it returns are the ones the whole listing gave (every current record
built, filtered, sorted, cut), over random record sets, scopes, enclosing scopes,
past views and records whose ``created_at`` the storage did not write, on both
databases. In the present it walks schema v13's ``cm_versions_record_created``
(``Memory.newest_by_instant``): counted at 200 and 2,000 records, the rows read
and (SQLite) the instructions run follow the page, not the store; a v12 store
gets the index when it is opened."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from crewai.memory.types import MemoryRecord
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from chronomem import Cardinality
from chronomem.schema import SCHEMA_VERSION
from chronomem_adapters.conformance import KitClock
from crewai_chronomem import ChronomemStorage, paths
from crewai_chronomem.conformance import kit_embedder
from crewai_chronomem.storage import PREDICATE, to_record

from ..reliability._support import raw, version_indexes
from ..statements import counting, versions_plan

T0 = datetime(2026, 1, 1)  # naive UTC, as CrewAI's records carry it


def reference_list(
    storage: ChronomemStorage, scope_prefix: str | None, limit: int, offset: int
) -> list[MemoryRecord]:
    """The listing as it was: every current record built, filtered, sorted, cut."""
    recs = [to_record(f) for f in storage._current()]
    if scope_prefix is not None:
        recs = [r for r in recs if paths.within(r.scope, scope_prefix)]
    recs.sort(key=lambda r: (r.created_at, r.id), reverse=True)
    return recs[offset : offset + limit]


def rec(rid: str, content: str, scope: str, created: int | None) -> MemoryRecord:
    extra: dict[str, Any] = (
        {} if created is None else {"created_at": T0 + timedelta(minutes=created)}
    )
    return MemoryRecord(
        id=rid, content=content, scope=scope, embedding=kit_embedder([content])[0], **extra
    )


def raw_record(storage: ChronomemStorage, rid: str, scope: str, created: object) -> None:
    """A record fact written past the storage (by hand, or by another writer): its
    ``created_at`` as the storage writes it, or missing, naive, in another offset,
    with a zero fraction, not text (the listing then reads every record)."""
    meta: dict[str, Any] = {"scope": scope}
    if created is not None:
        meta["created_at"] = created
    store = storage.chronomem
    store.apply(
        [store.assertion(rid, PREDICATE, "raw", exact=True, metadata=meta,
                         cardinality=Cardinality.ONE, index_text="")]
    )  # fmt: skip


IDS = [f"r{i}" for i in range(8)]
UNWRITTEN = [
    "2026-01-01T00:02:00+00:00",  # as the storage writes it: in the index's order
    "2026-01-01T00:01:30.250000+00:00",
    None,
    "2026-01-01T00:02:00",
    "2026-01-01T02:02:00+02:00",
    "2026-01-01T00:02:00.000000+00:00",
    "2026-01-01T00:02:00Z",
    12,
]
SCOPES = ["/", "/a", "/a/b", "/c"]
steps = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["save", "save in user"]),
            st.lists(
                st.tuples(
                    st.sampled_from(IDS),
                    st.sampled_from(["tea", "ramen", "kkk"]),
                    st.sampled_from(SCOPES),
                    st.one_of(st.none(), st.integers(0, 3)),  # equal created_at: ties
                ),
                min_size=1,
                max_size=4,
                unique_by=lambda t: t[0],
            ),
        ),
        st.tuples(st.just("delete"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2)),
        st.tuples(st.just("end"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2)),
        st.tuples(st.just("tick"), st.integers(0, 2)),
        st.tuples(
            st.just("raw"),
            st.tuples(st.sampled_from(IDS), st.sampled_from(SCOPES), st.sampled_from(UNWRITTEN)),
        ),
    ),
    min_size=1,
    max_size=10,
)
pages = st.lists(
    st.tuples(
        st.sampled_from([None, "/", "/a", "/a/b", "/c"]), st.integers(0, 9), st.integers(0, 6)
    ),
    min_size=1,
    max_size=4,
)


_tenants = iter(range(10**9))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps, pages, st.booleans(), st.booleans())
def test_a_page_is_what_the_whole_listing_gave(
    url: str | None,
    ops: list[tuple[str, Any]],
    asked: list[tuple[Any, int, int]],
    past: bool,
    in_user: bool,
) -> None:
    clock = KitClock(datetime(2026, 1, 1, tzinfo=timezone.utc))  # reads see the writes
    store = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    try:
        root = store.scoped(tenant=f"h{next(_tenants)}")  # examples share a database
        user = root.scoped(user="u")  # sees the tenant's records too: a record twice
        marks = []
        for op, arg in ops:
            if op.startswith("save"):
                target = user if op == "save in user" else root
                target.save([rec(*r) for r in arg])
            elif op == "raw":
                raw_record(root, *arg)
            elif op == "delete":
                root.delete(record_ids=arg)
            elif op == "end":
                root.end(arg)
            else:
                clock.advance(seconds=arg)
            marks.append(clock.mark())
        view = user if in_user else root
        if past:
            view = view.as_of(marks[len(marks) // 2])
        for scope, limit, offset in asked:
            got = view.list_records(scope_prefix=scope, limit=limit, offset=offset)
            assert got == reference_list(view, scope, limit, offset), (scope, limit, offset)
    finally:
        store.close()


def _filled(url: str | None, clock: Any, n: int) -> tuple[ChronomemStorage, ChronomemStorage]:
    """A store and, in its own tenant, ``n`` records (odd ones in ``/a``, even ones
    in ``/c``), each created a minute after the last, beside ``n`` ordinary facts."""
    root = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    storage = root.scoped(tenant=f"t{n}")
    for start in range(0, n, 500):
        storage.save(
            [rec(f"n{i}", "kkk", "/a" if i % 2 else "/c", i) for i in range(start, n)][:500]
        )
    storage.chronomem.remember_many(
        {"subject": f"s{i}", "predicate": "likes", "obj": "tea"} for i in range(n)
    )
    return root, storage


def _listing_cost(
    url: str | None, clock: Any, n: int, counted: dict[str, int], scope: str | None = None
) -> tuple[dict[str, int], int, str]:
    root, storage = _filled(url, clock, n)
    try:
        storage.list_records(limit=10, offset=5)  # warm: the prepared statements
        counted.update(rows=0, records=0)
        with counting(storage.chronomem) as cost:
            got = storage.list_records(scope_prefix=scope, limit=10, offset=5)
        read = dict(counted)
        ids = range(n - 6, n - 16, -1) if scope is None else range(n - 11, n - 31, -2)
        assert [r.id for r in got] == [f"n{i}" for i in ids]
        assert got == reference_list(storage, scope, 10, 5)
        # the probe for records the index cannot order, then the pages: all walk it
        probe, page, *more = (
            versions_plan(storage.chronomem, s, p)
            for s, p in zip(cost.statements, cost.params, strict=True)
            if "FROM cm_versions" in s
        )
        assert all("cm_versions_record_created" in p for p in (probe, *more)), (probe, more)
        return read, cost.vm_steps, page
    finally:
        root.close()


def test_a_page_reads_the_page_at_200_and_2000_records(
    url: str | None, clock: Any, counted: dict[str, int]
) -> None:
    """The page's rows are the only ones decoded, the page statement walks the
    index (no sort of every record: SQLite sorts no more than ties, PostgreSQL's
    sort is incremental), and SQLite runs as many instructions at either size."""
    walks = [_listing_cost(url, clock, n, counted) for n in (200, 2000)]
    for rows, _, plan in walks:
        assert rows == {"rows": 10, "records": 10}
        assert "cm_versions_record_created" in plan, plan
        assert "USE TEMP B-TREE FOR ORDER BY" not in plan, plan
        assert "Sort  (" not in plan.replace("Incremental Sort  (", ""), plan
    if url is None:
        assert walks[0][1] == walks[1][1], (walks[0][1], walks[1][1])


def test_a_scope_page_reads_what_it_walks_past_not_the_store(
    url: str | None, clock: Any, counted: dict[str, int]
) -> None:
    """Under ``/a`` (every other record) the page of 10 after 5 reads the records
    walked past as well (the scope is record metadata, matched in Python), the
    same at either size."""
    walks = [_listing_cost(url, clock, n, counted, "/a") for n in (200, 2000)]
    assert walks[0][0] == walks[1][0] == {"rows": 10, "records": 10}
    if url is None:
        assert walks[0][1] == walks[1][1], (walks[0][1], walks[1][1])


def test_a_record_the_storage_did_not_write_reads_every_record(
    url: str | None, clock: Any, counted: dict[str, int]
) -> None:
    """A current record whose ``created_at`` is no UTC ISO text (here: missing)
    could sort anywhere: the listing reads and sorts every record, as before,
    until it is gone."""
    root, storage = _filled(url, clock, 200)
    try:
        raw_record(storage, "hand", "/a", None)
        counted.update(rows=0, records=0)
        got = storage.list_records(limit=10)
        assert counted == {"rows": 201, "records": 10}
        assert got == reference_list(storage, None, 10, 0)
        storage.delete(record_ids=["hand"])
        counted.update(rows=0, records=0)
        got = storage.list_records(limit=10)
        assert counted == {"rows": 10, "records": 10}
        assert got == reference_list(storage, None, 10, 0)
    finally:
        root.close()


def test_ordinary_facts_are_not_in_the_index(url: str | None, clock: Any) -> None:
    """The index is partial: the record predicate's current versions only, so
    ordinary facts (and superseded records) pay no entry for it. A record's
    ended version stays current (its validity closed): 201 entries for 200
    records, one of them updated."""
    root, storage = _filled(url, clock, 200)
    try:
        storage.save([rec("n0", "changed", "/c", 0)])  # supersedes a version
        engine = storage.chronomem.backend.engine
        with engine.connect() as conn:
            versions = conn.exec_driver_sql("SELECT count(*) FROM cm_versions").scalar()
            where = conn.exec_driver_sql(
                "SELECT count(*) FROM cm_versions "
                "WHERE predicate = 'crewai_record' AND superseded_at IS NULL"
            ).scalar()
        assert (versions, where) == (402, 201)
    finally:
        root.close()


def test_a_v12_store_gets_the_index(durable_url: str, clock: Any) -> None:
    storage = ChronomemStorage(durable_url, embedder=kit_embedder, clock=clock)
    storage.save([rec(f"n{i}", "kkk", "/a", i) for i in range(5)])
    storage.chronomem.close()
    with raw(durable_url) as conn:  # what a v12 store looks like
        conn.execute(text("DROP INDEX cm_versions_record_created"))
        conn.execute(text("UPDATE cm_meta SET value = '12' WHERE key = 'schema_version'"))
        conn.commit()  # PostgreSQL's connection is transactional: else nothing changed
    with raw(durable_url) as conn:
        version = conn.execute(text("SELECT value FROM cm_meta WHERE key = 'schema_version'"))
        assert version.scalar() == "12"
    storage = ChronomemStorage(durable_url, embedder=kit_embedder, clock=clock)
    try:
        assert [r.id for r in storage.list_records(limit=2)] == ["n4", "n3"]
    finally:
        storage.chronomem.close()
    with raw(durable_url) as conn:
        assert "cm_versions_record_created" in version_indexes(durable_url)
        version = conn.execute(text("SELECT value FROM cm_meta WHERE key = 'schema_version'"))
        assert version.scalar() == str(SCHEMA_VERSION)
