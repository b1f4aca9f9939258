"""The async twins: the same operations through ``abatch`` and the ``a*`` methods,
including many concurrent calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp
from langgraph.store.memory import InMemoryStore

from chronomem.errors import StoreClosed
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


def test_concurrent_single_calls_share_batches(
    store: ChronomemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200 concurrent ``aput`` then 200 ``aget`` calls (``asyncio.gather``) are
    coalesced into a few batches, as LangGraph's async stores do, not one
    transaction each; every caller gets its own result."""
    applies: list[int] = []
    real_apply = store.memory.apply
    monkeypatch.setattr(
        store.memory, "apply", lambda ops, **kw: applies.append(len(ops)) or real_apply(ops, **kw)
    )
    runs: list[int] = []
    real_batch = store._batch
    monkeypatch.setattr(
        store, "_batch", lambda ops, ctx: runs.append(len(ops)) or real_batch(ops, ctx)
    )

    async def run() -> list[Any]:
        await asyncio.gather(*(store.aput(("c",), f"k{i}", {"i": i}) for i in range(200)))
        return await asyncio.gather(*(store.aget(("c",), f"k{i}") for i in range(200)))

    got = asyncio.run(run())
    assert [g.value["i"] for g in got] == list(range(200))
    assert len(applies) <= 2 and sum(runs) == 400 and len(runs) <= 4


def test_a_bad_call_fails_alone_when_coalesced(store: ChronomemStore) -> None:
    """A call that fails validation raises in its own caller; the calls that
    arrived with it still run."""

    async def run() -> list[Any]:
        return await asyncio.gather(
            store.aput(("c",), "good", {"v": 1}),
            store.aput(("c",), "bad", {"v": object()}),
            store.aput(("c",), "good2", {"v": 2}),
            return_exceptions=True,
        )

    good, bad, good2 = asyncio.run(run())
    assert good is None and good2 is None and isinstance(bad, TypeError)
    assert store.get(("c",), "good") is not None and store.get(("c",), "good2") is not None
    assert store.get(("c",), "bad") is None


def test_a_failing_shared_batch_is_rerun_per_caller(
    store: ChronomemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When a shared batch fails at run time, each caller's ops run again on
    their own: only the caller whose ops fail gets the error."""
    real_batch = store._batch

    def flaky(ops: list[Any], ctx: Any) -> Any:
        if any(isinstance(op, PutOp) and op.key == "poison" for op in ops):
            raise RuntimeError("poison")
        return real_batch(ops, ctx)

    monkeypatch.setattr(store, "_batch", flaky)

    async def run() -> list[Any]:
        return await asyncio.gather(
            store.aput(("c",), "a", {"v": 1}),
            store.aput(("c",), "poison", {"v": 2}),
            store.aget(("c",), "a"),
            return_exceptions=True,
        )

    a, poison, _ = asyncio.run(run())
    assert a is None and isinstance(poison, RuntimeError)
    assert store.get(("c",), "a") is not None


def test_ttl_sweeper_api_does_no_work(store: ChronomemStore) -> None:
    """``start_ttl_sweeper``/``stop_ttl_sweeper`` exist with upstream's return
    values (a done future; True), sync and awaited (the async stores' form)."""
    fut = store.start_ttl_sweeper()
    assert fut.done() and fut.result() is None
    assert store.stop_ttl_sweeper() == True  # noqa: E712  (upstream returns a bool)

    async def run() -> tuple[Any, Any]:
        task = await store.start_ttl_sweeper(sweep_interval_minutes=1)
        return task, await store.stop_ttl_sweeper(timeout=1)

    task, stopped = asyncio.run(run())
    assert task.done() and stopped is True


def test_async_context_manager_and_awaited_setup(tmp_path: Any) -> None:
    """``async with ChronomemStore.from_conn_string(url) as store: await store.setup()``
    — the form LangGraph documents for ``AsyncSqliteStore``/``AsyncPostgresStore`` —
    opens, works and closes the store it owns."""
    url = str(tmp_path / "m.db")

    async def run() -> tuple[Any, ChronomemStore]:
        async with ChronomemStore.from_conn_string(url) as s:
            assert await s.setup() is None
            await s.aput(("a",), "k", {"v": 1})
            return (await s.aget(("a",), "k")), s

    item, used = asyncio.run(run())
    assert item is not None and item.value == {"v": 1}
    with pytest.raises(StoreClosed):  # closed on exit
        used.get(("a",), "k")
    with ChronomemStore.from_conn_string(url) as again:  # and the write persisted
        found = again.get(("a",), "k")
        assert found is not None and found.value == {"v": 1}


def test_text_fields_key_of_sqlite_store_index_config(embeddings: Any) -> None:
    """An index config written for ``SqliteStore`` names its fields ``text_fields``;
    only those fields are embedded, as there."""
    index: Any = {"dims": embeddings.dims, "embed": embeddings, "text_fields": ["title"]}
    with ChronomemStore.from_conn_string(":memory:", index=index) as s:
        s.put(("d",), "one", {"title": "zebra stripes", "body": "quantum flux"})
        s.put(("d",), "two", {"title": "quantum flux", "body": "zebra stripes"})
        hits = s.search(("d",), query="quantum flux")
        assert hits[0].key == "two"
        assert hits[0].score is not None and hits[1].score is not None
        assert hits[0].score > 0.99 > hits[1].score
