"""A LangGraph search inside one namespace keeps its read while the tenant's clock
stamp stands still (``HeldRows.stamped``): a put or a delete through another
store on the same SQLite file or PostgreSQL schema moves the stamp, and the
next search sees it."""

from __future__ import annotations

from datetime import timedelta

from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock
from .fakes import CharEmbeddings

NS = ("users", "me")


def keys(store: ChronomemStore, query: str) -> list[str]:
    return sorted(i.key for i in store.search(NS, query=query, limit=10))


def test_another_stores_puts_and_deletes_are_found(durable_url: str) -> None:
    clock = ManualClock(tick=timedelta(seconds=1))
    index = {"dims": 64, "embed": CharEmbeddings(), "fields": ["text"]}
    writer = ChronomemStore(durable_url, clock=clock, index=index)
    reader = ChronomemStore(durable_url, clock=clock, index=index)
    try:
        writer.put(NS, "a", {"text": "red gallery"})
        assert keys(reader, "red gallery") == ["a"]
        assert keys(reader, "red gallery") == ["a"]  # the read kept
        writer.put(NS, "b", {"text": "red garden"})
        assert keys(reader, "red gallery") == ["a", "b"]
        writer.put(NS, "a", {"text": "blue river"})
        assert [i.value for i in reader.search(NS, query="blue", limit=10) if i.key == "a"] == [
            {"text": "blue river"}
        ]
        writer.delete(NS, "b")
        assert keys(reader, "red gallery") == ["a"]
    finally:
        writer.close()
        reader.close()
