"""Replay: what a logged read returned, as of its instant.

A read is a pure function of its arguments and its two instants,
because versions are immutable and every write is stamped after the instant
of any read it could have changed (``writer.stamp``). ``memory.replay(read_id)``
re-runs the read with its valid instant and ``known_at`` pinned to its
instant and returns what the original call returned."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import reads as reads_sql
from ..model import State
from ..queries import query_of
from ..schema import episodes as episodes_table
from ..schema import versions
from ..scope import Scope
from ..timeutil import to_us
from .capture import collect
from .queries import by_id, get_read
from .records import ErasedRead, Read

if TYPE_CHECKING:
    from ..memory import Memory


def replay(mem: Memory, read_id: str | Read, *, rerun: bool = False) -> Any:
    """What a logged read returned, as of its instant: the same facts, hits or block.

    A ``facts`` read is re-run with its valid instant and ``known_at`` pinned to
    its instant (a pure function of both: exact). A ``search`` or ``recall``
    is rebuilt from what it served: each served version (immutable) is read
    back by id, checked to be visible at the read's instants, and returned
    with its logged score, in the logged order (``recall`` renders its block
    again). ``rerun=True`` re-executes the query as of the instant instead:
    the same temporal filter, but lexical ranking statistics (SQLite FTS5's
    bm25) count texts written later, so ranks and scores may differ."""
    entry = read_id if isinstance(read_id, Read) else get_read(mem, read_id)
    if entry.erased:
        raise ErasedRead(f"read {entry.id} served something since erased: it cannot be replayed")
    view = type(mem)(
        scope=Scope(
            entry.scope["tenant"],
            entry.scope.get("user"),
            entry.scope.get("agent"),
            entry.scope.get("session"),
        ),
        _engine=mem._engine,
    )
    call = dict(entry.args)
    if call.get("as_of") is None and call.get("known_at") is None:
        call["known_at"] = entry.at
    if entry.op != "facts" and not rerun:
        return _rebuild(view, entry, call)
    token = collect.set([])  # the replay is not itself a served read
    try:
        return view._read(query_of(entry.op, call))
    finally:
        collect.reset(token)


def _rebuild(view: Memory, entry: Read, call: Mapping[str, Any]) -> Any:
    from dataclasses import replace

    from ..render import render as render_block
    from ..retrieval import SearchResult
    from ..retrieval.search import Hit

    v = to_us(call["valid_at"] if call.get("valid_at") is not None else call["as_of"], "at")
    k = to_us(call["known_at"] if call.get("known_at") is not None else call["as_of"], "at")
    t = view.scope.tenant
    with view._engine.backend.read() as conn:
        rows = by_id(conn, t, versions, {i.id for i in entry.items if i.kind == "v"})
        eps = by_id(conn, t, episodes_table, {i.id for i in entry.items if i.kind == "e"})
        src = reads_sql.sources_of(conn, t, (r["fact_id"] for r in rows.values()))
    hits: list[Hit] = []
    for it in entry.items:
        if it.kind == "e":
            ep = eps.get(it.id)
            if ep is None or ep["recorded_at"] > k:
                raise ErasedRead(f"read {entry.id}: episode {it.id} is not in the store as served")
            hits.append(Hit(None, reads_sql.to_episode(ep), it.score or 0.0, {"replayed": True}))
            continue
        row = rows.get(it.id)
        if row is None or row["recorded_at"] > k:
            raise ErasedRead(f"read {entry.id}: version {it.id} is not in the store as served")
        fact = reads_sql.to_fact(row, v, src.get(row["fact_id"], ()))
        if it.state:
            fact = replace(fact, state=State(it.state))
        hits.append(Hit(fact, None, it.score or 0.0, {"replayed": True}))
    if entry.op == "search":
        return SearchResult(hits)
    # recall: its search's hits (live facts, episodes), then the history it added (ended)
    live = [h.fact for h in hits if h.fact is not None and h.fact.state is State.LIVE]
    history = [h.fact for h in hits if h.fact is not None and h.fact.state is not State.LIVE]
    return render_block(live, history, [h.episode for h in hits if h.episode is not None])
