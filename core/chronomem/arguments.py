"""Collection arguments: one rule for every public method that takes many names.

A ``str`` is iterable, so ``facts(subjects="alice")`` would quietly read the
subjects ``"a"``, ``"l"``, … and ``search(predicates="lives_in")`` would
match nothing. Anything that is not a collection of names is refused with
``InvalidType`` before the database is touched: a bare ``str``/``bytes``, a
mapping (it iterates its keys), a non-iterable, a non-string item."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import InvalidType
from .identity import require_text


def collection(value: object, what: str, *, of: str = "names") -> tuple[Any, ...]:
    """``value`` as a tuple, if it is a collection (list, tuple, set, generator …)
    and not a bare string, bytes or mapping."""
    if isinstance(value, str | bytes | bytearray | memoryview):
        raise InvalidType(
            f"{what} takes a collection of {of}, not a bare {type(value).__name__} "
            f"(iterating {value!r} would give its characters); pass [{value!r}]"
        )
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise InvalidType(
            f"{what} takes a collection of {of} (a list, tuple or set), not {type(value).__name__}"
        )
    return tuple(value)


def names(value: object, what: str) -> tuple[str, ...]:
    """A collection of non-empty names (subjects, predicates, aliases), in order."""
    return tuple(require_text(item, f"each of {what}") for item in collection(value, what))
