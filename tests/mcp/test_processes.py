"""``chronomem mcp`` as a real process, driven by fastmcp's ``Client``: over stdio
(as a desktop client starts it) and over streamable HTTP on 127.0.0.1, with and
without the bearer token, on a SQLite file and on PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timezone

import httpx
import pytest
from fastmcp.client.transports import StdioTransport

from chronomem import Memory
from chronomem.cli import main

from .driver import SyncClient
from .serving import command, http_server

TOKEN = "s3cret-token-for-tests"


def _round_trip(c: SyncClient) -> None:
    """remember -> search now and as_of an earlier instant -> correct -> history -> why."""
    paris = c.ok("remember", text="I live in Paris.", occurred_at="2025-03-01T09:00:00Z")
    (fact,) = paris["facts"]
    between = datetime.now(timezone.utc)
    moved = c.ok("remember_fact", subject="user", predicate="lives_in", object="Berlin")
    berlin = moved["fact_ids"][0]
    now = c.ok("search", query="where does the user live", include_episodes=False)
    assert [h["fact"]["object"] for h in now["hits"]] == ["Berlin"]
    then = c.ok("search", query="where does the user live", as_of=between.isoformat())
    assert [h["fact"]["object"] for h in then["hits"] if h["kind"] == "fact"] == ["Paris"]
    c.ok("correct", fact_id=berlin, object="Bern")
    hist = c.ok("history", subject="user", predicate="lives_in")
    assert [(f["object"], f["state"]) for f in hist["facts"]] == [
        ("Paris", "ended"),
        ("Bern", "live"),
    ]
    why = c.ok("why", fact_id=fact["fact_id"])
    assert [e["text"] for e in why["episodes"]] == ["I live in Paris."]
    bad = c.call("search", query="x", as_of="the day before yesterday")
    assert bad.isError and "as_of" in c.text(bad)
    assert c.ok("search", query="Bern", include_episodes=False)["hits"], "still serving"


def _round_trip_over(target: object, **client_kw: object) -> None:
    c = SyncClient(target, **client_kw)
    try:
        _round_trip(c)
    finally:
        c.close()


def test_stdio_subprocess(durable_url: str) -> None:
    argv = command(durable_url, "--read-log", scope=("--user", "ada"))
    _round_trip_over(StdioTransport(command=argv[0], args=argv[1:], keep_alive=False))
    with Memory(durable_url, user="ada") as m:
        assert [f.object for f in m.history("user", "lives_in")] == ["Paris", "Bern"]
        tags = [r.tag for r in m.reads()]
        assert tags and all(t["mcp_session"] and t["mcp_request"] for t in tags)
    with Memory(durable_url, user="bob") as m:
        assert m.history("user") == [], "the scope flags are the clients' scope"


def test_http_with_token(durable_url: str) -> None:
    with http_server(durable_url, "--token", TOKEN, scope=("--user", "ada")) as endpoint:
        refused = httpx.post(endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        wrong = httpx.post(endpoint, json={}, headers={"Authorization": "Bearer not-the-token"})
        assert wrong.status_code == 401
        with pytest.raises(Exception, match=r"401|nauthori"):
            SyncClient(endpoint)
        _round_trip_over(endpoint, auth=TOKEN)
    with Memory(durable_url, user="ada") as m:
        assert [f.object for f in m.history("user", "lives_in")] == ["Paris", "Bern"]


def test_http_without_token_serves_anyone_on_localhost(tmp_path: object) -> None:
    url = f"{tmp_path}/open.db"
    with http_server(url) as endpoint:
        assert endpoint.startswith("http://127.0.0.1:")
        _round_trip_over(endpoint)


def test_token_is_refused_on_stdio(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--url", f"{tmp_path}/x.db", "mcp", "--token", TOKEN])
    assert code != 0 and "--transport http" in capsys.readouterr().err
