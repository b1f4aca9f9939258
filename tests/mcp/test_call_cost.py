"""What one MCP tool call costs the database, through a real fastmcp ``Client``
in-process, on SQLite and PostgreSQL (issue #32): the statements a call runs are
the same in a store of 50 and of 500 facts, for every tool and resource; ``why``
runs the statements ``Memory.why`` runs, no more (it read the fact twice: once to
check the id, once to answer), ``forget`` one ``why`` read, and ``memory://facts``
reads the facts it may show (one more, to say whether it cut), not the store (it
read every live fact, and on SQLite their sources in one more statement past 50
facts). SQLite's prepared statements, run on the driver's cursor, are not listed
(``counting``): there the comparison holds the other statements."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chronomem import Memory
from chronomem.mcp import build_server
from chronomem.mcp import tools as tools_module
from tests.conftest import ManualClock

from ..statements import counting, decoded_facts
from .driver import SyncClient

CAP = 20  # memory://facts shows at most this many (patched down from 1,000)


@pytest.fixture
def cap(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(tools_module, "MAX_RESOURCE_FACTS", CAP)
    return CAP


def _filled(url: str | None, clock: ManualClock, n: int) -> Memory:
    """A store with, in its own tenant, ``n`` ordinary facts, Ada's home (moved
    once) and a remembered text."""
    m = Memory(url, clock=clock, tenant=f"t{n}", user="ada")
    m.remember_many(
        {"subject": f"s{i}", "predicate": "likes", "obj": f"thing {i}"} for i in range(n)
    )
    m.remember("ada", "lives_in", "Paris")
    clock.advance(days=1)
    m.remember("ada", "lives_in", "Berlin")
    m.add("I like green tea.")
    return m


def _calls(m: Memory, then: str) -> dict[str, tuple[str, dict[str, Any]]]:
    (berlin,) = m.facts(subject="ada", predicate="lives_in")
    return {
        "search": ("search", {"query": "where does ada live", "k": 5}),
        "search as_of": ("search", {"query": "where does ada live", "k": 5, "as_of": then}),
        "recall": ("recall", {"query": "where does ada live"}),
        "history": ("history", {"subject": "ada", "predicate": "lives_in"}),
        "why": ("why", {"fact_id": berlin.id}),
        "remember_fact": (
            "remember_fact",
            {"subject": "ada", "predicate": "likes", "object": "tea"},
        ),
    }


def _costs(url: str | None, clock: ManualClock, n: int) -> dict[str, list[str]]:
    m = _filled(url, clock, n)
    then = clock.mark().isoformat()
    client = SyncClient(build_server(m))
    try:
        out = {}
        for name, (tool, args) in _calls(m, then).items():
            client.ok(tool, **args)  # warm: mirrors synced, statements compiled
            with counting(m) as cost:
                client.ok(tool, **args)
            out[name] = cost.statements
        client.read("memory://facts")
        with counting(m) as cost:
            client.read("memory://facts")
        out["memory://facts"] = cost.statements
        return out
    finally:
        client.close()
        m.close()


def test_a_call_runs_the_same_statements_at_50_and_500_facts(
    url: str | None, clock: ManualClock, cap: int
) -> None:
    small, large = (_costs(url, clock, n) for n in (50, 500))
    assert {k: len(v) for k, v in small.items()} == {k: len(v) for k, v in large.items()}


@pytest.fixture
def store(url: str | None, clock: ManualClock) -> Iterator[Memory]:
    m = _filled(url, clock, 50)
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def client(store: Memory) -> Iterator[SyncClient]:
    c = SyncClient(build_server(store))
    try:
        yield c
    finally:
        c.close()


def test_why_reads_the_fact_once(store: Memory, client: SyncClient) -> None:
    (berlin,) = store.facts(subject="ada", predicate="lives_in")
    client.ok("why", fact_id=berlin.id)
    store.why(berlin.id)
    with counting(store) as direct:
        store.why(berlin.id)
    with counting(store) as tool:
        got = client.ok("why", fact_id=berlin.id)
    assert len(tool.statements) == len(direct.statements)
    assert got["fact_id"] == berlin.id


def test_forget_reads_the_fact_once(store: Memory, client: SyncClient) -> None:
    (berlin,) = store.facts(subject="ada", predicate="lives_in")
    whys = []
    real = store.why

    def why(*args: Any, **kwargs: Any) -> Any:
        whys.append(args)
        return real(*args, **kwargs)

    store.why = why  # type: ignore[method-assign]
    try:
        got = client.ok("forget", fact_id=berlin.id)
    finally:
        del store.why
    assert len(whys) == 1
    assert [(f["object"], f["state"]) for f in got["facts"]] == [("Berlin", "retracted")]


def test_the_facts_resource_reads_what_it_shows(
    store: Memory, client: SyncClient, cap: int
) -> None:
    with decoded_facts() as rows:
        got = client.read("memory://facts")
    assert rows[0] == cap + 1
    assert got["truncated"] is True
    assert [f["version_id"] for f in got["facts"]] == [f.version_id for f in store.facts()[:cap]]
