"""The README's MCP section: its client configuration is the JSON desktop clients
take and starts this command, and its example session runs as pasted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chronomem.cli import _build

README = Path(__file__).resolve().parents[2] / "README.md"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("\n## MCP server\n", 1)[1].split("\n## ", 1)[0]


def test_client_configuration_starts_chronomem_mcp() -> None:
    (block,) = re.findall(r"```json\n(.*?)```", _section(), flags=re.S)
    server = json.loads(block)["mcpServers"]["chronomem"]
    assert server["command"] == "chronomem"
    args = server["args"]
    i = args.index("mcp")
    cli = _build()
    group = cli.make_context("chronomem", [*args[:i], "mcp"], resilient_parsing=True)
    assert group.params["url"] and group.params["user"] == "ada"
    sub = cli.get_command(group, "mcp").make_context("mcp", args[i + 1 :], parent=group)
    assert sub.params["transport"] == "stdio" and sub.params["read_log"] is True


def test_example_session_runs(capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", _section(), flags=re.S)
    exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    now, then = out.split("search now", 1)[1].split("search as_of=")
    assert "Berlin — live" in now and "Paris — live" not in now
    assert "Paris — live" in then and "Berlin" not in then
    assert "I live in Paris." in out.splitlines()
    assert "True as_of: 'last tuesday' is not an ISO 8601 instant" in out
