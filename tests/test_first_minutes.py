"""A user's first minutes (issue #29): the CLI finds data wherever a scope put it,
internal rows stay internal, and opening mistakes are chronomem errors that say
what to do."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from chronomem import Memory, MissingDriver, ReadOnlyStore, StoreUnavailable
from chronomem.cli import main
from chronomem.ops import AssertOp


def scoped_db(db: str) -> str:
    with Memory(db) as m:
        m.scoped(user="ada").remember("ada", "lives_in", "Paris")
        m.scoped(user="ada").remember("ada", "likes", "jazz")
        m.scoped(user="bob", session="s 1").add_episode("hello", role="user")
    return db


def test_scopes_lists_every_scope_with_counts(durable_url: str, capsys) -> None:
    db = scoped_db(durable_url)
    assert main(["--url", db, "--json", "scopes"]) == 0
    rows = json.loads(capsys.readouterr().out)
    got = {r["options"]: (r["facts"], r["live_facts"], r["episodes"]) for r in rows}
    assert got == {"--user ada": (2, 2, 0), "--user bob --session 's 1'": (0, 0, 1)}
    with Memory(db) as m:
        assert [c.scope.user for c in m.scopes()] == ["ada", "bob"]


@pytest.mark.parametrize("command", [["facts"], ["stats"], ["search", "where does ada live"]])
def test_an_empty_scope_says_where_the_data_is(durable_url: str, capsys, command) -> None:
    db = scoped_db(durable_url)
    assert main(["--url", db, *command]) == 0
    err = capsys.readouterr().err
    assert "this scope" in err and "chronomem scopes" in err
    assert "chronomem --user ada facts" in err  # how to select the fullest one
    assert main(["--url", db, "--user", "ada", *command]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    if command[0] != "stats":
        assert "Paris" in captured.out


def test_no_hint_when_the_whole_database_is_empty(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "m.db")
    Memory(db).close()
    assert main(["--url", db, "facts"]) == 0
    assert capsys.readouterr().err == ""


def internal_db(db: str) -> str:
    with Memory(db) as m:
        m.apply(
            [
                AssertOp("doc:1", "@index:$", "a1b2", None, None, False, exact=True,
                         index_text="ada lives in Paris"),
                AssertOp("doc:1", "city", "Paris", None, None, False, exact=True,
                         index_text="ada city Paris"),
            ]
        )  # fmt: skip
    return db


def test_internal_rows_never_reach_people_or_prompts(durable_url: str, capsys) -> None:
    db = internal_db(durable_url)
    with Memory(db) as m:
        assert "@index" not in m.recall("ada lives in Paris")
        assert any(h.fact and h.fact.predicate == "@index:$" for h in m.search("ada Paris"))
    for command in (["facts"], ["search", "ada lives in Paris"], ["recall", "ada Paris"]):
        assert main(["--url", db, *command]) == 0
        out = capsys.readouterr().out
        assert "@index" not in out and "a1b2" not in out
    assert main(["--url", db, "facts", "--all"]) == 0
    assert "@index" in capsys.readouterr().out


def test_facts_and_history_take_a_subject_as_facts_prints_it(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "x.db")
    with Memory(db) as m:
        m.apply([AssertOp("lg:users.ada..profile", "city", '"Paris"', None, None, False,
                          exact=True)])  # fmt: skip
    assert main(["--url", db, "--json", "facts"]) == 0
    printed = json.loads(capsys.readouterr().out)[0]["subject"]
    assert main(["--url", db, "--json", "facts", "--subject", printed]) == 0
    assert [r["object"] for r in json.loads(capsys.readouterr().out)] == ['"Paris"']
    assert main(["--url", db, "--json", "history", printed, "city"]) == 0
    assert [r["object"] for r in json.loads(capsys.readouterr().out)] == ['"Paris"']


@pytest.mark.parametrize("option", ["--known-at", "--valid-at", "--as-of"])
def test_a_bad_instant_names_its_option(tmp_path: Path, capsys, option: str) -> None:
    db = scoped_db(str(tmp_path / "m.db"))
    assert main(["--url", db, "facts", option, "yesterday"]) == 2
    err = capsys.readouterr().err
    assert option in err and "yesterday" in err and "ISO 8601" in err


@pytest.mark.parametrize("url", ["sqlite:///{p}?mode=ro", "sqlite:///file:{p}?mode=ro&uri=true"])
def test_read_only_urls_never_create_and_open_read_only(tmp_path: Path, url: str) -> None:
    path = tmp_path / "ro.db"
    with pytest.raises(StoreUnavailable, match="never creates"):
        Memory(url.format(p=path))
    assert not path.exists()
    with Memory(str(path)) as m:
        m.remember("ada", "likes", "tea")
    with Memory(url.format(p=path)) as ro:
        assert [f.object for f in ro.facts()] == ["tea"]
        with pytest.raises(ReadOnlyStore):
            ro.remember("ada", "likes", "coffee")
    with Memory(str(path)) as m:
        assert [f.object for f in m.facts()] == ["tea"]


@pytest.mark.parametrize("target", ["/dev/null", "dir"])
def test_unopenable_paths_are_chronomem_errors(tmp_path: Path, target: str) -> None:
    path = target if target.startswith("/") else str(tmp_path)
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    with pytest.raises(StoreUnavailable, match="cannot open the SQLite database"):
        Memory(path)


def test_a_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if psycopg were not installed
    with pytest.raises(MissingDriver, match=r"chronomem\[postgres\]"):
        Memory("postgresql+psycopg://postgres@127.0.0.1:5432/test")
