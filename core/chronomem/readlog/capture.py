"""Logging the three reads: ``Memory.facts``, ``search`` and ``recall`` hand their
query value (``chronomem.queries``) to ``serve``; with the log off a read pays one
attribute check."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .args import encode
from .batch import pending, record
from .instant import read_clock, read_instant

if TYPE_CHECKING:
    from ..engine import Engine
    from ..memory import Memory
    from ..queries import Query
    from ..scope import Scope

# ``chronomem.reading.run``: answers a query; a read made of reads runs them through
# its last argument
Run = Callable[["Engine", "Scope", "Query", Callable[["Query"], Any]], Any]

# set while a logged read runs the reads it is made of (recall runs search and facts):
# the inner reads add their items to the outer read instead of logging themselves
collect: ContextVar[list[tuple[str, str, float | None, str | None]] | None] = ContextVar(
    "chronomem_read_collect", default=None
)


def serve(mem: Memory, query: Query, run: Run) -> Any:
    """What ``run`` answers to ``query`` in ``mem``'s scope, logged when the store's
    log is on: the query (with its valid instant resolved), its instant and the
    items it served."""

    def part(sub: Query) -> Any:
        return serve(mem, sub, run)

    if not mem._engine.read_log:
        return run(mem._engine, mem.scope, query, part)
    outer = collect.get()
    if outer is not None:  # part of a logged read (recall): it records the items
        out = run(mem._engine, mem.scope, query, part)
        if query.op != "recall":
            outer.extend(_items(query.op, out))
        return out
    if query.valid_at is None and query.as_of is None:
        # what the read would use: logged, so replay pins it
        query = replace(query, valid_at=mem.now())
    collected: list[tuple[str, str, float | None, str | None]] = []
    instants: list[int] = []
    pending(mem._engine)  # the clock listener is on the engine before the read begins
    token = collect.set(collected)
    clock = read_clock.set((mem.scope.tenant, instants))
    try:
        out = run(mem._engine, mem.scope, query, part)
    finally:
        read_clock.reset(clock)
        collect.reset(token)
    items = collected if query.op == "recall" else _items(query.op, out)
    at = max(instants) if instants else read_instant(mem)
    record(mem, query.op, encode(query), items, at)
    return out


def _items(op: str, out: Any) -> list[tuple[str, str, float | None, str | None]]:
    if op == "facts":
        return [("v", f.version_id, None, f.state.value) for f in out]
    found: list[tuple[str, str, float | None, str | None]] = []
    for h in out:
        if h.fact is not None:
            found.append(("v", h.fact.version_id, float(h.score), h.fact.state.value))
        elif h.episode is not None:
            found.append(("e", h.episode.id, float(h.score), None))
    return found
