"""The README's CLI session finds what the LlamaIndex adapter wrote (issue #29)."""

from __future__ import annotations

from pathlib import Path

from llama_index.core.base.llms.types import ChatMessage

from chronomem import Memory
from llama_index.memory.chronomem import ChronomemMemory
from tests.cli_session import cli_finds


def test_readme_cli_session_finds_llamaindex_data(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "li.db")
    with Memory(db) as store:
        memory = ChronomemMemory.from_defaults(memory=store.scoped(user="ada"), session_id="mon")
        memory.put(ChatMessage(role="user", content="I live in Paris."))
    options = cli_finds(db, capsys, expect="Paris", query="where do I live", tmp=tmp_path)
    assert options[:2] == ["--user", "ada"]
