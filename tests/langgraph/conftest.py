"""Fixtures for the LangGraph store tests: a ``ChronomemStore`` per backend on the
shared manual clock, and LangGraph's own ``InMemoryStore`` to compare against."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langgraph.store.base import BaseStore, Item
from langgraph.store.memory import InMemoryStore

from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock
from .fakes import CharEmbeddings

StoreFactory = Callable[..., ChronomemStore]


@pytest.fixture
def make_store(url: str | None, clock: ManualClock) -> Iterator[StoreFactory]:
    """Open stores on this test's database (same URL, same clock)."""
    opened: list[ChronomemStore] = []

    def make(**kw: Any) -> ChronomemStore:
        s = ChronomemStore(url, clock=clock, **kw)
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


@pytest.fixture
def store(make_store: StoreFactory) -> ChronomemStore:
    return make_store()


@pytest.fixture
def embeddings() -> CharEmbeddings:
    return CharEmbeddings()


def snapshot(items: Any) -> Any:
    """What two stores must agree on: namespaces, keys and values (not timestamps)."""
    if items is None:
        return None
    if isinstance(items, Item):
        return (tuple(items.namespace), items.key, items.value)
    return [snapshot(i) if isinstance(i, Item) else i for i in items]


def both(store: ChronomemStore) -> list[BaseStore]:
    return [InMemoryStore(), store]
