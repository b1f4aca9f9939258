"""Import any LangGraph ``BaseStore`` (an ``InMemoryStore``, a ``PostgresStore``,
another ``ChronomemStore``) into chronomem, as items a ``ChronomemStore`` reads.

A LangGraph store keeps each item's current value and two instants: when the
item was created and when it was last put. That is all the history it has, so
that is all the import claims: each item's current value is written as known
(transaction time) and holding (valid time) from its ``updated_at`` — the
instant the store itself took that value — and the item keeps its
``created_at``. Earlier values of the item were never kept by the source and
are not invented. Items are written oldest put first, one write per item.

The source is read only through ``list_namespaces`` and ``search`` (paged), so
anything with those two ``BaseStore`` methods can be imported."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from chronomem import InvalidInput, Memory
from chronomem.ops import AssertOp
from chronomem.timeutil import from_us, to_us

from . import keys
from .indexing import DEFAULT_FIELDS
from .records import Marker
from .writes import plan_put, prepare

PAGE = 100


def source_items(source: Any, *, page: int = PAGE) -> Iterator[Any]:
    """Every item of ``source``, namespace by namespace (a namespace's search also
    returns the namespaces under it: only the exact namespace's items are kept)."""
    offset = 0
    namespaces: list[tuple[str, ...]] = []
    while True:
        batch = source.list_namespaces(limit=page, offset=offset)
        namespaces += [tuple(ns) for ns in batch]
        if len(batch) < page:
            break
        offset += page
    for ns in dict.fromkeys(namespaces):
        offset = 0
        while True:
            items = source.search(ns, limit=page, offset=offset)
            for item in items:
                if tuple(item.namespace) == ns:
                    yield item
            if len(items) < page:
                break
            offset += page


def import_store(
    source: Any,
    target: Any,
    *,
    index: tuple[str, ...] | list[str] | None = None,
    progress: bool = False,
) -> int:
    """Copy every item of ``source`` into ``target`` (a ``chronomem.Memory`` or a
    ``ChronomemStore``); ``index`` is the paths to index for search (default: the
    target store's fields, else the whole value). Returns the number of items."""
    memory = target if isinstance(target, Memory) else getattr(target, "memory", None)
    if not isinstance(memory, Memory):
        raise InvalidInput("target must be a chronomem.Memory or a ChronomemStore")
    paths = tuple(index) if index is not None else tuple(getattr(target, "_fields", DEFAULT_FIELDS))
    items = sorted(source_items(source), key=lambda i: (i.updated_at, tuple(i.namespace), i.key))
    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=len(items), desc="langgraph", unit="item", leave=False)
        except ImportError:  # pragma: no cover
            bar = None
    try:
        for item in items:
            updated = to_us(item.updated_at, "updated_at")
            created = to_us(item.created_at, "created_at")
            put = prepare(tuple(item.namespace), item.key, item.value, paths, None)
            marker = Marker(
                created=created if created < updated else None,
                updated=updated,
                ttl=None,
                fields=put.names,
                index=put.paths,
            )
            ops = [
                replace(op, obj=marker.encode())
                if isinstance(op, AssertOp) and op.predicate == keys.MARKER
                else op
                for op in plan_put(put, None, updated)
            ]
            memory.apply(ops, recorded_at=from_us(updated))
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    return len(items)
