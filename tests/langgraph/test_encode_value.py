"""A put's value that JSON cannot hold is refused: a cycle is ``InvalidType`` naming
the circular reference, and the encoder is left as it was (the next value encodes)."""

from __future__ import annotations

from typing import Any

import pytest

from chronomem import InvalidType
from langgraph.store.chronomem import records


def test_a_cycle_is_refused() -> None:
    value: dict[str, Any] = {"a": []}
    value["a"].append(value)
    with pytest.raises(InvalidType, match="Circular reference"):
        records.encode_value(value)
    # a refusal leaves nothing behind: the next value encodes
    assert records.encode_value({"a": [1]}) == '{"a":[1]}'
