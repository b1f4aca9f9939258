"""Pinned reads: a graph that replays or forks from a past checkpoint reads
memory as it was at that checkpoint (``ChronomemStore(pin_reads="checkpoint")``).

Inside a graph step LangGraph exposes the running config (``get_config()``).
When the run was started from a checkpoint (``graph.invoke(None, {"configurable":
{"thread_id": …, "checkpoint_id": …}})``), LangGraph copies that ``checkpoint_id``
into the config's ``metadata``; the checkpoint itself, and its creation time
(``checkpoint["ts"]``), come from the graph's checkpointer: the one passed as
``ChronomemStore(checkpointer=…)``, else the one LangGraph hands the running step
in its config. A normal run (no ``checkpoint_id``) is not pinned.

The same context fills the served-read log's caller tag (``chronomem.readlog``):
``run``, ``thread``, ``checkpoint`` (the checkpoint the step runs under) and
``fork_of`` (the checkpoint a replay started from)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from chronomem import InvalidInput
from chronomem.timeutil import parse_iso, to_us
from chronomem_adapters.graphconfig import current_step

from .errors import PinUnavailable

PIN_MODES = (None, "checkpoint")


def check_mode(mode: object) -> str | None:
    if mode not in PIN_MODES:
        raise InvalidInput(f"pin_reads must be None or 'checkpoint', not {mode!r}")
    return None if mode is None else str(mode)


@dataclass(frozen=True)
class RunContext:
    """What the running graph step says about itself."""

    thread: str | None
    checkpoint: str | None  # the checkpoint this step runs under
    fork_of: str | None  # the past checkpoint the run was started from
    run: str | None
    checkpointer: Any  # the graph's checkpointer, when LangGraph passes it
    pin_us: int | None = None  # the instant reads are served at (pinned runs)

    def tag(self) -> dict[str, str | None]:
        return {
            "run": self.run,
            "thread": self.thread,
            "checkpoint": self.checkpoint,
            "fork_of": self.fork_of,
        }


def run_context() -> RunContext | None:
    """The running step's context (read by ``chronomem_adapters.graphconfig``, as
    the LangChain package reads it), or ``None`` outside a graph run."""
    step = current_step()
    if step is None:
        return None
    return RunContext(
        thread=step.thread,
        checkpoint=step.checkpoint,
        fork_of=step.fork_of,
        run=step.run,
        checkpointer=step.checkpointer,
    )


def _lookup(ctx: RunContext) -> dict[str, Any]:
    return {
        "configurable": {"thread_id": ctx.thread, "checkpoint_ns": "", "checkpoint_id": ctx.fork_of}
    }


def _ts_us(ctx: RunContext, found: Any) -> int:
    if found is None:
        raise PinUnavailable(
            f"pin_reads='checkpoint': checkpoint {ctx.fork_of!r} of thread {ctx.thread!r} "
            "is not in the checkpointer"
        )
    return to_us(parse_iso(found.checkpoint["ts"], "checkpoint ts"), "checkpoint ts")


def _saver(ctx: RunContext, checkpointer: Any) -> Any:
    saver = checkpointer if checkpointer is not None else ctx.checkpointer
    if saver is None:
        raise PinUnavailable(
            "pin_reads='checkpoint' needs the graph's checkpointer: compile the graph with "
            "one, or pass ChronomemStore(checkpointer=...)"
        )
    return saver


class PinCache:
    """Checkpoint timestamps by (thread, checkpoint id): a checkpoint never changes."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._ts: dict[tuple[str | None, str], int] = {}
        self._lock = threading.Lock()

    def get(self, ctx: RunContext) -> int | None:
        with self._lock:
            return self._ts.get((ctx.thread, ctx.fork_of or ""))

    def put(self, ctx: RunContext, us: int) -> None:
        with self._lock:
            if len(self._ts) >= self.size:
                self._ts.pop(next(iter(self._ts)))
            self._ts[(ctx.thread, ctx.fork_of or "")] = us


def pinned(ctx: RunContext, checkpointer: Any, cache: PinCache) -> RunContext:
    """``ctx`` with the instant of the checkpoint the run started from."""
    if ctx.fork_of is None:
        return ctx
    us = cache.get(ctx)
    if us is None:
        us = _ts_us(ctx, _saver(ctx, checkpointer).get_tuple(_lookup(ctx)))
        cache.put(ctx, us)
    return _with_pin(ctx, us)


async def apinned(ctx: RunContext, checkpointer: Any, cache: PinCache) -> RunContext:
    """``pinned`` through the checkpointer's async API (``aget_tuple``)."""
    if ctx.fork_of is None:
        return ctx
    us = cache.get(ctx)
    if us is None:
        us = _ts_us(ctx, await _saver(ctx, checkpointer).aget_tuple(_lookup(ctx)))
        cache.put(ctx, us)
    return _with_pin(ctx, us)


def _with_pin(ctx: RunContext, us: int) -> RunContext:
    from dataclasses import replace

    return replace(ctx, pin_us=us)
