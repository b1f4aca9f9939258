"""The README's CLI session, read side, against a database an adapter wrote.

``chronomem scopes`` says where the adapter put its data; with those options
``facts``, ``search``, ``stats`` and ``export`` find it, and no internal row
(``@…``) is printed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from chronomem.cli import main


def run(capsys: Any, *args: str) -> str:
    assert main(list(args)) == 0, capsys.readouterr().err
    return str(capsys.readouterr().out)


def cli_finds(db: str, capsys: Any, *, expect: str, query: str, tmp: Path) -> list[str]:
    """Follow the CLI from ``scopes`` to the data; return the options it said to use."""
    rows = json.loads(run(capsys, "--url", db, "--json", "scopes"))
    assert rows, "scopes lists where the adapter wrote"
    fullest = max(rows, key=lambda r: (r["facts"], r["episodes"]))
    options = shlex.split(fullest["options"])
    facts = run(capsys, "--url", db, *options, "facts")
    assert expect in facts
    stats = json.loads(run(capsys, "--url", db, *options, "--json", "stats"))
    assert stats["facts"] + stats["episodes"] > 0
    hits = run(capsys, "--url", db, *options, "search", query, "--episodes")
    assert "(no hits)" not in hits
    out = tmp / "dump.jsonl"
    run(capsys, "--url", db, *options, "export", "--out", str(out))
    assert out.read_text().strip()
    for text in (facts, hits, run(capsys, "--url", db, *options, "recall", query)):
        assert "@index" not in text and "@item" not in text
    return options
