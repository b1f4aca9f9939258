"""The JSON nesting limit: metadata and dump records nest at most ``MAX_DEPTH``
levels (objects and arrays). Deeper JSON is refused with ``InvalidInput``
instead of reaching Python's recursion limit (a raw ``RecursionError`` in
``json`` or in a recursive walk) on the way in or on the way out."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import InvalidInput

MAX_DEPTH = 100


def check_depth(value: Any, name: str) -> None:
    """``InvalidInput`` when ``value`` nests objects/arrays deeper than ``MAX_DEPTH``
    (iterative: a walk that cannot itself run out of stack)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise InvalidInput(f"{name} nests deeper than {MAX_DEPTH} levels")
        stack.extend((c, depth + 1) for c in children)


def loads(text: str, name: str) -> Any:
    """``json.loads`` with the nesting limit: ``json.JSONDecodeError`` for text that is
    not JSON (as ``json.loads``), ``InvalidInput`` for JSON nested too deep."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise InvalidInput(f"{name} nests deeper than {MAX_DEPTH} levels") from None
    check_depth(value, name)
    return value
