"""``list_namespaces`` pages in SQL (``namespace_index.py``, ``Memory.live_entries``):
checked against LangGraph's ``InMemoryStore`` holding the same live items, now and
as of past instants, for random namespaces (labels that sort differently as text
and as tuples, escaped characters, namespaces longer than an index head) and
random prefix/suffix conditions with wildcards, ``max_depth``, ``limit`` and
``offset``; and a listing's statements, rows and (SQLite) virtual machine steps
are the same with 10× more namespaces."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from chronomem import prepared
from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock
from .conftest import StoreFactory

LONG = "x" * 100  # two of them (and a third label) make a key longer than a head
# "a" < "a-x" as labels, but "a." > "a-x." as text; U+0001/U+0002 are escaped in keys
LABELS = ["a", "a-x", "b", "\x01", "\x02z", "a\\", LONG]
_namespaces = st.lists(st.sampled_from(LABELS), min_size=1, max_size=4).map(tuple)
_steps = st.lists(
    st.tuples(st.sampled_from(["put", "put", "delete"]), _namespaces, st.sampled_from("kj")),
    min_size=1,
    max_size=8,
)
_path = st.lists(st.sampled_from([*LABELS[:4], LONG, "*"]), min_size=0, max_size=3).map(tuple)
_queries = st.fixed_dictionaries(
    {
        "prefix": st.none() | _path,
        "suffix": st.none() | _path,
        "max_depth": st.none() | st.integers(1, 5),
        "limit": st.integers(0, 6),
        "offset": st.integers(0, 4),
    }
)


def _oracle(live: set[tuple[tuple[str, ...], str]], q: dict[str, Any]) -> Any:
    """LangGraph's own listing of the live items (a fresh store: InMemoryStore lists
    namespaces whose items were deleted, this store does not)."""
    theirs = InMemoryStore()
    for ns, key in sorted(live):
        theirs.put(ns, key, {"v": 1})
    return theirs.list_namespaces(**q)


@dataclass
class Model:
    items: set[tuple[tuple[str, ...], str]] = field(default_factory=set)
    past: list[tuple[datetime, set[tuple[tuple[str, ...], str]]]] = field(default_factory=list)


def test_pages_match_langgraph_now_and_in_the_past(
    store: ChronomemStore, clock: ManualClock
) -> None:
    model = Model()

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(steps=_steps, queries=st.lists(st.tuples(_queries, st.integers(0, 10**6)), min_size=1, max_size=3))  # fmt: skip
    def run(steps: list[tuple[str, tuple[str, ...], str]], queries: list[Any]) -> None:
        for kind, ns, key in steps:
            clock.advance(seconds=1)
            if kind == "put":
                store.put(ns, key, {"v": key})
                model.items.add((ns, key))
            else:
                store.delete(ns, key)
                model.items.discard((ns, key))
            model.past.append((clock.advance(seconds=1), set(model.items)))
        for q, pick in queries:
            assert store.list_namespaces(**q) == _oracle(model.items, q), q
            at, then = model.past[pick % len(model.past)]
            assert store.as_of(at).list_namespaces(**q) == _oracle(then, q), (q, at)

    run()


def test_keys_longer_than_a_head_sort_and_page_as_tuples(store: ChronomemStore) -> None:
    names = [(LONG, LONG, tail) for tail in ("c", "a", "b", "a-x", "a\\")] + [(LONG, "a")]
    for ns in names:
        store.put(ns, "k", {"v": 1})
    theirs = InMemoryStore()
    for ns in names:
        theirs.put(ns, "k", {"v": 1})
    for q in [{}, {"limit": 2, "offset": 1}, {"max_depth": 3, "offset": 3}, {"max_depth": 2}]:
        assert store.list_namespaces(**q) == theirs.list_namespaces(**q), q


@dataclass
class Reads:
    statements: int = 0
    rows: int = 0
    vm_steps: int = 0


@contextmanager
def _reads() -> Iterator[Reads]:
    """What every prepared statement run meanwhile cost: statements, rows returned
    and, on SQLite, virtual machine instructions (they grow with rows examined)."""
    seen = Reads()
    original = prepared.Prepared.rows

    def step() -> int:
        seen.vm_steps += 1
        return 0

    def rows(self: prepared.Prepared, conn: Any, params: Any) -> Any:
        raw = conn.connection.driver_connection
        counts = hasattr(raw, "set_progress_handler")  # sqlite3
        if counts:
            raw.set_progress_handler(step, 1)
        try:
            out = original(self, conn, params)
        finally:
            if counts:
                raw.set_progress_handler(None, 1)
        seen.statements += 1
        seen.rows += len(out)
        return out

    prepared.Prepared.rows = rows  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        prepared.Prepared.rows = original  # type: ignore[method-assign]


LISTINGS: list[dict[str, Any]] = [
    {"limit": 10},
    {"limit": 10, "offset": 20},
    {"prefix": ("users",), "limit": 10},
    {"suffix": ("notes",), "limit": 10},
    {"max_depth": 2, "limit": 10},
    {"max_depth": 1},
]


def _costs(store: ChronomemStore, n: int) -> list[tuple[int, int, int]]:
    for at in range(0, n, 500):
        store.batch(
            [
                PutOp(("users", f"u{i:05d}", "notes"), "k", {"text": f"item {i}"}, index=False)
                for i in range(at, min(at + 500, n))
            ]
        )
    store.list_namespaces()  # the scope's index is built (once)
    out = []
    for q in LISTINGS:
        with _reads() as cost:
            found = store.list_namespaces(**q)
        assert found, q
        out.append((cost.statements, cost.rows, cost.vm_steps))
    return out


def test_a_listing_reads_as_much_with_10x_the_namespaces(make_store: StoreFactory) -> None:
    small = _costs(make_store(tenant="small"), 150)
    large = _costs(make_store(tenant="large"), 1500)
    for q, (s, lg) in zip(LISTINGS, zip(small, large, strict=True), strict=True):
        assert s[:2] == lg[:2], (q, s, lg)  # statements, rows
        assert s[0] == 1 and s[1] <= 10, (q, s)  # one statement, the page's rows
        assert abs(s[2] - lg[2]) <= max(50, s[2] // 20), (q, s, lg)  # SQLite's steps
