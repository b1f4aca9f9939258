"""The conformance kit tested on itself: a small adapter passes it, and the kit
catches an adapter that silently ignores what it does not keep."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem import Memory
from chronomem_adapters import Semantic, UnsupportedSemantics
from chronomem_adapters.conformance import (
    ConformanceTests,
    KitClock,
    NotExpressible,
    check_declared,
    check_undeclared,
)

from .toy_adapter import ToyAdapter, ToyHarness


class TestToyConformance(ConformanceTests):
    """The whole suite against the toy adapter (SQLite only: the kit is under test)."""

    harness_class = ToyHarness

    @pytest.fixture
    def harness(self, kit_clock: KitClock) -> Iterator[ToyHarness]:
        root = Memory(clock=kit_clock)
        yield ToyHarness(root, kit_clock)
        root.close()


@pytest.fixture
def broken() -> Iterator[ToyHarness]:
    clock = KitClock()
    root = Memory(clock=clock)
    yield ToyHarness(root, clock, broken=True)
    root.close()


def test_silently_ignored_as_of_is_caught(broken: ToyHarness) -> None:
    with pytest.raises(AssertionError, match="instead of raising UnsupportedSemantics"):
        check_undeclared(broken, Semantic.TRANSACTION_TIME)


def test_silently_ignored_provenance_is_caught(broken: ToyHarness) -> None:
    with pytest.raises(AssertionError, match="does not declare PROVENANCE"):
        check_undeclared(broken, Semantic.PROVENANCE)


def test_undeclared_and_inexpressible_is_skipped(broken: ToyHarness) -> None:
    with pytest.raises(pytest.skip.Exception, match="not expressible"):
        check_undeclared(broken, Semantic.TRANSCRIPT)


def test_refusal_must_name_the_semantic_asked_for() -> None:
    clock = KitClock()
    root = Memory(clock=clock)
    h = ToyHarness(root, clock)
    # the toy refuses as_of as TRANSACTION_TIME; asked for VALID_TIME that is the wrong name
    h.read_at = lambda *a, **k: (_ for _ in ()).throw(UnsupportedSemantics(Semantic.ERASURE))  # type: ignore[method-assign]
    with pytest.raises(AssertionError, match="raised for ERASURE"):
        check_undeclared(h, Semantic.VALID_TIME)
    root.close()


def test_a_declared_semantic_that_does_not_hold_fails() -> None:
    class KeepsBoth(ToyHarness):
        def read(self, entity, attribute):
            return [e.value for e in self.history(entity, attribute)]

    clock = KitClock()
    root = Memory(clock=clock)
    with pytest.raises(AssertionError, match="must end the old one"):
        check_declared(KeepsBoth(root, clock), Semantic.SUPERSESSION)
    root.close()


def test_declared_semantic_needing_an_inexpressible_request_fails() -> None:
    class CannotEnd(ToyHarness):
        def end(self, entity, attribute):
            raise NotExpressible("no end")

    clock = KitClock()
    root = Memory(clock=clock)
    with pytest.raises(AssertionError, match="needs a way to end"):
        check_declared(CannotEnd(root, clock), Semantic.CURRENT_VIEW)
    root.close()


def test_toy_declaration() -> None:
    declared = ToyAdapter.SEMANTICS  # type: ignore[attr-defined]
    assert declared == {Semantic.CURRENT_VIEW, Semantic.SUPERSESSION, Semantic.HISTORY}


_KIT_CASES = [
    *((f"test_{s.name.lower()}", {}) for s in Semantic),
    *(("test_undeclared_is_refused", {"semantic": s}) for s in Semantic),
    *(
        ("test_sibling_isolated", {"kind": k, "name": "other"})
        for k in ("user", "tenant", "session")
    ),
]


@pytest.mark.parametrize(("test", "params"), _KIT_CASES, ids=[f"{t}-{p}" for t, p in _KIT_CASES])
def test_preskip_agrees_with_running_the_check(test: str, params: dict[str, object]) -> None:
    """A test skipped before its store is built would have skipped anyway, and a
    test the preskip lets through does not skip for a reason it could have known."""
    from chronomem_adapters.conformance.checks import (
        check_sibling_isolated,
        preskip_reason,
    )

    clock = KitClock()
    root = Memory(clock=clock)
    h = ToyHarness(root, clock)
    reason = preskip_reason(ToyHarness, test, params)
    if test == "test_undeclared_is_refused":
        run = lambda: check_undeclared(h, params["semantic"])  # noqa: E731
    elif test == "test_sibling_isolated":
        run = lambda: check_sibling_isolated(h, str(params["kind"]), "other")  # noqa: E731
    else:
        run = lambda: check_declared(h, Semantic[test[5:].upper()])  # noqa: E731
    try:
        run()
        skipped = None
    except pytest.skip.Exception as exc:
        skipped = str(exc.msg)
    finally:
        root.close()
    if reason is not None:
        assert skipped == reason
    elif skipped is not None:
        assert "not expressible" in skipped
