"""Opening a store that cannot be opened raises a chronomem error that says what
to do, never a raw driver error (issue #14 I); a file this process cannot write
opens read-only and serves reads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

import chronomem.backends.sqlite as sqlite_backend
from chronomem import (
    ChronomemError,
    CorruptStore,
    InvalidInput,
    Memory,
    ReadOnlyStore,
    StoreUnavailable,
)
from tests.conftest import drop_pg_schema, make_pg_schema, require_pg


@pytest.fixture
def good(tmp_path: Path) -> str:
    path = str(tmp_path / "good.db")
    with Memory(path) as m:
        ep = m.add_episode("ann lives in oslo")
        m.remember("ann", "lives_in", "oslo", source=ep)
    return path


def _raises(url: str, kind: type[ChronomemError], *says: str) -> str:
    with pytest.raises(kind) as info:
        Memory(url).close()
    message = str(info.value)
    for word in says:
        assert word in message, (word, message)
    return message


def test_missing_directory(tmp_path: Path) -> None:
    _raises(str(tmp_path / "no" / "dir" / "x.db"), StoreUnavailable, "directory", "path")


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database " * 20)
    _raises(str(path), CorruptStore, "not a SQLite database", "backup")
    assert path.read_text().startswith("these are my notes")  # and it was left alone


def test_truncated_and_byte_flipped_files(good: str, tmp_path: Path) -> None:
    data = Path(good).read_bytes()
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(data[: len(data) // 3])
    flipped = bytearray(data)
    for i in range(100, len(flipped), 7):
        flipped[i] ^= 0xFF
    damaged = tmp_path / "flipped.db"
    damaged.write_bytes(bytes(flipped))
    for path in (truncated, damaged):
        _raises(str(path), CorruptStore, "damaged", "doctor --repair", "backup")


def test_empty_url() -> None:
    for url in ("", "   "):
        _raises(url, InvalidInput, "empty", ":memory:")


@pytest.mark.parametrize(
    "value, state", [(None, "missing"), ("abc", "unreadable"), ("0", "unreadable")]
)
def test_missing_or_corrupt_schema_version_row(good: str, value: str | None, state: str) -> None:
    eng = create_engine(f"sqlite:///{good}")
    with eng.begin() as conn:
        if value is None:
            conn.execute(text("DELETE FROM cm_meta WHERE key = 'schema_version'"))
        else:
            conn.execute(
                text("UPDATE cm_meta SET value = :v WHERE key = 'schema_version'"), {"v": value}
            )
    eng.dispose()
    _raises(good, CorruptStore, state, "schema_version", "backup")


def test_missing_schema_version_row_on_postgres() -> None:
    require_pg()
    url, schema = make_pg_schema()
    try:
        Memory(url).close()
        eng = create_engine(url)
        with eng.begin() as conn:
            conn.execute(text(f'SET search_path TO "{schema}"'))
            conn.execute(text("DELETE FROM cm_meta WHERE key = 'schema_version'"))
        eng.dispose()
        _raises(url, CorruptStore, "missing", "schema_version")
    finally:
        drop_pg_schema(schema)


@pytest.mark.parametrize(
    "url, says",
    [
        ("postgresql+psycopg://postgres@127.0.0.1:1/test", "127.0.0.1:1"),
        ("postgresql+psycopg://postgres@chronomem-no-such-host.invalid:5432/test", "no-such-host"),
    ],
)
def test_unreachable_postgres(url: str, says: str) -> None:
    _raises(url, StoreUnavailable, says, "host, port", "server is running")


def test_read_only_file_opens_read_only_and_serves_reads(
    good: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file this process cannot write (simulated: tests may run as root, which
    can write any file) opens read-only: opening writes nothing, reads and
    search work, and a write raises ReadOnlyStore instead of a driver error."""
    copy = str(tmp_path / "ro.db")
    shutil.copy(good, copy)
    before = Path(copy).read_bytes()
    monkeypatch.setattr(sqlite_backend, "writable", lambda path: False)
    with Memory(copy) as m:
        assert m.backend.read_only
        assert [f.object for f in m.facts()] == ["oslo"]
        assert any("oslo" in h.text for h in m.search("oslo", k=3))
        with pytest.raises(ReadOnlyStore, match="read-only"):
            m.remember("bob", "likes", "tea")
        with pytest.raises(ReadOnlyStore):
            m.erase(m.facts()[0].id)
        assert [f.object for f in m.facts()] == ["oslo"]
    assert Path(copy).read_bytes() == before
    # an explicit read-only URL works the same way, whatever the permissions
    monkeypatch.undo()
    with Memory(f"sqlite:///file:{copy}?mode=ro&uri=true") as m:
        assert m.backend.read_only and [f.object for f in m.facts()] == ["oslo"]
        with pytest.raises(ReadOnlyStore):
            m.remember("bob", "likes", "tea")
