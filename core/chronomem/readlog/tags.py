"""The caller tag: a context variable, so an adapter sets it around a framework
call without threading anything through the store::

    with memory.read_tag(run="r-17", thread="t-1", checkpoint="c-4"):
        memory.search("where does alice live")

Nested tags merge (inner keys win). ``run`` is indexed: ``memory.reads(run=...)``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from ..errors import InvalidInput

_tag: ContextVar[Mapping[str, str] | None] = ContextVar("chronomem_read_tag", default=None)


@contextmanager
def read_tag(**tag: str | None) -> Iterator[None]:
    """Tag every read logged inside the block (``run``, ``thread``, ``checkpoint``, ...)."""
    merged = dict(_tag.get() or {})
    for key, value in tag.items():
        if value is None:
            merged.pop(key, None)
        elif not isinstance(value, str):
            raise InvalidInput(f"read tag {key!r} must be a str, not {type(value).__name__}")
        else:
            merged[key] = value
    token = _tag.set(merged)
    try:
        yield
    finally:
        _tag.reset(token)


def current_tag() -> dict[str, str]:
    return dict(_tag.get() or {})
