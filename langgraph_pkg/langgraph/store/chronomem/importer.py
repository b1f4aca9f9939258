"""Import any LangGraph ``BaseStore`` (an ``InMemoryStore``, a ``PostgresStore``,
another ``ChronomemStore``) into chronomem, as items a ``ChronomemStore`` reads.

A LangGraph store keeps each item's current value and two instants: when the
item was created and when it was last put. That is all the history it has, so
that is all the import claims: each item's current value is written as known
(transaction time) and holding (valid time) from its ``updated_at`` — the
instant the store itself took that value — and the item keeps its
``created_at``. Earlier values of the item were never kept by the source and
are not invented. Items are written oldest put first, one write per item, all in
one transaction: an item the store could not hold (a namespace label with '.',
an empty one, a time after the clock) writes nothing.

The source is read only through ``list_namespaces`` and ``search`` (paged), so
anything with those two ``BaseStore`` methods can be imported."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langgraph.store.base import InvalidNamespaceError
from langgraph.store.base import _validate_namespace_labels as validate_labels

from chronomem import InvalidInput, Memory
from chronomem.exchange import write_history
from chronomem.timeutil import from_us, to_us

from . import namespace_index
from .indexing import DEFAULT_FIELDS
from .writes import plan_put, prepare

PAGE = 100


def _pages(fetch: Any, page: int, what: str, key: Any) -> Iterator[Any]:
    """Every row of a paged source, ``fetch(offset)`` a page at a time. A source that
    ignores ``offset`` (a full page of nothing new) would loop forever: refused."""
    offset = 0
    seen: set[Any] = set()
    while True:
        batch = list(fetch(offset))
        new = [row for row in batch if key(row) not in seen]
        if len(batch) >= page and not new:
            raise InvalidInput(f"the source's {what} ignores offset (a page repeats): refused")
        seen.update(key(row) for row in new)
        yield from new
        if len(batch) < page:
            return
        offset += page


def _check_item(item: Any) -> tuple[str, ...]:
    """An item's namespace and key as a put checks them (labels non-empty, without
    '.' or NUL: a label with '.' would land in another namespace)."""
    ns = tuple(item.namespace)
    try:
        if not ns:
            raise InvalidNamespaceError("an item's namespace is empty")
        validate_labels(ns)
    except InvalidNamespaceError as exc:
        raise InvalidInput(f"source item {item.key!r}: {exc}") from None
    if not isinstance(item.key, str):
        raise InvalidInput(f"source item key must be a str, not {type(item.key).__name__}")
    return ns


def source_items(source: Any, *, page: int = PAGE) -> Iterator[Any]:
    """Every item of ``source``, namespace by namespace (a namespace's search also
    returns the namespaces under it: only the exact namespace's items are kept)."""
    namespaces = list(
        _pages(
            lambda offset: [tuple(ns) for ns in source.list_namespaces(limit=page, offset=offset)],
            page,
            "list_namespaces",
            lambda ns: ns,
        )
    )
    for ns in namespaces:
        for item in _pages(
            lambda offset, ns=ns: source.search(ns, limit=page, offset=offset),
            page,
            "search",
            lambda item: (tuple(item.namespace), item.key),
        ):
            if tuple(item.namespace) == ns:
                _check_item(item)
                yield item


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
    writes = []
    try:
        for item in items:
            updated = to_us(item.updated_at, "updated_at")
            created = to_us(item.created_at, "created_at")
            put = prepare(tuple(item.namespace), item.key, item.value, paths, None)
            ops = plan_put(put, None, updated, created=created if created < updated else None)
            writes.append((ops, from_us(updated), f"item {tuple(item.namespace)}/{item.key!r}"))
        namespace_index.add_to_import(memory, writes, [tuple(i.namespace) for i in items])
        write_history(memory, writes)  # one transaction: a bad item writes nothing
        if bar is not None:
            bar.update(len(items))
    finally:
        if bar is not None:
            bar.close()
    return len(items)
