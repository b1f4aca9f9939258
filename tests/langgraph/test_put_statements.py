"""What a put costs the database, in statements and transactions (issue #32,
"writes at peer speed"): a single put is one read of the item and one write
transaction of a fixed number of statements; a batch of puts issues the same
statements whether it holds 50 items or 400 (rows go in by ``executemany`` or
one multi-row statement, never one statement per item).

Counted: every statement that passes SQLAlchemy (``executemany``: one), every
statement a backend runs straight on the driver (``Backend.fetch``: prepared
reads) and every ``COMMIT``. Timings are measured in ``benchmarks/peers.py``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp
from sqlalchemy import event

from chronomem import writer
from langgraph.store.chronomem import ChronomemStore, namespace_index

from ..conftest import ManualClock
from .conftest import StoreFactory
from .fakes import CharEmbeddings


@dataclass
class Sent:
    statements: list[str] = field(default_factory=list)
    begins: int = 0
    commits: int = 0

    def kinds(self) -> list[str]:
        """Each statement's first words (``SELECT``, ``INSERT INTO cm_versions``...)."""
        out = []
        for s in self.statements:
            words = s.split()
            head = words[0].upper()
            if head == "INSERT":
                out.append(f"INSERT INTO {words[2]}")
            elif head == "SELECT":
                table = re.search(r"\bFROM\s+(\S+)", s)
                out.append(f"SELECT FROM {table.group(1) if table else '?'}")
            else:
                out.append(" ".join(words[:2]))
        return out


