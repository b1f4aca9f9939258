"""A put's value is encoded as ``json.dumps(value, ensure_ascii=False,
separators=(",", ":"))`` would: ``records._dumps_dict`` (the C encoder called
directly) gives the same text, or raises the same error, as ``records.dumps``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronomem import InvalidInput, InvalidType
from langgraph.store.chronomem import records

atoms = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # nan and the infinities too (JSON's extension, allowed)
    | st.text()
    | st.sampled_from([object(), b"x", {1, 2}])  # not JSON: refused
)
keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
values = st.recursive(
    atoms,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=12,
)


def _outcome(fn: Any, value: Any) -> tuple[str, str]:
    try:
        return ("text", fn(value))
    except Exception as exc:  # the same refusal: its type and message
        return (type(exc).__name__, str(exc))


@given(value=st.dictionaries(keys, values, max_size=5))
@settings(max_examples=300, deadline=None)
def test_a_dict_encodes_as_dumps(value: dict[Any, Any]) -> None:
    assert _outcome(records._dumps_dict, value) == _outcome(records.dumps, value)
    reference = _outcome(lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":")), value)
    assert _outcome(records._dumps_dict, value) == reference


def test_a_cycle_is_refused_as_dumps_refuses_it() -> None:
    value: dict[str, Any] = {"a": []}
    value["a"].append(value)
    assert _outcome(records._dumps_dict, value) == _outcome(records.dumps, value)
    with pytest.raises(InvalidType, match="Circular reference"):
        records.encode_value(value)
    # a refusal leaves nothing behind: the next value encodes
    assert records.encode_value({"a": [1]}) == '{"a":[1]}'


def test_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(InvalidInput):
        records.encode_value({"a": "\ud800"})
