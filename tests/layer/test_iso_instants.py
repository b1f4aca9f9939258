"""One ISO-8601 reader (``chronomem.timeutil``) behind every adapter's time arguments
(issue #33): ``as_of``/``valid_at``/``known_at`` take an ISO string wherever they
take a datetime, in all four framework packages."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from chronomem import InvalidInput, Memory, NaiveDatetime
from chronomem.timeutil import instant, parse_iso

from ..conftest import ManualClock, utc

ISO = "2026-01-01T00:30:00Z"
AT = utc(2026, 1, 1, 0, 30)


def test_parse_iso_rules() -> None:
    assert parse_iso(ISO) == AT
    assert parse_iso("2026-01-01T01:30:00+01:00") == AT
    assert parse_iso(" 2026-01-01t00:30:00z ".replace("t", "T")) == AT
    assert parse_iso("2026-01-01") == utc(2026, 1, 1)  # a date: its UTC midnight
    assert parse_iso("2026-01-01T00:30:00", naive="utc") == AT
    with pytest.raises(NaiveDatetime):
        parse_iso("2026-01-01T00:30:00")
    with pytest.raises(InvalidInput):
        parse_iso("yesterday")
    with pytest.raises(LookupError):
        parse_iso("yesterday", error=LookupError)
    assert instant(None) is None
    assert instant(datetime(2026, 1, 1, 1, 30, tzinfo=timezone(timedelta(hours=1)))) == AT
    assert instant(datetime(2026, 1, 1, 0, 30), naive="utc") == AT
    with pytest.raises(TypeError):
        instant(1767227400)


def _paris_then_berlin(memory: Memory, clock: ManualClock, subject: str = "ada") -> None:
    clock.now = utc(2026, 1, 1)
    memory.remember(subject, "lives_in", "Paris", valid_from=utc(2025, 9, 1))
    clock.now = utc(2026, 1, 2)
    memory.remember(subject, "lives_in", "Berlin", valid_from=utc(2026, 1, 1, 12))


def test_langgraph_as_of_and_history_take_iso(memory: Memory, clock: ManualClock) -> None:
    from langgraph.store.chronomem import ChronomemStore

    store = ChronomemStore(memory)
    clock.now = utc(2026, 1, 1)
    store.put(("users",), "ada", {"city": "Paris"})
    clock.now = utc(2026, 1, 2)
    store.put(("users",), "ada", {"city": "Berlin"})
    view = store.as_of(ISO)
    assert view.get(("users",), "ada").value == {"city": "Paris"}  # type: ignore[union-attr]
    assert store.as_of(valid_at=ISO).get(("users",), "ada").value == {"city": "Paris"}  # type: ignore[union-attr]
    assert store.as_of(known_at=ISO).get(("users",), "ada").value == {"city": "Paris"}  # type: ignore[union-attr]
    believed = store.history(("users",), "ada", "city", known_at=ISO)
    assert [v.value for v in believed] == ["Paris"]
    with pytest.raises(NaiveDatetime):
        store.as_of("2026-01-01T00:30:00")


def test_langchain_retriever_takes_iso(memory: Memory, clock: ManualClock) -> None:
    from langchain_chronomem import ChronomemRetriever

    _paris_then_berlin(memory, clock)
    docs = ChronomemRetriever(memory=memory, as_of=ISO).invoke("where does ada live")
    assert [d.metadata["object"] for d in docs] == ["Paris"]
    docs = ChronomemRetriever(memory=memory).invoke("where does ada live", valid_at=ISO)
    assert [d.metadata["object"] for d in docs] == ["Paris"]


def test_llamaindex_views_take_iso(memory: Memory, clock: ManualClock) -> None:
    from llama_index.memory.chronomem import ChronomemMemory, ChronomemRetriever

    _paris_then_berlin(memory, clock)
    view = ChronomemMemory.from_defaults(memory=memory, session_id="s").as_of(ISO)
    assert view.is_view and view.as_of_instant == AT.isoformat()
    nodes = ChronomemRetriever(memory=memory, as_of=ISO).retrieve("where does ada live")
    assert [n.node.metadata["object"] for n in nodes] == ["Paris"]


def test_crewai_views_take_iso(url: str | None, clock: ManualClock) -> None:
    from crewai_chronomem import ChronomemMemory, ChronomemStorage
    from crewai_chronomem.conformance import kit_embedder

    storage = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    try:
        view = storage.as_of(ISO)
        assert view._time.as_of == AT
        assert storage.as_of(valid_at=ISO)._time.valid_at == AT
        with pytest.raises(NaiveDatetime):
            storage.as_of("2026-01-01T00:30:00")
    finally:
        storage.close()
    mem = ChronomemMemory(memory=Memory(clock=clock))
    try:
        assert mem.as_of(ISO)._time.as_of == AT
    finally:
        mem.close()


def test_one_iso_parser_in_the_source() -> None:
    """Only ``chronomem.timeutil`` calls ``fromisoformat``: core, the shared layer and
    the four packages read ISO text through ``parse_iso``/``instant``."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    roots = ["core", "adapters", "langgraph_pkg", "langchain_pkg", "llamaindex_pkg", "crewai_pkg"]
    found = [
        str(path.relative_to(repo))
        for root in roots
        for path in (repo / root).rglob("*.py")
        if "fromisoformat(" in path.read_text(encoding="utf-8")
    ]
    assert found == ["core/chronomem/timeutil.py"]
