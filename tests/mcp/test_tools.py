"""The MCP tools through a real fastmcp ``Client`` connected in-process, on SQLite
and PostgreSQL: the bitemporal round trip, read-log tags, resources, the
timeline picture, and bad input answered as ``isError`` with nothing written."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem import Memory
from chronomem.mcp import MAX_NAME, MAX_TEXT, TOOL_NAMES, build_server
from tests.conftest import ManualClock

from .driver import SyncClient


@pytest.fixture
def store(url: str | None, clock: ManualClock) -> Iterator[Memory]:
    m = Memory(url, clock=clock, user="ada")
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def client(store: Memory) -> Iterator[SyncClient]:
    c = SyncClient(build_server(store, read_log=True))
    try:
        yield c
    finally:
        c.close()


def _counts(m: Memory) -> tuple[int, int]:
    st = m.stats()
    return st.versions, st.episodes


def test_tool_names_are_the_documented_ones(client: SyncClient) -> None:
    assert sorted(client.tool_names()) == sorted(TOOL_NAMES)


def test_remember_search_as_of_correct_history_why(
    client: SyncClient, store: Memory, clock: ManualClock
) -> None:
    first = client.ok("remember", text="I live in Paris.", occurred_at="2025-12-20T09:00:00Z")
    assert first["extracted"] == 1 and len(first["episode_ids"]) == 1
    (paris,) = first["facts"]
    assert (paris["predicate"], paris["object"], paris["state"]) == ("lives_in", "Paris", "live")
    assert paris["valid_from"].startswith("2025-12-20T09:00:00")
    assert paris["source_episode_ids"] == first["episode_ids"]
    clock.advance(days=1)
    between = clock.mark()
    clock.advance(days=1)
    moved = client.ok("remember", text="I moved to Berlin.", occurred_at=clock.mark().isoformat())
    berlin_id = moved["facts"][0]["fact_id"]

    now = client.ok("search", query="where do I live")
    live = [h["fact"] for h in now["hits"] if h["kind"] == "fact"]
    assert [(f["object"], f["state"]) for f in live] == [("Berlin", "live")]
    assert {h["kind"] for h in now["hits"]} == {"fact", "episode"}
    then = client.ok("search", query="where do I live", as_of=between.isoformat())
    assert [h["fact"]["object"] for h in then["hits"] if h["kind"] == "fact"] == ["Paris"]
    assert then["as_of"] == between.isoformat()
    text = client.text(client.call("search", query="where do I live", as_of=between.isoformat()))
    assert "Paris — live" in text and "recorded" in text and "valid 2025-12-20" in text

    fixed = client.ok("correct", fact_id=berlin_id, object="Munich")
    got = sorted((f["object"], f["state"]) for f in fixed["facts"])
    assert got == [("Berlin", "retracted"), ("Munich", "live")] and fixed["retracted"]
    hist = client.ok("history", subject="user", predicate="lives_in", include_retracted=True)
    states = [(f["object"], f["state"]) for f in hist["facts"]]
    assert ("Paris", "ended") in states and ("Munich", "live") in states
    assert ("Berlin", "retracted") in states
    assert all(f["recorded_at"] and f["valid_from"] for f in hist["facts"])
    plain = client.ok("history", subject="user", predicate="lives_in")
    assert "Berlin" not in [f["object"] for f in plain["facts"]]

    why = client.ok("why", fact_id=paris["fact_id"])
    assert [e["text"] for e in why["episodes"]] == ["I live in Paris."]
    assert why["versions"][0]["object"] == "Paris"
    # a reader who asked before the correction is still answered as then
    known = client.ok("search", query="where do I live", known_at=(clock.mark()).isoformat())
    assert [h["fact"]["object"] for h in known["hits"] if h["kind"] == "fact"] == ["Munich"]


def test_remember_fact_end_forget_recall(client: SyncClient, clock: ManualClock) -> None:
    r = client.ok(
        "remember_fact", subject="ada", predicate="works_at", object="Acme",
        valid_from="2025-01-01", valid_to="2026-01-01",
    )  # fmt: skip
    (f,) = r["facts"]
    assert (f["valid_from"], f["valid_to"]) == (
        "2025-01-01T00:00:00+00:00",
        "2026-01-01T00:00:00+00:00",
    )
    client.ok("remember_fact", subject="ada", predicate="likes", object="tea")
    block = client.ok("recall", query="what does ada like")["block"]
    assert "tea" in block
    ended = client.ok("end", subject="ada", predicate="likes", at=clock.mark().isoformat())
    assert ended["ended"] and [x["state"] for x in ended["facts"]] == ["ended"]
    again = client.ok("remember_fact", subject="ada", predicate="owns", object="a boat")
    gone = client.ok("forget", fact_id=again["fact_ids"][0])
    assert [x["state"] for x in gone["facts"]] == ["retracted"]
    assert client.ok("search", query="boat", include_episodes=False)["hits"] == []


def test_reads_are_tagged_with_the_mcp_session_and_request(
    client: SyncClient, store: Memory
) -> None:
    client.ok("remember_fact", subject="ada", predicate="lives_in", object="Paris")
    served = client.ok("search", query="ada")
    client.ok("recall", query="ada")
    reads = store.reads()
    assert [r.op for r in reads][:2] == ["search", "recall"]
    session = reads[0].tag["mcp_session"]
    assert reads[0].tag["run"] == session and reads[1].tag["mcp_session"] == session
    assert reads[0].tag["mcp_request"] != reads[1].tag["mcp_request"]
    assert [r.id for r in store.reads(run=session)][:2] == [reads[0].id, reads[1].id]
    replayed = store.replay(reads[0].id)
    assert [h.fact.id for h in replayed if h.fact] == [
        h["fact"]["fact_id"] for h in served["hits"] if h["kind"] == "fact"
    ]


def test_resources_and_timeline_picture(client: SyncClient) -> None:
    client.ok("remember_fact", subject="ada", predicate="lives_in", object="Paris",
              valid_from="2025-01-01")  # fmt: skip
    client.ok("remember_fact", subject="ada", predicate="lives_in", object="Rome")
    facts = client.read("memory://facts")
    assert [f["object"] for f in facts["facts"]] == ["Rome"] and facts["truncated"] is False
    hist = client.read("memory://history/ada")
    assert [(f["object"], f["state"]) for f in hist["facts"]] == [
        ("Paris", "ended"),
        ("Rome", "live"),
    ]
    r = client.call("timeline", subject="ada", predicate="lives_in")
    assert not r.isError
    images = [c for c in r.content if c.type == "image"]
    assert len(images) == 1 and images[0].mimeType == "image/png"
    import base64

    assert base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert {v["value"] for v in r.structuredContent["versions"]} == {"Paris", "Rome"}


BAD = [
    ("search", {"query": "x", "as_of": "last tuesday"}, "as_of"),
    ("search", {"query": "x", "valid_at": "2026-13-40"}, "valid_at"),
    ("search", {"query": "x", "known_at": "0000-01-01"}, "known_at"),
    ("search", {"query": "x", "as_of": "2026-01-01", "valid_at": "2026-01-01"}, "as_of"),
    ("search", {"query": "x", "k": "many"}, "k"),
    ("search", {"query": "x", "k": 0}, "k"),
    ("search", {"query": "x", "k": 10_000}, "k"),
    ("search", {"query": 5}, "query"),
    ("search", {"query": "q" * (MAX_NAME + 1)}, "query"),
    ("remember", {"text": "x" * (MAX_TEXT + 1)}, "text"),
    ("remember", {"text": "   "}, "text"),
    ("remember", {"text": "I live in Oslo.", "occurred_at": "soon"}, "occurred_at"),
    ("remember", {"text": ["I live in Oslo."]}, "text"),
    ("remember_fact", {"subject": "ada", "predicate": "lives_in", "object": "Oslo",
                       "valid_from": "2026-02-01", "valid_to": "2026-01-01"}, "valid_to"),
    ("remember_fact", {"subject": "ada", "predicate": "lives_in", "object": "Oslo",
                       "valid_from": "yesterday"}, "valid_from"),
    ("remember_fact", {"subject": "", "predicate": "lives_in", "object": "Oslo"}, "subject"),
    ("remember_fact", {"subject": "ada", "predicate": "lives_in"}, "object"),
    ("correct", {"fact_id": "no-such-fact", "object": "Oslo"}, "fact_id"),
    ("correct", {"fact_id": "x" * 5000, "object": "Oslo"}, "fact_id"),
    ("forget", {"fact_id": "no-such-fact"}, "fact_id"),
    ("why", {"fact_id": "no-such-fact"}, "fact_id"),
    ("why", {"fact_id": 42}, "fact_id"),
    ("end", {"subject": "ada", "predicate": "lives_in", "at": "never"}, "at"),
    ("end", {"subject": "nobody", "predicate": "lives_in"}, "predicate"),
    ("history", {"subject": "ada", "include_retracted": "maybe"}, "include_retracted"),
    ("timeline", {"subject": "nobody"}, "subject"),
]  # fmt: skip


def test_bad_input_is_a_tool_error_naming_the_argument(client: SyncClient, store: Memory) -> None:
    """Every case in one session: each answered ``isError`` naming its argument,
    nothing written, and the same session goes on serving."""
    client.ok("remember_fact", subject="ada", predicate="lives_in", object="Paris")
    before = _counts(store)
    for tool, arguments, name in BAD:
        r = client.call(tool, **arguments)
        assert r.isError, (tool, arguments, r.content)
        assert name in client.text(r), (tool, arguments, client.text(r))
        assert _counts(store) == before, f"{tool} {arguments} wrote on error"
    assert client.ok("search", query="ada lives_in")["hits"], "the server keeps serving"


def test_unknown_tool_is_an_error_and_the_session_goes_on(client: SyncClient) -> None:
    r = client.call("erase", fact_id="x")
    assert r.isError and "erase" in client.text(r)
    assert client.ok("history", subject="ada")["facts"] == []


def test_a_server_scope_is_the_clients_scope(store: Memory) -> None:
    other = store.scoped(user="bob")
    with_ada, with_bob = SyncClient(build_server(store)), SyncClient(build_server(other))
    try:
        with_ada.ok("remember_fact", subject="ada", predicate="lives_in", object="Paris")
        assert with_bob.ok("history", subject="ada")["facts"] == []
        assert [f.object for f in store.history("ada")] == ["Paris"]
    finally:
        with_ada.close()
        with_bob.close()


def test_an_instant_without_offset_is_utc(client: SyncClient) -> None:
    r = client.ok("remember_fact", subject="ada", predicate="born_in", object="London",
                  valid_from="1815-12-10T08:00")  # fmt: skip
    assert r["facts"][0]["valid_from"] == "1815-12-10T08:00:00+00:00"
    shifted = client.ok("search", query="ada born_in", valid_at="1900-01-01T01:00:00+01:00")
    assert [h["fact"]["object"] for h in shifted["hits"] if h["kind"] == "fact"] == ["London"]
    assert shifted["valid_at"] == "1900-01-01T00:00:00+00:00"
