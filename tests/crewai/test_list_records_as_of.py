"""``ChronomemStorage.list_records`` of an ``as_of`` view (a past valid instant, a
past belief instant, or both) reads a page of schema v14's index of every record
version (``cm_versions_record_created_history``), not every record believed then:

- over random histories of saves, re-saves of a record with another text, another
  scope or another ``created_at`` (a version superseded), re-saves with the same
  text and new metadata (ended, then written again), deletes (retracted), ends and
  records written past the storage, in a scope and the scope enclosing it, the page
  at every instant of the history is the one the whole listing gave (every record
  fact believed then read, built, filtered, sorted, cut: ``whole_listing``);
- on a long history the page decodes the page's rows only and walks the index, and
  on SQLite runs as many instructions at 200 and 2,000 records (the whole listing
  decoded every record live then). Both on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from crewai.memory.types import MemoryRecord
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from chronomem.schema import SCHEMA_VERSION
from chronomem_adapters.conformance import KitClock
from crewai_chronomem import ChronomemStorage, paths
from crewai_chronomem.conformance import kit_embedder
from crewai_chronomem.storage import PREDICATE, to_record

from ..reliability._support import raw, version_indexes
from ..statements import counting, versions_plan
from .test_list_records import raw_record

T0 = datetime(2026, 1, 1)  # naive UTC, as CrewAI's records carry it
HISTORY_INDEX = "cm_versions_record_created_history"


def whole_listing(
    view: ChronomemStorage,
    scope_prefix: str | None,
    limit: int,
    offset: int,
    times: dict[str, datetime],
) -> list[MemoryRecord]:
    """The listing as the storage gave it before v14: every record fact the view
    believes read, built, filtered by scope, sorted (newest ``created_at``, then
    the record id, both descending; a stable sort of ``facts()``' order), cut."""
    facts = [
        f
        for f in view.chronomem.facts(
            predicate=PREDICATE,
            exact=True,
            valid_at=times.get("valid_at"),
            known_at=times.get("known_at"),
            as_of=times.get("as_of"),
        )
        if f.predicate == PREDICATE
    ]
    recs = [to_record(f) for f in facts]
    if scope_prefix is not None:
        recs = [r for r in recs if paths.within(r.scope, scope_prefix)]
    recs.sort(key=lambda r: (r.created_at, r.id), reverse=True)
    return recs[offset : offset + limit]


def rec(rid: str, content: str, scope: str, created: int | None, tag: int = 0) -> MemoryRecord:
    extra: dict[str, Any] = (
        {} if created is None else {"created_at": T0 + timedelta(minutes=created)}
    )
    return MemoryRecord(
        id=rid,
        content=content,
        scope=scope,
        metadata={"tag": tag},
        embedding=kit_embedder([content])[0],
        **extra,
    )


IDS = [f"r{i}" for i in range(6)]
SCOPES = ["/", "/a", "/a/b", "/c"]
UNSHAPED = [None, "2026-01-01T00:02:00", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00+00:00"]
records = st.tuples(
    st.sampled_from(IDS),
    st.sampled_from(["tea", "ramen"]),  # the same text again: same text, new metadata
    st.sampled_from(SCOPES),
    st.one_of(st.none(), st.integers(0, 3)),  # equal created_at: ties
    st.integers(0, 1),  # the record's own metadata
)
steps = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["save", "save in user"]),
            st.lists(records, min_size=1, max_size=4, unique_by=lambda t: t[0]),
        ),
        st.tuples(st.just("delete"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2)),
        st.tuples(st.just("end"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2)),
        st.tuples(st.just("tick"), st.integers(0, 2)),
        st.tuples(
            st.just("raw"),
            st.tuples(st.sampled_from(IDS), st.sampled_from(SCOPES), st.sampled_from(UNSHAPED)),
        ),
    ),
    min_size=1,
    max_size=12,
)
pages = st.lists(
    st.tuples(st.sampled_from([None, "/", "/a", "/c"]), st.integers(0, 8), st.integers(0, 5)),
    min_size=1,
    max_size=3,
)
_tenants = iter(range(10**9))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps, pages, st.booleans(), st.sampled_from(["as_of", "valid_at", "known_at", "both"]))
def test_a_past_page_is_what_the_whole_listing_gave(
    url: str | None,
    ops: list[tuple[str, Any]],
    asked: list[tuple[Any, int, int]],
    in_user: bool,
    how: str,
) -> None:
    clock = KitClock(datetime(2026, 1, 1, tzinfo=timezone.utc))
    store = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    try:
        root = store.scoped(tenant=f"p{next(_tenants)}")  # examples share a database
        user = root.scoped(user="u")  # sees the tenant's records too: a record twice
        marks = [clock.mark()]
        for op, arg in ops:
            if op.startswith("save"):
                (user if op == "save in user" else root).save([rec(*r) for r in arg])
            elif op == "raw":
                raw_record(root, *arg)
            elif op == "delete":
                root.delete(record_ids=arg)
            elif op == "end":
                root.end(arg)
            else:
                clock.advance(seconds=arg)
            marks.append(clock.mark())
        seen = user if in_user else root
        for i, t in enumerate(marks):
            other = marks[(i * 7 + 3) % len(marks)]
            times: dict[str, datetime] = {
                "as_of": {"as_of": t},
                "valid_at": {"valid_at": t},
                "known_at": {"known_at": t},
                "both": {"valid_at": other, "known_at": t},
            }[how]
            view = seen.as_of(t) if how == "as_of" else seen.as_of(**times)
            for scope, limit, offset in asked:
                got = view.list_records(scope_prefix=scope, limit=limit, offset=offset)
                want = whole_listing(view, scope, limit, offset, times)
                assert got == want, (how, i, scope, limit, offset)
    finally:
        store.close()


