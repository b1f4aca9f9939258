"""The README's CLI session finds what the CrewAI adapter wrote (issue #29)."""

from __future__ import annotations

from pathlib import Path

from chronomem import Memory
from crewai_chronomem import ChronomemMemory
from tests.cli_session import cli_finds


def test_readme_cli_session_finds_crewai_data(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "crew.db")
    store = Memory(db)
    memory = ChronomemMemory(memory=store.scoped(user="dana"))
    memory.remember("I live in Paris.", source="dana")
    memory.close()
    store.close()
    options = cli_finds(db, capsys, expect="Paris", query="where does dana live", tmp=tmp_path)
    assert options[:2] == ["--user", "dana"]


def test_crewai_recall_leaves_internal_rows_out() -> None:
    from chronomem.ops import AssertOp

    store = Memory()
    store.apply([AssertOp("lg:users.dana..p", "@index:$", "d1g3st", None, None, False,
                          exact=True, index_text="dana lives in Paris")])  # fmt: skip
    memory = ChronomemMemory(memory=store)
    try:
        memory.remember("I live in Paris.", source="dana")
        texts = [m.record.content for m in memory.recall("dana lives in Paris")]
        assert texts and not any("@index" in t or "d1g3st" in t for t in texts)
    finally:
        memory.close()
