"""The async twins: the same operations through ``abatch`` and the ``a*`` methods,
including many concurrent calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp
from langgraph.store.memory import InMemoryStore

from langgraph.store.chronomem import ChronomemStore

from .conftest import snapshot


async def _scenario(s: Any) -> list[Any]:
    out: list[Any] = []
    await s.aput(("a", "b"), "k", {"v": 1, "color": "red"})
    await s.aput(("a", "c"), "k", {"v": 2, "color": "blue"})
    out.append(snapshot(await s.aget(("a", "b"), "k")))
    out.append(sorted(snapshot(await s.asearch(("a",), filter={"color": "red"}))))
    out.append(await s.alist_namespaces(prefix=("a",)))
    out.append(await s.alist_namespaces(suffix=("c",), max_depth=1))
    res = await s.abatch([GetOp(("a", "b"), "k"), PutOp(("a", "b"), "k", {"v": 9})])
    out.append([snapshot(r) for r in res])
    await s.adelete(("a", "c"), "k")
    out.append(snapshot(await s.aget(("a", "c"), "k")))
    out.append(snapshot(await s.aget(("a", "b"), "k")))
    return out


def test_async_twins_match_in_memory_store(store: ChronomemStore) -> None:
    assert asyncio.run(_scenario(store)) == asyncio.run(_scenario(InMemoryStore()))


def test_async_validation(store: ChronomemStore) -> None:
    async def run() -> None:
        with pytest.raises(InvalidNamespaceError):
            await store.aput(("langgraph", "x"), "k", {"v": 1})
        with pytest.raises(InvalidNamespaceError):
            await store.abatch([GetOp(("a.b",), "k")])

    asyncio.run(run())


def test_concurrent_async_calls(store: ChronomemStore) -> None:
    docs = [(f"doc{i}", {"i": i, "color": ["red", "blue"][i % 2]}) for i in range(20)]

    async def run() -> Any:
        await asyncio.gather(*(store.aput(("test",), k, v) for k, v in docs))
        await asyncio.gather(*(store.adelete(("test",), k) for k, _ in docs[:5]))
        return await asyncio.gather(
            store.asearch(("test",), filter={"color": "red"}, limit=100),
            store.asearch(("test",), filter={"i": {"$gte": 15}}, limit=100),
            store.aget(("test",), "doc3"),
            store.aget(("test",), "doc7"),
        )

    red, high, gone, kept = asyncio.run(run())
    assert sorted(i.value["i"] for i in red) == [6, 8, 10, 12, 14, 16, 18]
    assert sorted(i.value["i"] for i in high) == [15, 16, 17, 18, 19]
    assert gone is None and kept is not None