def _past_listing_cost(
    url: str | None, clock: Any, n: int, counted: dict[str, int]
) -> tuple[dict[str, int], int, str]:
    """``n`` records, each one saved, re-saved with another text, then (after the
    view's instant) re-saved again, and a third of them deleted: the view at that
    instant lists the second versions, every one of them closed since. Its page of
    10 after 5 is counted."""
    root = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    try:
        storage = root.scoped(tenant=f"h{n}")
        for text in ("kkk", "ramen"):
            for start in range(0, n, 500):
                storage.save(
                    [rec(f"n{i}", text, "/a", i) for i in range(start, min(n, start + 500))]
                )
        then = clock()
        clock.advance(seconds=5)
        storage.save([rec(f"n{i}", "tea", "/a", i) for i in range(n)])
        storage.delete(record_ids=[f"n{i}" for i in range(0, n, 3)])
        view = storage.as_of(then)
        view.list_records(limit=10, offset=5)  # warm: the statements compiled
        counted.update(rows=0, records=0)
        with counting(storage.chronomem) as cost:
            got = view.list_records(limit=10, offset=5)
        read = dict(counted)
        assert [(r.id, r.content) for r in got] == [
            (f"n{i}", "ramen") for i in range(n - 6, n - 16, -1)
        ]
        assert got == whole_listing(view, None, 10, 5, {"as_of": then})
        plans = [
            versions_plan(storage.chronomem, s, p)
            for s, p in zip(cost.statements, cost.params, strict=True)
            if "FROM cm_versions" in s
        ]
        return read, cost.vm_steps, "\n".join(plans)
    finally:
        root.close()


def test_a_past_page_reads_the_page_at_200_and_2000_records(
    url: str | None, clock: Any, counted: dict[str, int]
) -> None:
    """The page's rows are the only ones decoded (the whole listing decoded every
    record believed then: 200 or 2,000), the page walks the history index (SQLite
    sorts no more than ties, PostgreSQL's sort is incremental), and SQLite runs as
    many instructions at either size."""
    walks = [_past_listing_cost(url, clock, n, counted) for n in (200, 2000)]
    for rows, _, plan in walks:
        assert rows == {"rows": 10, "records": 10}
        assert HISTORY_INDEX in plan, plan
        assert "USE TEMP B-TREE FOR ORDER BY" not in plan, plan
        assert "Sort  (" not in plan.replace("Incremental Sort  (", ""), plan
    if url is None:
        assert walks[0][1] == walks[1][1], (walks[0][1], walks[1][1])


def test_a_v13_store_gets_the_history_index(durable_url: str, clock: Any) -> None:
    """A store written before v14 (no history index) gets it, filled with the
    versions already stored, when it is opened: its past page is the whole
    listing's."""
    storage = ChronomemStorage(durable_url, embedder=kit_embedder, clock=clock)
    storage.save([rec(f"n{i}", "kkk", "/a", i) for i in range(5)])
    then = clock()
    clock.advance(seconds=5)
    storage.save([rec(f"n{i}", "tea", "/a", i) for i in range(5)])
    storage.chronomem.close()
    with raw(durable_url) as conn:  # what a v13 store looks like
        conn.execute(text(f"DROP INDEX {HISTORY_INDEX}"))
        conn.execute(text("UPDATE cm_meta SET value = '13' WHERE key = 'schema_version'"))
        conn.commit()
    storage = ChronomemStorage(durable_url, embedder=kit_embedder, clock=clock)
    try:
        view = storage.as_of(then)
        got = view.list_records(limit=2)
        assert [(r.id, r.content) for r in got] == [("n4", "kkk"), ("n3", "kkk")]
        assert got == whole_listing(view, None, 2, 0, {"as_of": then})
    finally:
        storage.chronomem.close()
    assert HISTORY_INDEX in version_indexes(durable_url)
    with raw(durable_url) as conn:
        version = conn.execute(text("SELECT value FROM cm_meta WHERE key = 'schema_version'"))
        assert version.scalar() == str(SCHEMA_VERSION)