@contextmanager
def sent(store: ChronomemStore, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sent]:
    """What the store sends to its database meanwhile (see the module docstring)."""
    out = Sent()
    backend = type(store.memory.backend)
    engine = store.memory.backend.engine
    fetch = backend.fetch

    def counted_fetch(cls: Any, conn: Any, sql: str, params: Any) -> list[Any]:
        out.statements.append(sql)
        return fetch.__func__(cls, conn, sql, params)  # type: ignore[attr-defined,no-any-return]

    def note(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if not statement.lstrip().upper().startswith(("ANALYZE", "SAVEPOINT", "RELEASE")):
            out.statements.append(statement)

    def began(conn: Any) -> None:
        out.begins += 1

    def committed(conn: Any) -> None:
        out.commits += 1
        out.statements.append("COMMIT")

    with monkeypatch.context() as m:
        m.setattr(backend, "fetch", classmethod(counted_fetch))
        event.listen(engine, "before_cursor_execute", note)
        event.listen(engine, "begin", began)
        event.listen(engine, "commit", committed)
        try:
            yield out
        finally:
            event.remove(engine, "before_cursor_execute", note)
            event.remove(engine, "begin", began)
            event.remove(engine, "commit", committed)


def _puts(start: int, n: int, *, overwrite: bool = False) -> list[PutOp]:
    """``n`` puts into 5 namespaces: new keys, or (``overwrite``) keys put before."""
    return [
        PutOp(("users", f"u{i % 5}"), f"k{i - start if overwrite else i}", {"text": f"item {i}"})
        for i in range(start, start + n)
    ]


@pytest.fixture
def file_store(tmp_path: Path, clock: ManualClock) -> Iterator[ChronomemStore]:
    """A SQLite file store with a vector index on ``text`` (the benchmark's shape)."""
    store = ChronomemStore(
        str(tmp_path / "store.db"),
        clock=clock,
        index={"dims": 16, "embed": CharEmbeddings(dims=16), "fields": ["text"]},
    )
    try:
        yield store
    finally:
        store.close()


def test_a_single_put_is_one_write_transaction_with_one_read(
    file_store: ChronomemStore, monkeypatch: pytest.MonkeyPatch, clock: ManualClock
) -> None:
    """The item is read inside the write transaction, by the writer's own read of
    current versions (``Memory.apply_planned``): 6 statements for a new item, 7
    for an overwrite (7 and 8 while the item was read first, on its own)."""
    store = file_store
    store.batch(_puts(0, 20))
    for key, what, ceiling in (("new", "a new item", 6), ("k3", "an overwrite", 7)):
        clock.advance(seconds=1)
        with sent(store, monkeypatch) as s:
            store.put(("users", "u3"), key, {"text": f"{what} likes tea"})
        assert (s.begins, s.commits) == (1, 1), (what, s.kinds())
        kinds = s.kinds()
        # the write: its BEGIN, the stamp, one read of the item and the slots the
        # put touches, at most one close, the version rows in one INSERT, their
        # vectors in one INSERT, COMMIT
        assert kinds[0] == "BEGIN IMMEDIATE", kinds
        assert kinds[1] == "INSERT INTO cm_txclock", kinds
        assert kinds[2] == "SELECT FROM cm_versions", kinds
        assert kinds[-3:] == ["INSERT INTO cm_versions", "INSERT INTO cm_vectors", "COMMIT"], kinds
        if what == "a new item":
            assert kinds[3:-3] == [], kinds
        else:  # the close of the running version
            assert kinds[3:-3] == ["UPDATE cm_versions"], kinds
        assert len(kinds) <= ceiling, kinds
    assert store.get(("users", "u3"), "k3").value == {"text": "an overwrite likes tea"}  # type: ignore[union-attr]
    assert store.get(("users", "u3"), "new") is not None


@pytest.mark.parametrize("overwrite", [False, True], ids=["new items", "overwrites"])
def test_a_batch_of_puts_issues_the_same_statements_at_50_and_400_items(
    file_store: ChronomemStore,
    monkeypatch: pytest.MonkeyPatch,
    clock: ManualClock,
    overwrite: bool,
) -> None:
    store = file_store
    store.batch(_puts(0, 400))  # the store's first write also reads its predicate registry
    counts = []
    for start, n in ((1000, 50), (2000, 400)):
        clock.advance(seconds=1)
        with sent(store, monkeypatch) as s:
            store.batch(_puts(start, n, overwrite=overwrite))
        counts.append(s.kinds())
        # one write transaction: the items are read inside it, by the writer's own
        # read (``ChronomemStore._put_all``), no read transaction before it
        assert (s.begins, s.commits) == (1, 1), s.kinds()
        assert s.kinds()[:3] == [
            "BEGIN IMMEDIATE",
            "INSERT INTO cm_txclock",
            "SELECT FROM cm_versions",
        ]
    small, big = counts
    assert small == big, (small, big)
    # the version rows go in through one staging table (four statements), the
    # vectors in one executemany: no statement per item
    assert big.count("INSERT INTO cm_vectors") == 1, big
    assert len(big) <= 16, big
    found = store.search(("users", "u1"), limit=500)
    assert len(found) == (80 if overwrite else 170)


def test_statements_per_batch_do_not_depend_on_its_size(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch, clock: ManualClock
) -> None:
    """On every backend: a batch of 400 puts sends what a batch of 50 does."""
    store = make_store()
    store.batch(_puts(0, 400))
    counts = []
    for start, n in ((1000, 50), (2000, 400)):
        clock.advance(seconds=1)
        with sent(store, monkeypatch) as s:
            store.batch(_puts(start, n, overwrite=True))
        counts.append(len(s.statements))
    assert counts[0] == counts[1], counts


def test_a_batch_reads_its_namespace_entries_narrowly(
    file_store: ChronomemStore, monkeypatch: pytest.MonkeyPatch, clock: ManualClock
) -> None:
    """A batch putting into many namespaces that are indexed already reads its
    entries' slots with only the columns the writer compares (``writer._ensured``):
    no whole ``cm_versions`` row of an entry is fetched (before, each of the
    batch's ~2 entries per namespace came whole with the live read)."""
    store = file_store
    spaces = [("users", f"u{i}") for i in range(40)]
    store.batch([PutOp(ns, "k0", {"text": "first"}) for ns in spaces])
    clock.advance(seconds=1)
    backend = type(store.memory.backend)
    fetch = backend.fetch
    widths: list[tuple[int, str]] = []  # (columns, subject when whole) of each row fetched
    at_subject = writer._COL["subject"]

    def counted_fetch(cls: Any, conn: Any, sql: str, params: Any) -> list[Any]:
        rows = fetch.__func__(cls, conn, sql, params)  # type: ignore[attr-defined]
        for r in rows:
            whole = len(r) == len(writer._COL)
            widths.append((len(r), r[at_subject] if whole else ""))
        return rows  # type: ignore[no-any-return]

    with monkeypatch.context() as m:
        m.setattr(backend, "fetch", classmethod(counted_fetch))
        store.batch([PutOp(ns, "k1", {"text": "second"}) for ns in spaces])
    whole_entries = [s for n, s in widths if s.startswith(namespace_index.UNDER_PREFIX)
                     or s.startswith(namespace_index.KEY_PREFIX)]  # fmt: skip
    assert whole_entries == [], len(whole_entries)
    # 40 @namespace entries, 40 @under ones at depth 2, one at depth 1: read narrowly
    assert sum(1 for n, _ in widths if n == 1 + len(writer._KEPT)) == 81, widths
    assert len(store.list_namespaces(limit=100)) == 40
