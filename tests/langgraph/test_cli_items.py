"""The CLI on a LangGraph store's database (issue #29): items by namespace and key,
subjects as ``--subject`` takes them, no internal row in any output."""

from __future__ import annotations

import json
from pathlib import Path

from langgraph.store.chronomem import ChronomemStore, item_value
from tests.cli_session import cli_finds, run


def written(tmp_path: Path) -> str:
    db = str(tmp_path / "lg.db")
    with ChronomemStore(db) as store:
        store.put(("users", "ada"), "profile", {"city": "Paris", "food": "ramen"})
        store.put(("users", "bob"), "profile", {"city": "Rome"})
        store.put(("users", "ada"), "profile", {"city": "Berlin", "food": "ramen"})
    return db


def test_items_lists_and_reads_by_namespace_and_key(tmp_path: Path, capsys) -> None:
    db = written(tmp_path)
    assert run(capsys, "--url", db, "items").split() == ["users.ada", "users.bob"]
    listed = json.loads(run(capsys, "--url", db, "--json", "items", "users.ada"))
    assert [(r["key"], json.loads(r["value"])) for r in listed] == [
        ("profile", {"city": "Berlin", "food": "ramen"})
    ]
    one = json.loads(run(capsys, "--url", db, "--json", "items", "users.ada", "profile"))
    assert one["value"] == {"city": "Berlin", "food": "ramen"}
    history = json.loads(
        run(capsys, "--url", db, "--json", "items", "users.ada", "profile", "--history")
    )
    assert [(h["field"], h["value"], h["state"]) for h in history if h["field"] == "city"] == [
        ("city", '"Paris"', "ended"),
        ("city", '"Berlin"', "live"),
    ]


def test_subjects_printed_are_subjects_accepted(tmp_path: Path, capsys) -> None:
    db = written(tmp_path)
    rows = json.loads(run(capsys, "--url", db, "--json", "facts"))
    assert rows and not any(r["predicate"].startswith("@") for r in rows)
    # an item is one fact: its document, the value first
    subject = next(r["subject"] for r in rows if item_value(r["object"]) == {"city": "Rome"})
    again = json.loads(run(capsys, "--url", db, "--json", "facts", "--subject", subject))
    assert [item_value(r["object"]) for r in again] == [{"city": "Rome"}]
    assert again[0]["object"].startswith('{"v":{"city":"Rome"}')


def test_readme_cli_session_finds_langgraph_data(tmp_path: Path, capsys) -> None:
    cli_finds(written(tmp_path), capsys, expect="Berlin", query="Berlin", tmp=tmp_path)
