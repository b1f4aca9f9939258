"""Concurrent async calls share one batch, as LangGraph's async stores do.

``await store.aput(...)`` from 5,000 tasks at once (``asyncio.gather``) would
otherwise be 5,000 batches, each a transaction in a worker thread. Like
LangGraph's ``AsyncBatchedBaseStore``, calls that arrive while a batch runs
(or in the same event-loop tick) wait and then run together as one batch, so
the database sees a few transactions, not thousands.

Each caller's operations were validated before they joined (a bad call fails
alone); if a shared batch still fails, every caller's operations are run
again on their own, so one caller's error never becomes another's. Calls from
different event loops never share a batch (one ``Coalescer`` per loop)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from langgraph.store.base import Op, Result

RunBatch = Callable[[list[Op]], list[Result]]
# callers join a shared batch until it holds this many ops (a caller's own batch
# is never split): it bounds a batch's locks (PostgreSQL takes a lock per slot
# and subject written, within max_locks_per_transaction) and each caller's wait
MAX_SHARED_OPS = 500


@dataclass
class _Waiting:
    ops: list[Op]
    future: asyncio.Future[list[Result]]


@dataclass
class Coalescer:
    """Queues async callers' op lists and runs what has queued as one batch (in
    a worker thread: ``run`` blocks), then hands each caller its results."""

    run: RunBatch
    loop: asyncio.AbstractEventLoop
    waiting: deque[_Waiting] = field(default_factory=deque)
    draining: asyncio.Task[None] | None = None

    async def submit(self, ops: list[Op]) -> list[Result]:
        fut: asyncio.Future[list[Result]] = self.loop.create_future()
        self.waiting.append(_Waiting(ops, fut))
        if self.draining is None or self.draining.done():
            self.draining = self.loop.create_task(self._drain())
        return await fut

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let the calls made in this tick join the first batch
        while self.waiting:
            group: list[_Waiting] = []
            size = 0
            while self.waiting and (not group or size + len(self.waiting[0].ops) <= MAX_SHARED_OPS):
                w = self.waiting.popleft()
                if not w.future.done():  # skip cancelled callers
                    group.append(w)
                    size += len(w.ops)
            if group:
                await self._run_group(group)

    async def _run_group(self, group: list[_Waiting]) -> None:
        merged = [op for w in group for op in w.ops]
        try:
            results = await self.loop.run_in_executor(None, self.run, merged)
        except Exception as exc:
            if len(group) == 1:
                _settle(group[0], exc=exc)
                return
            for w in group:  # one caller's error stays that caller's
                try:
                    mine = await self.loop.run_in_executor(None, self.run, w.ops)
                except Exception as own:
                    _settle(w, exc=own)
                else:
                    _settle(w, mine)
            return
        at = 0
        for w in group:
            mine = results[at : at + len(w.ops)]
            at += len(w.ops)
            _settle(w, mine)


def _settle(w: _Waiting, results: list[Result] | None = None, exc: Exception | None = None) -> None:
    """Give a caller its results or its error (unless it stopped waiting)."""
    if w.future.done():
        return
    if exc is not None:
        w.future.set_exception(exc)
    else:
        w.future.set_result(results or [])
