"""``Memory.assertion`` in a batch (issue #32): the calls it makes per fact, and
the same refusals.

A batch of facts builds one ``AssertOp`` per fact with ``Memory.assertion``; its
common arguments (non-blank ASCII text, a ``valid_from``, no metadata or source)
pass their checks with few calls. Counted: the calls cProfile sees while 200
assertions are built. Any bad argument is still refused with the same error."""

from __future__ import annotations

import cProfile
import pstats
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from chronomem import InvalidInput, InvalidType, Memory, NaiveDatetime
from chronomem.errors import InvalidInterval, NotFound

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_calls_per_assertion(memory: Memory) -> None:
    prof = cProfile.Profile()
    prof.enable()
    for i in range(200):
        memory.assertion(f"person {i}", "lives_in", f"city {i % 7}", valid_from=T)
    prof.disable()
    per_fact = pstats.Stats(prof).total_calls / 200  # type: ignore[attr-defined]
    # 16 now; 28 before: each text through require_text (a call, isinstance, strip,
    # encodable and isascii), valid_to, metadata and source through calls that return
    # None, {} and (), and exact through bool()
    assert per_fact <= 20, per_fact


BAD: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"subject": 5}, InvalidType, "subject must be a str"),
    ({"predicate": None}, InvalidType, "predicate must be a str"),
    ({"obj": b"x"}, InvalidType, "obj must be a str"),
    ({"subject": "  "}, InvalidInput, "subject must not be empty"),
    ({"obj": ""}, InvalidInput, "obj must not be empty"),
    ({"predicate": "\u3000"}, InvalidInput, "predicate must not be empty"),
    ({"obj": "caf\udce9"}, InvalidInput, "obj contains a lone surrogate"),
    ({"valid_from": datetime(2026, 1, 1)}, NaiveDatetime, "valid_from is a naive"),
    ({"valid_to": "2026"}, InvalidType, "valid_to must be a datetime"),
    ({"valid_from": T, "valid_to": T}, InvalidInterval, "after valid_from"),
    ({"metadata": [1]}, InvalidType, "metadata must be a mapping"),
    ({"metadata": {"x": float("nan")}}, InvalidInput, "JSON-serialisable"),
    ({"source": 3}, InvalidType, "source must be"),
    ({"source": "no such id!"}, NotFound, "no episode id"),
    ({"extractor": ""}, InvalidInput, "extractor must not be empty"),
    ({"valid_for": 5}, InvalidType, "valid_for must be a timedelta"),
    ({"valid_for": timedelta(0)}, InvalidInterval, "valid_for must be positive"),
    ({"cardinality": "several"}, ValueError, "several"),
]


@pytest.mark.parametrize(("bad", "error", "says"), BAD)
def test_bad_arguments_are_refused(
    memory: Memory, bad: dict[str, Any], error: type[Exception], says: str
) -> None:
    args: dict[str, Any] = {"subject": "Ada", "predicate": "lives_in", "obj": "London", **bad}
    with pytest.raises(error, match=says):
        memory.assertion(**args)


def test_good_arguments_make_the_same_op(memory: Memory) -> None:
    op = memory.assertion(
        "Zoë",
        "lives_in",
        "Zürich",
        valid_to=T,
        metadata={"b": 1},
        exact=1,
        extractor="x",  # type: ignore[arg-type]
    )
    assert (op.subject, op.predicate, op.obj, op.valid_to, op.bounded) == (
        "Zoë",
        "lives_in",
        "Zürich",
        op.valid_to,
        True,
    )
    assert op.metadata == {"b": 1} and op.exact is True and op.sources == ()
    plain = memory.assertion("Ada", "lives_in", "London")
    assert plain.metadata == {} and plain.sources == () and plain.valid_from is None
