"""``search(filter=...)``: LangGraph's filter language over an item's value.

``{"field": value}`` matches equal values (nested dicts match key by key,
lists element by element); ``{"field": {"$op": operand}}`` applies operators
``$eq $ne $gt $gte $lt $lte``. Ordering compares numbers as numbers and ISO
8601 dates/datetimes as instants (naive ones read as UTC); values of
different kinds never match an ordering operator (no error, no match). An
unknown operator is an error, raised before anything in the batch runs.

Filter keys follow ``SqliteStore``: letters, digits, ``_``, ``-`` and ``.``
only (anything else is refused with ``InvalidFilter``, a ``ValueError``), and
a dotted key is a path into nested objects (``{"user.access-level": "admin"}``
matches ``{"user": {"access-level": "admin"}}``); a value whose top level has
the dotted key itself is matched on that key, as ``InMemoryStore`` does."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from chronomem import ChronomemError, InvalidInput, InvalidType
from chronomem.timeutil import instant

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
# SqliteStore's filter keys (langgraph.store.sqlite.base._FILTER_PATTERN)
KEY = re.compile(r"^[a-zA-Z0-9_.-]+$")
_MISSING = object()

_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
)


class InvalidFilter(InvalidInput):
    """A search filter uses an operator or shape this store does not know."""


def validate(filter_: object) -> None:
    """Raise ``InvalidFilter`` for anything ``matches`` would refuse."""
    if filter_ is None:
        return
    if not isinstance(filter_, Mapping):
        raise InvalidType(f"filter must be a dict, not {type(filter_).__name__}")
    for key in filter_:
        if not isinstance(key, str) or not KEY.match(key) or "" in key.split("."):
            raise InvalidFilter(
                f"Invalid filter key: {key!r}. Filter keys must contain only alphanumeric "
                "characters, underscores, dots, and hyphens (a dot separates path segments)."
            )
    for spec in filter_.values():
        _validate_spec(spec)


def _validate_spec(spec: Any) -> None:
    if isinstance(spec, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in spec):
            for op in spec:
                if op not in OPERATORS:
                    raise InvalidFilter(
                        f"unsupported filter operator {op!r}; use one of {' '.join(OPERATORS)}"
                    )
        else:
            for sub in spec.values():
                _validate_spec(sub)
    elif isinstance(spec, list | tuple):
        for sub in spec:
            _validate_spec(sub)


def matches(value: Mapping[str, Any], filter_: Mapping[str, Any] | None) -> bool:
    if not filter_:
        return True
    return all(_match(_lookup(value, k), spec) for k, spec in filter_.items())


def _lookup(value: Mapping[str, Any], key: str) -> Any:
    """The value at ``key``: a top-level key, else a dotted path (``None``: absent)."""
    if key in value or "." not in key:
        return value.get(key)
    node: Any = value
    for part in key.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part, _MISSING)
        if node is _MISSING:
            return None
    return node


def _match(actual: Any, spec: Any) -> bool:
    if isinstance(spec, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in spec):
            return all(_apply(actual, op, operand) for op, operand in spec.items())
        if not isinstance(actual, Mapping):
            return False
        return all(_match(actual.get(k), v) for k, v in spec.items())
    if isinstance(spec, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(spec)
            and all(_match(a, s) for a, s in zip(actual, spec, strict=True))
        )
    return _equal(actual, spec)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _as_instant(x: Any) -> datetime | None:
    if not isinstance(x, datetime) and not (isinstance(x, str) and _ISO.match(x)):
        return None
    try:
        return instant(x, "a filter value", naive="utc")  # naive values are UTC, as stored
    except ChronomemError:
        return None


def _as_number(x: Any) -> float | None:
    if _is_number(x):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return None
    return None


def _comparable(a: Any, b: Any) -> tuple[Any, Any] | None:
    """The two sides in a common orderable form, or ``None`` if they have none."""
    if _is_number(a) or _is_number(b):
        na, nb = _as_number(a), _as_number(b)
        return (na, nb) if na is not None and nb is not None else None
    da, db = _as_instant(a), _as_instant(b)
    if da is not None and db is not None:
        return da, db
    if isinstance(a, str) and isinstance(b, str):
        return a, b
    return None


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    da, db = _as_instant(a), _as_instant(b)
    if da is not None and db is not None:
        return da == db
    return bool(a == b)


def _apply(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return _match(actual, operand)
    if op == "$ne":
        return not _match(actual, operand)
    pair = _comparable(actual, operand)
    if pair is None:
        return False
    a, b = pair
    if op == "$gt":
        return bool(a > b)
    if op == "$gte":
        return bool(a >= b)
    if op == "$lt":
        return bool(a < b)
    if op == "$lte":
        return bool(a <= b)
    raise InvalidFilter(f"unsupported filter operator {op!r}; use one of {' '.join(OPERATORS)}")
