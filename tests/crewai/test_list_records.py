"""``ChronomemStorage.list_records``: a page of the current records, newest
``created_at`` first, builds a ``MemoryRecord`` for the page's records only. The
records it returns are the ones the whole listing gave (every current record
built, filtered, sorted, cut), over random record sets, scopes, enclosing scopes
and past views. Its cost counted at 200 and 2,000 records: every current record's
fact is still read (``created_at`` is record metadata, which no index orders: see
docs/design.md), the records built are the page's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from crewai.memory.types import MemoryRecord
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Fact, reads
from chronomem_adapters.conformance import KitClock
from crewai_chronomem import ChronomemStorage, paths
from crewai_chronomem import storage as storage_module
from crewai_chronomem.conformance import kit_embedder
from crewai_chronomem.storage import to_record

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


IDS = [f"r{i}" for i in range(8)]
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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps, pages, st.booleans(), st.booleans())
def test_a_page_is_what_the_whole_listing_gave(
    ops: list[tuple[str, Any]], asked: list[tuple[Any, int, int]], past: bool, in_user: bool
) -> None:
    clock = KitClock(datetime(2026, 1, 1, tzinfo=timezone.utc), timedelta(0))
    root = ChronomemStorage(embedder=kit_embedder, clock=clock)
    try:
        user = root.scoped(user="u")  # sees the tenant's records too: a record twice
        marks = []
        for op, arg in ops:
            if op.startswith("save"):
                target = user if op == "save in user" else root
                target.save([rec(*r) for r in arg])
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
        root.close()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Fact rows decoded (``reads.to_fact``) and records built (``to_record``)."""
    n = {"rows": 0, "records": 0}
    decode, build = reads.to_fact, storage_module.to_record

    def row(*args: Any, **kwargs: Any) -> Fact:
        n["rows"] += 1
        return decode(*args, **kwargs)

    def record(fact: Fact) -> MemoryRecord:
        n["records"] += 1
        return build(fact)

    monkeypatch.setattr(reads, "to_fact", row)
    monkeypatch.setattr(storage_module, "to_record", record)
    yield n


def _listing_cost(url: str | None, clock: Any, n: int, counted: dict[str, int]) -> dict[str, int]:
    root = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    storage = root.scoped(tenant=f"t{n}")
    try:
        for start in range(0, n, 500):
            storage.save(
                [rec(f"n{i}", "kkk", "/a" if i % 2 else "/c", i) for i in range(start, n)][:500]
            )
        counted.update(rows=0, records=0)
        got = storage.list_records(limit=10, offset=5)
        assert [r.id for r in got] == [f"n{i}" for i in range(n - 6, n - 16, -1)]
        return dict(counted)
    finally:
        root.close()


def test_the_listing_builds_the_page_and_reads_every_current_record(
    url: str | None, clock: Any, counted: dict[str, int]
) -> None:
    assert _listing_cost(url, clock, 200, counted) == {"rows": 200, "records": 10}
    assert _listing_cost(url, clock, 2000, counted) == {"rows": 2000, "records": 10}
