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


# -- issue #17: a CLI people can work with ----------------------------------------------
import io  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _run(capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_cli_write_commands_remember_end_retract_correct(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    db = str(tmp_path / "w.db")
    code, out, _ = _run(capsys, "--url", db, "--json", "remember", "alice", "lives_in", "Paris",
                        "--valid-from", "2025-06-01", "--metadata", '{"via": "cli"}')  # fmt: skip
    assert code == 0
    paris = json.loads(out)["fact_ids"][0]
    code, out, _ = _run(capsys, "--url", db, "remember", "alice", "works_at", "Acme")
    assert code == 0 and out.startswith("remembered: fact ")
    assert _run(capsys, "--url", db, "remember", "alice", "likes", "tea", "--metadata", "{")[0] == 2
    code, out, _ = _run(capsys, "--url", db, "end", "alice", "works_at", "--at", "2030-01-01")
    assert code == 0 and "ended" in out
    code, out, _ = _run(capsys, "--url", db, "correct", paris, "Berlin")
    assert code == 0 and "corrected" in out and "retracted 1 version" in out
    with Memory(db) as m:
        (now,) = m.facts(subject="alice", predicate="lives_in")
        assert now.object == "Berlin" and now.valid_from == utc(2025, 6, 1)
        assert m.get(paris)[0].state.value == "retracted"
        (job,) = m.facts(subject="alice", predicate="works_at")
        assert job.valid_to == utc(2030, 1, 1)
        assert m.why(paris).versions[0].metadata == {"via": "cli"}
    code, out, _ = _run(capsys, "--url", db, "history", "alice", "lives_in")
    assert "Berlin" in out and "Paris" not in out
    code, out, _ = _run(capsys, "--url", db, "history", "alice", "lives_in", "--include-retracted")
    assert "Berlin" in out and "Paris" in out and "retracted" in out
    code, out, _ = _run(capsys, "--url", db, "retract", now.id)
    assert code == 0 and "retracted" in out
    with Memory(db) as m:
        assert m.facts(subject="alice", predicate="lives_in") == []


def test_cli_search_explain_times_recall_episodes(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    db = str(tmp_path / "s.db")
    with Memory(db) as m:
        ep = m.add_episode("Alice says she moved to Berlin", role="user")
        m.import_fact("alice", "lives_in", "Paris", valid_from=utc(2025, 6, 1),
                      recorded_at=utc(2026, 1, 5))  # fmt: skip
        m.import_fact("alice", "lives_in", "Berlin", valid_from=utc(2026, 1, 15),
                      recorded_at=utc(2026, 3, 10), source=ep)  # fmt: skip
    code, out, _ = _run(capsys, "--url", db, "search", "where does alice live", "--explain")
    assert code == 0
    first = out.splitlines()[0]
    assert "Berlin" in first and "legs:" in first and "fact_lexical#1" in first
    code, out, _ = _run(capsys, "--url", db, "--json", "search", "alice", "--explain",
                        "--known-at", "2026-02-01")  # fmt: skip
    hits = json.loads(out)["hits"]
    assert [h["fact"]["object"] for h in hits] == ["Paris"]  # what we believed in February
    assert "fact_lexical" in hits[0]["explain"]["legs"]
    code, out, _ = _run(capsys, "--url", db, "--json", "search", "alice", "--as-of", "2026-02-01")
    assert [h["fact"]["object"] for h in json.loads(out)["hits"]] == ["Paris"]
    code, out, _ = _run(capsys, "--url", db, "recall", "where does alice live")
    assert code == 0 and "Berlin" in out and "Paris" not in out
    code, out, _ = _run(capsys, "--url", db, "recall", "alice", "--history")
    assert "Paris" in out
    code, out, _ = _run(capsys, "--url", db, "episodes", "--role", "user")
    assert code == 0 and "moved to Berlin" in out
    code, out, _ = _run(capsys, "--url", db, "--json", "episodes", "--role", "assistant")
    assert json.loads(out) == []


def test_cli_erase_and_purge_ask_first(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    db = str(tmp_path / "e.db")
    with Memory(db) as m:
        fid = m.remember("alice", "likes", "tea").fact_ids[0]
        m.remember("bob", "likes", "coffee")
        m.remember("carol", "likes", "cake")
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    code, _, err = _run(capsys, "--url", db, "erase", fid)
    assert code == 1 and "Erase fact" in err and "nothing was changed" in err
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert _run(capsys, "--url", db, "erase", fid)[0] == 0
    assert _run(capsys, "--url", db, "erase", "--subject", "bob", "--yes")[0] == 0
    assert _run(capsys, "--url", db, "erase")[0] == 2  # neither an id nor --subject
    with Memory(db) as m:
        assert [f.subject for f in m.facts()] == ["carol"]
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # a script without --yes: no answer
    code, _, err = _run(capsys, "--url", db, "purge")
    assert code == 1 and "Purge" in err
    code, out, _ = _run(capsys, "--url", db, "--json", "purge", "--yes")
    assert code == 0 and json.loads(out)["versions"] == 1
    with Memory(db) as m:
        assert m.stats().versions == 0


def test_cli_export_import_round_trip_and_mem0(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    src, dst = str(tmp_path / "src.db"), str(tmp_path / "dst.db")
    with Memory(src) as m:
        ep = m.add_episode("hello")
        m.remember("alice", "lives_in", "Paris", source=ep)
        m.remember("alice", "lives_in", "Berlin")
    dump = tmp_path / "d.jsonl"
    code, out, _ = _run(capsys, "--url", src, "export", "--out", str(dump), "--no-progress")
    assert (code == 0 and "2 versions" in out) or "version" in out
    code, out, _ = _run(capsys, "--url", src, "export")  # to standard output
    assert out.splitlines()[1:] == dump.read_text().splitlines()[1:]
    code, out, _ = _run(capsys, "--url", dst, "import", str(dump))
    assert code == 0 and "(dump)" in out
    with Memory(src) as a, Memory(dst) as b:
        assert a.history("alice") == b.history("alice")
        assert a.episodes() == b.episodes()
    code, _, err = _run(capsys, "--url", dst, "import", str(dump))  # not into a non-empty store
    assert code == 2 and "already holds memory" in err
    code, _, err = _run(capsys, "--url", str(tmp_path / "new.db"), "import", str(tmp_path / "typo"))
    assert code == 1 and "no file" in err and not (tmp_path / "new.db").exists()

    facts = tmp_path / "f.jsonl"
    facts.write_text('{"subject": "bob", "predicate": "likes", "object": "tea"}\n')
    code, out, _ = _run(capsys, "--url", str(tmp_path / "f.db"), "import", str(facts))
    assert code == 0 and "(facts)" in out and "1 remembered" in out

    hist = tmp_path / "history.db"
    conn = sqlite3.connect(hist)
    conn.execute("CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, "
                 "new_memory TEXT, event TEXT, created_at DATETIME, updated_at DATETIME, "
                 "is_deleted INTEGER, actor_id TEXT, role TEXT)")  # fmt: skip
    conn.execute("INSERT INTO history VALUES ('h1', 'm1', NULL, 'Likes tea', 'ADD', "
                 "'2025-01-01T00:00:00+00:00', NULL, 0, NULL, 'user')")  # fmt: skip
    conn.commit()
    conn.close()
    code, out, _ = _run(capsys, "--url", str(tmp_path / "m.db"), "import", str(hist))
    assert code == 0 and "(mem0)" in out and "1 add" in out


def test_cli_timeline_text_json_and_pictures(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib")
    db = str(tmp_path / "t.db")
    with Memory(db) as m:
        m.import_fact("alice", "lives_in", "Paris", valid_from=utc(2025, 6, 1),
                      recorded_at=utc(2026, 1, 5))  # fmt: skip
        m.import_fact("alice", "lives_in", "Berlin", valid_from=utc(2026, 1, 15),
                      recorded_at=utc(2026, 3, 10))  # fmt: skip
    code, out, _ = _run(capsys, "--url", db, "timeline", "alice", "lives_in")
    assert code == 0 and out.count("Paris") == 2 and "Berlin" in out
    code, out, _ = _run(capsys, "--url", db, "--json", "timeline", "alice")
    versions = json.loads(out)["versions"]
    assert [(v["value"], v["superseded_at"] is None) for v in versions] == [
        ("Paris", False), ("Paris", True), ("Berlin", True)]  # fmt: skip
    for ext, magic in (("png", b"\x89PNG"), ("svg", b"<?xml")):
        pic = tmp_path / f"t.{ext}"
        code, out, _ = _run(capsys, "--url", db, "timeline", "alice", "--out", str(pic))
        assert code == 0 and f"wrote {pic}" in out and pic.read_bytes().startswith(magic)
    code, _, err = _run(capsys, "--url", db, "timeline", "nobody", "--out", str(tmp_path / "n.png"))
    assert code == 1 and "no versions" in err


def test_new_commands_refuse_a_missing_database(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    url = str(tmp_path / "typo.db")
    for args in (["search", "x"], ["recall", "x"], ["episodes"], ["timeline", "a"], ["export"],
                 ["end", "a", "b"], ["retract", "x"], ["correct", "x", "y"],
                 ["erase", "x", "--yes"], ["purge", "--yes"]):  # fmt: skip
        code, _, err = _run(capsys, "--url", url, *args)
        assert code == 2 and "no chronomem database" in err, args
    assert not (tmp_path / "typo.db").exists()
    assert _run(capsys, "--url", url, "remember", "a", "b", "c")[0] == 0  # remember creates it
    assert (tmp_path / "typo.db").exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_cli_rich_tables_on_a_terminal_escape_stored_text(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On a terminal the output is a rich table; rich's own styling is the only
    escape sequence in it: stored sequences are printed as escapes, stored rich
    markup as text."""
    db, _ = _hostile_store(tmp_path)
    with Memory(db) as m:
        m.remember("zoe", "likes", "[bold red]markup[/]")
    monkeypatch.setenv("COLUMNS", "400")
    for args in (["facts"], ["history", HOSTILE], ["search", "markup"], ["episodes"]):
        term = _Terminal()
        monkeypatch.setattr(sys, "stdout", term)
        assert main(["--url", db, *args]) == 0, args
        monkeypatch.setattr(sys, "stdout", sys.__stdout__)
        raw = term.getvalue()
        assert "┃" in raw and "━" in raw, args  # a rich table, not plain lines
        out = re.sub(r"\x1b\[[0-9;]*m", "", raw)  # rich's own styling
        _assert_inert(out)
        if args[0] in ("facts", "history", "episodes"):
            assert "\\x1b[2J" in out and "\\x1b]0;owned\\x07" in out
        if args[0] in ("facts", "search"):
            assert "[bold red]markup[/]" in out


def test_readme_cli_session_runs(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """The README's CLI session, command by command (chronomem lines through main)."""
    pytest.importorskip("matplotlib")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## CLI") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block
    script = block.group(1)
    heredoc = re.search(r"cat > (\S+) <<'EOF'\n(.*?)\nEOF\n", script, re.S)
    assert heredoc
    monkeypatch.chdir(tmp_path)
    (tmp_path / heredoc.group(1)).write_text(heredoc.group(2) + "\n", encoding="utf-8")
    rest = script[heredoc.end() :]
    env: dict[str, str] = {}
    ran = []
    for line in rest.splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export ") :].partition("=")
            monkeypatch.setenv(key, value)
            continue
        m = re.match(r"(\w+)=\$\((chronomem .*?) \|", line)
        if m:  # ID=$(chronomem --json facts … | python3 -c '…[0]["id"]')
            code, out, _ = _run(capsys, *shlex.split(m.group(2))[1:])
            assert code == 0
            env[m.group(1)] = json.loads(out)[0]["id"]
            continue
        assert line.startswith("chronomem "), line
        args = [env.get(a[1:], a) if a.startswith("$") else a for a in shlex.split(line)[1:]]
        code, out, err = _run(capsys, *args)
        assert code == 0, (line, err)
        ran.append((args[0], out))
    outputs = dict(ran)
    assert [a for a, _ in ran] == ["import", "search", "search", "timeline", "correct",
                                   "history", "export"]  # fmt: skip
    assert "Berlin" in ran[1][1].splitlines()[0]  # search: where alice lives now
    assert "Paris" in ran[2][1].splitlines()[0] and "Berlin" not in ran[2][1]  # in February
    assert (tmp_path / "timeline.png").read_bytes().startswith(b"\x89PNG")
    assert "Globex" in outputs["history"] and "Acme" not in outputs["history"]
    dump = (tmp_path / "demo.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(dump[0])["type"] == "chronomem" and len(dump) > 5
