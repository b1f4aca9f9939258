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
    Memory(db).close()
    assert main(["--url", db, "why", "nope"]) == 2
    assert "no fact 'nope'" in capsys.readouterr().err
    assert main(["--url", db, "facts", "--as-of", "2026-01-01", "--valid-at", "2026-01-01"]) == 2
    assert "as_of" in capsys.readouterr().err


def test_cli_doctor_checks_and_repairs(tmp_path, capsys) -> None:
    import sqlite3

    db = str(tmp_path / "m.db")
    with Memory(db) as m:
        m.remember("alice", "likes", "tea")
    assert main(["--url", db, "doctor"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("ok")
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO cm_versions_fts(rowid, body) VALUES (987654, 'ghost')")
    conn.commit()
    conn.close()
    assert main(["--url", db, "--json", "doctor"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["fts"]["cm_versions_fts"].startswith("damaged")
    assert main(["--url", db, "doctor", "--repair"]) == 0
    out = capsys.readouterr().out
    assert "rebuilt cm_versions_fts" in out
    assert main(["--url", db, "doctor"]) == 0


HOSTILE = "x\x1b[2J\x1b]0;owned\x07\x1b[31mred\rforged\nfake-row | p | o\u202eevil\x9b1m\u2028z\\n"


def _hostile_store(tmp_path) -> tuple[str, str]:
    db = str(tmp_path / "h.db")
    with Memory(db) as m:
        ep = m.add_episode(HOSTILE, role="us\x1b[0mer")
        r = m.remember(HOSTILE, "likes", HOSTILE, source=ep)
    return db, r.fact_ids[0]


def _assert_inert(out: str) -> None:
    for ch in ("\x1b", "\x07", "\r", "\x9b", "\u202e", "\u2028"):
        assert ch not in out, repr(ch)


def test_cli_escapes_stored_terminal_sequences_and_newlines(tmp_path, capsys) -> None:
    """Issue #14 J: stored ANSI/OSC sequences, CR/LF, C1 controls, bidi overrides
    and line separators are printed as escapes: no screen clearing, no forged rows."""
    db, fid = _hostile_store(tmp_path)
    for args in (["facts"], ["history", HOSTILE], ["why", fid], ["stats"]):
        assert main(["--url", db, *args]) == 0, args
        out = capsys.readouterr().out
        _assert_inert(out)
        if args[0] != "stats":
            assert "\\x1b[2J" in out and "fake-row" in out
            # one output line per row: the stored newline did not start a new one
            assert not any(line.startswith("fake-row") for line in out.splitlines())
            assert "z\\\\n" in out  # a stored backslash is escaped too: unambiguous
    assert main(["--url", db, "--json", "facts"]) == 0
    out = capsys.readouterr().out
    _assert_inert(out)
    assert json.loads(out)[0]["object"] == HOSTILE  # the JSON still round-trips exactly
    assert main(["--url", db, "why", "no\x1b[2Jpe"]) == 2  # errors quote input safely
    assert "\x1b" not in capsys.readouterr().err


def test_cli_refuses_a_database_file_that_does_not_exist(tmp_path, capsys) -> None:
    """Issue #14 J: a mistyped --url used to create an empty database and show it."""
    for url in (str(tmp_path / "typo.db"), f"sqlite:///{tmp_path / 'typo2.db'}"):
        for args in (["facts"], ["stats"], ["doctor"], ["history", "a"], ["why", "x"]):
            assert main(["--url", url, *args]) == 2, (url, args)
            err = capsys.readouterr().err
            assert "no chronomem database" in err and "--url" in err
        assert not (tmp_path / "typo.db").exists() and not (tmp_path / "typo2.db").exists()
    assert main(["--url", str(tmp_path / "no" / "dir" / "x.db"), "stats"]) == 2
    assert main(["--url", ":memory:", "stats"]) == 0  # an explicit in-memory store is fine
