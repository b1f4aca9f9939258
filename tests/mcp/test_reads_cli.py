"""What did the MCP client know: ``chronomem reads --run <MCP session>`` lists
the reads an MCP session was served and ``chronomem replay`` returns one again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronomem import Memory
from chronomem.cli import main
from chronomem.mcp import build_server

from .driver import SyncClient


def test_reads_and_replay_answer_for_an_mcp_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(tmp_path / "m.db")
    with Memory(url, user="ada") as m:
        c = SyncClient(build_server(m, read_log=True))
        try:
            c.ok("remember_fact", subject="ada", predicate="lives_in", object="Paris")
            served = c.ok("search", query="where does ada live", include_episodes=False)
            c.ok("remember_fact", subject="ada", predicate="lives_in", object="Rome")
            c.ok("recall", query="where does ada live")
        finally:
            c.close()
        session = m.reads()[0].tag["mcp_session"]
    assert main(["--url", url, "--user", "ada", "--json", "reads", "--run", session]) == 0
    reads = json.loads(capsys.readouterr().out)
    assert [r["op"] for r in reads] == ["search", "recall"]
    assert all(r["tag"]["mcp_session"] == session and r["tag"]["mcp_request"] for r in reads)
    assert main(["--url", url, "--user", "ada", "reads", "--tag", "mcp_session=nobody"]) == 0
    assert "(no reads)" in capsys.readouterr().out
    assert main(["--url", url, "--user", "ada", "replay", reads[0]["id"]]) == 0
    replayed = capsys.readouterr().out
    assert "Paris" in replayed and "Rome" not in replayed, "the read as served then"
    assert [h["fact"]["object"] for h in served["hits"]] == ["Paris"]
    assert main(["--url", url, "--user", "ada", "replay", reads[1]["id"]]) == 0
    assert "Rome" in capsys.readouterr().out
