"""A read's query value as the log stores it: its fields by name, instants as
microseconds, states by name (``encode``), and back (``decode``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from ..timeutil import from_us, to_us

if TYPE_CHECKING:
    from ..queries import Query

TIME_ARGS = ("valid_at", "known_at", "as_of", "asked_at")
# arguments that may carry a fact's text: blanked when the read served something erased
TEXT_ARGS = ("query", "subject", "obj", "subject_prefix", "subjects")


def encode(query: Query) -> dict[str, Any]:
    """The query's fields by name, as the log stores them."""
    out: dict[str, Any] = {}
    for f in fields(query):
        key, value = f.name, getattr(query, f.name)
        if key in TIME_ARGS:
            out[key] = None if value is None else to_us(value, key)
        elif key == "states":
            out[key] = None if value is None else sorted(_state_names(value))
        elif isinstance(value, tuple | list):
            out[key] = list(value)
        else:
            out[key] = value
    return out


def _state_names(value: Any) -> list[str]:
    from ..model import parse_states

    return [s.value for s in parse_states(value)]


def decode(args: Mapping[str, Any]) -> dict[str, Any]:
    """Stored arguments with their instants as datetimes (``queries.query_of`` makes
    them a query value again)."""
    out = dict(args)
    for key in TIME_ARGS:
        if out.get(key) is not None:
            out[key] = from_us(out[key])
    return out
