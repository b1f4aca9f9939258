"""``ChronomemMemory()`` without a store persists where CrewAI keeps its memory (issue #29)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from chronomem import Memory
from crewai_chronomem import ChronomemMemory
from crewai_chronomem.location import FILE_NAME, storage_dir


def facts(memory: ChronomemMemory, query: str) -> list[str]:
    return [
        m.record.content for m in memory.recall(query) if m.record.metadata.get("kind") == "fact"
    ]


def test_no_store_persists_in_crewai_storage_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CREWAI_STORAGE_DIR", str(tmp_path / "crew-store"))
    assert storage_dir() == tmp_path / "crew-store"
    with caplog.at_level(logging.INFO, logger="crewai_chronomem"):
        first = ChronomemMemory()
    where = tmp_path / "crew-store" / FILE_NAME
    assert first.location.endswith(str(where))
    assert str(where) in caplog.text  # it says where
    first.remember("I live in Paris.", source="dana")
    first.close()
    assert where.exists()

    again = ChronomemMemory()  # a new process would see the same: the memory survived
    try:
        assert any("Paris" in text for text in facts(again, "where does dana live"))
    finally:
        again.close()


def test_without_env_it_follows_crewai_db_storage_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from crewai_core.paths import db_storage_path

    monkeypatch.delenv("CREWAI_STORAGE_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    assert storage_dir() == Path(db_storage_path())
    assert str(storage_dir()).startswith(str(tmp_path / "data"))


def test_in_memory_is_explicit() -> None:
    memory = ChronomemMemory(memory=Memory())
    try:
        assert memory.location == Memory().url
    finally:
        memory.close()


def test_storage_folder_string_keeps_the_memory_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Memory(storage="some/folder")`` keeps CrewAI's memory in that folder; the same
    argument keeps ours there too — two folders, two memories, the default untouched."""
    monkeypatch.setenv("CREWAI_STORAGE_DIR", str(tmp_path / "default"))
    one = ChronomemMemory(storage=str(tmp_path / "one"))
    two = ChronomemMemory(storage=str(tmp_path / "two"))
    try:
        one.remember("I live in Paris.", source="dana")
        assert one.location.endswith(str(tmp_path / "one" / FILE_NAME))
        assert (tmp_path / "one" / FILE_NAME).exists()
        assert facts(two, "where does dana live") == []
    finally:
        one.close()
        two.close()
    assert not (tmp_path / "default" / FILE_NAME).exists()
    again = ChronomemMemory(storage=str(tmp_path / "one"))
    try:
        assert any("Paris" in text for text in facts(again, "where does dana live"))
    finally:
        again.close()


def test_storage_chronomem_url_string(tmp_path: Path) -> None:
    where = tmp_path / "named.db"
    memory = ChronomemMemory(storage=f"chronomem:{where}")
    try:
        assert memory.location.endswith(str(where))
    finally:
        memory.close()
