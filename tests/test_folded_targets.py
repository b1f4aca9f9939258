"""A folded assert's target (issue #32): ``Writer._target`` resolves an
``AssertOp`` that is not exact (``Memory.assertion``'s) before any type test of
the other ops. Here, for any names, registry entries and cardinality, that
branch gives the target the general branch gives (an ``AssertOp`` subclass,
which the fast branch does not take): the same slot, subject key, predicate
and object key, and the same refusal of a predicate name too long for its
column. A batch's resolution is counted too: no ``isinstance`` per folded
assert in ``_Found.load``, ``_Found.covered`` and ``_touches``."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import Memory, writer
from chronomem.errors import ChronomemError
from chronomem.ops import AssertOp
from chronomem.predicates import Cardinality, PredicateSpec, Volatility
from chronomem.registry import Registry
from chronomem.scope import Scope

from .conftest import ManualClock


@dataclass(frozen=True)
class _General(AssertOp):
    """An ``AssertOp`` the fast branch (``type(op) is AssertOp``) leaves to the general one."""


_names = st.one_of(
    st.sampled_from(["Ada Lovelace", "lives in", "Lives-In", "ÉCOLE  Normale", "a_b", "x"]),
    st.text(min_size=1, max_size=12),
    st.builds(lambda n: "p" * n, st.integers(250, 260)),
)


def _resolve(op: AssertOp, scope: Scope, index: dict[str, Any]) -> Any:
    w = writer.Writer(Registry())
    try:
        t = w._target(scope, op, index, writer._Found(None, scope))  # type: ignore[arg-type]
    except ChronomemError as exc:
        return type(exc), str(exc)
    t = writer._full(op, t)
    return t.slots, t.subject_key, t.predicate, t.object_key, t.new_slot


@given(
    _names,
    _names,
    _names,
    st.one_of(st.none(), st.sampled_from(list(Cardinality))),
    st.one_of(st.none(), st.sampled_from(list(Cardinality))),
    st.booleans(),
    st.sampled_from([Scope("t"), Scope("t", "u", "a", "s")]),
)
def test_a_folded_asserts_target_is_the_general_ones(
    subject: str,
    predicate: str,
    obj: str,
    cardinality: Cardinality | None,
    registered: Cardinality | None,
    renamed: bool,
    scope: Scope,
) -> None:
    index: dict[str, Any] = {}
    if registered is not None:
        key = writer._pred_key(predicate) if predicate.strip() else "x"
        name = "canonical_name" if renamed else key
        index[key] = PredicateSpec(name, registered, Volatility.SLOW, ())
    args = (subject, predicate, obj, None, None)
    fast = AssertOp(*args, bounded=False, cardinality=cardinality)
    general = _General(*args, bounded=False, cardinality=cardinality)
    try:
        want = _resolve(general, scope, index)
    except Exception as exc:  # a name folding refuses (blank text): both raise it
        with pytest.raises(type(exc)):
            _resolve(fast, scope, index)
        return
    assert _resolve(fast, scope, index) == want


def test_a_batch_of_folded_asserts_takes_no_type_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolving 200 folded asserts (``_Found.load``, ``_target``, ``_Found.covered``,
    ``_touches``) calls ``isinstance`` on none of them (4 per op in ``load``, 3 in
    ``covered``, 3 in ``_target``, 1 in ``_touches`` before)."""
    with Memory(clock=ManualClock()) as m:
        ops = [m.assertion(f"s{i}", "likes", f"o{i}") for i in range(200)]
        scope = Scope("default")
        calls = 0
        real = builtins.isinstance

        def counted(obj: object, cls: Any) -> bool:
            nonlocal calls
            calls += 1
            return real(obj, cls)

        found = writer._Found(None, scope, whole=True)  # type: ignore[arg-type]
        w = writer.Writer(Registry())
        monkeypatch.setattr(writer, "isinstance", counted, raising=False)
        loaded = writer._Found.load(None, scope, ops, whole=True)  # type: ignore[arg-type]
        targets = [w._target(scope, op, {}, found) for op in ops]
        covered = loaded.covered(ops, targets)
        touches = writer._touches(targets)
        monkeypatch.undo()
        assert calls == 0
        assert covered == set() and len(touches) == 200 and set(touches.values()) == {1}
        assert len(m.apply(ops).added) == 200
