"""What of an item search indexes: LangGraph's ``index`` paths turned into texts.

``fields`` (store default ``["$"]``, the whole document) or ``put(index=[...])``
name JSON paths (``a.b``, ``arr[*]``, ``arr[0].c``, ``{a,b}``); each text a path
yields is one search-index entry of the item, so an item matches a query by
its best entry (LangGraph's max-pooling). ``put(index=False)`` indexes nothing."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.store.base import get_text_at_path, tokenize_path

from chronomem import InvalidType

from . import keys

DEFAULT_FIELDS = ("$",)


def resolve_paths(index: object, default: Sequence[str]) -> tuple[str, ...]:
    """The paths a put indexes: ``None`` -> the store's fields, ``False`` -> none."""
    if index is None:
        return tuple(default)
    if index is False:
        return ()
    if isinstance(index, (list, tuple)) and all(isinstance(p, str) for p in index):
        return tuple(index)
    raise InvalidType(f"index must be None, False or a list of paths, not {index!r}")


@functools.lru_cache(maxsize=256)  # a store indexes a few paths: tokenized once each
def _tokens(path: str) -> tuple[str, ...]:
    return tuple(tokenize_path(path))


@functools.lru_cache(maxsize=256)
def _field(path: str) -> str | None:
    """The one field a path names (``"text"``), or None for any other path (a
    nested path, an index, a wildcard, a set of fields, the whole document)."""
    if path == "$":
        return None
    tokens = _tokens(path)
    if len(tokens) != 1:
        return None
    token = tokens[0]
    if token == "*" or (token[:1], token[-1:]) in (("[", "]"), ("{", "}")):
        return None
    return token


def _texts(doc: dict[str, Any], path: str) -> list[str]:
    """``get_text_at_path(doc, path)``; a path naming one field that holds a string
    reads it directly (LangGraph's walk builds a recursive closure per call, a
    reference cycle only the garbage collector frees: one per put)."""
    field = _field(path)
    if field is not None:
        value = doc.get(field)
        if type(value) is str:
            return [value]
        if field not in doc:
            return []
    return get_text_at_path(doc, path if path == "$" else list(_tokens(path)))


def entries(value: Mapping[str, Any], paths: Sequence[str]) -> dict[str, str]:
    """``{index predicate: text}`` for the texts ``paths`` select from ``value``."""
    out: dict[str, str] = {}
    doc = value if type(value) is dict else dict(value)  # only read: a put's own dict as is
    for path in paths:
        texts = _texts(doc, path)
        texts = [t.replace("\x00", "") for t in texts if t and t.strip()]
        if len(texts) == 1:
            out[keys.index_predicate(path)] = texts[0]
        else:
            for i, text in enumerate(texts):
                out[keys.index_predicate(path, i)] = text
    return out
