"""The README's CLI session finds what the LangChain adapter wrote (issue #29)."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from chronomem import Memory
from langchain_chronomem import ChronomemChatMessageHistory
from tests.cli_session import cli_finds


def test_readme_cli_session_finds_langchain_data(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "lc.db")
    with Memory(db) as store:
        history = ChronomemChatMessageHistory(
            store.scoped(user="ada"), session_id="t1", extract=True
        )
        history.add_messages([HumanMessage("I live in Paris."), AIMessage("Noted.")])
    options = cli_finds(db, capsys, expect="Paris", query="where do I live", tmp=tmp_path)
    assert options[:2] == ["--user", "ada"]
