"""The ``chronomem`` CLI against a real SQLite file."""

from __future__ import annotations

import json

from chronomem import Memory
from chronomem.cli import main
from tests.conftest import utc


def test_cli_facts_history_why_stats(tmp_path, capsys) -> None:
    db = str(tmp_path / "m.db")
    m = Memory(db)
    m.remember("alice", "lives_in", "Paris", valid_from=utc(2026, 3, 1))
    moved = m.remember("alice", "lives_in", "Berlin", valid_from=utc(2026, 6, 1))
    m.close()

    assert main(["--url", db, "facts", "--subject", "alice", "--valid-at", "2026-04-01"]) == 0
    out = capsys.readouterr().out
    assert "Paris" in out and "Berlin" not in out

    assert main(["--url", db, "--json", "history", "alice", "lives_in"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["object"], r["state"]) for r in rows] == [("Paris", "ended"), ("Berlin", "live")]

    assert main(["--url", db, "why", moved.fact_ids[0]]) == 0
    out = capsys.readouterr().out
    assert "superseded:" in out and "Paris" in out.split("superseded:")[1]

    assert main(["--url", db, "--json", "stats"]) == 0
    assert json.loads(capsys.readouterr().out)["live_facts"] == 1


def test_cli_errors_are_clear_and_nonzero(tmp_path, capsys) -> None:
    db = str(tmp_path / "m.db")
    assert main(["--url", db, "why", "nope"]) == 2
    assert "no fact 'nope'" in capsys.readouterr().err
    assert main(["--url", db, "facts", "--as-of", "2026-01-01", "--valid-at", "2026-01-01"]) == 2
    assert "as_of" in capsys.readouterr().err
