"""``AssertOp``'s own ``__init__`` (``object.__setattr__`` looked up once, for
speed) makes the op the generated frozen-dataclass ``__init__`` makes: the same
fields in the same order, a new metadata dict per op, ``valid_for`` cut to
``FOREVER_US``, positional and keyword arguments alike; the op stays frozen."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem.ops import AssertOp
from chronomem.predicates import Cardinality
from chronomem.timeutil import FOREVER_US

# the generated ``__init__`` (and ``__post_init__``) over AssertOp's fields
_Generated: Any = dataclasses.make_dataclass(
    "_Generated",
    [(f.name, f.type, f) for f in dataclasses.fields(AssertOp)],
    frozen=True,
    namespace={"__post_init__": AssertOp.__post_init__},
)

_maybe_int = st.one_of(st.none(), st.integers(-(2**63), 2**70), st.booleans())
_maybe_text = st.one_of(st.none(), st.text(max_size=5))


@given(
    st.text(max_size=5),
    st.text(max_size=5),
    st.text(max_size=5),
    _maybe_int,
    _maybe_int,
    st.booleans(),
    st.fixed_dictionaries(
        {},
        optional={
            "metadata": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
            "sources": st.lists(st.text(max_size=3), max_size=2).map(tuple),
            "extractor": _maybe_text,
            "exact": st.booleans(),
            "cardinality": st.one_of(st.none(), st.sampled_from(Cardinality)),
            "index_text": _maybe_text,
            "valid_for": _maybe_int,
        },
    ),
)
def test_init_is_the_generated_one(
    s: str, p: str, o: str, vf: Any, vt: Any, bounded: bool, kw: dict[str, Any]
) -> None:
    ours = AssertOp(s, p, o, vf, vt, bounded, **kw)
    ref = _Generated(s, p, o, vf, vt, bounded, **kw)
    assert list(vars(ours).items()) == list(vars(ref).items())
    assert ours == dataclasses.replace(ours)
    assert dataclasses.replace(ours, obj="x").obj == "x"
    by_name = AssertOp(
        subject=s, predicate=p, obj=o, valid_from=vf, valid_to=vt, bounded=bounded, **kw
    )
    assert by_name == ours


def test_defaults_and_frozen() -> None:
    a, b = AssertOp("a", "b", "c", None, None, False), AssertOp("a", "b", "c", None, None, False)
    assert a == b and a.metadata == {} and a.metadata is not b.metadata
    assert AssertOp("a", "b", "c", None, None, False, valid_for=FOREVER_US + 1).valid_for == (
        FOREVER_US
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.obj = "d"  # type: ignore[misc]
