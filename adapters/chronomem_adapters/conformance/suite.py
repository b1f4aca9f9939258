"""The conformance suite as pytest classes an adapter package subclasses.

::

    from chronomem_adapters.conformance import ConformanceTests

    class TestMyAdapter(ConformanceTests):
        @pytest.fixture
        def harness(self, kit_clock):
            return MyHarness(MyAdapter(Memory(clock=kit_clock)), kit_clock)

Every semantic the adapter declares runs its tests; every semantic it does
not declare is asked for and must raise ``UnsupportedSemantics``; the
isolation tests run for every adapter."""

from __future__ import annotations

import pytest

from ..declaration import spec_of
from ..semantics import Semantic
from .checks import (
    SIBLING_NAMES,
    check_declared,
    check_prefix_not_widened,
    check_sibling_isolated,
    check_undeclared,
    preskip_reason,
)
from .clock import KitClock
from .harness import SIBLING_KINDS, Harness

_SEMANTICS = list(Semantic)
_IDS = [s.name for s in Semantic]


class DeclarationTests:
    """The adapter's declaration is well-formed data.

    A subclass may name its harness class (``harness_class = MyHarness``): tests
    that the harness's ``adapter`` and ``siblings`` already say will skip are
    then skipped before the ``harness`` fixture builds a store."""

    harness_class: type | None = None

    @pytest.fixture(autouse=True)
    def _kit_preskip(self, request: pytest.FixtureRequest) -> None:
        if self.harness_class is None:
            return
        callspec = getattr(request.node, "callspec", None)
        params = dict(callspec.params) if callspec is not None else {}
        name = getattr(request.node, "originalname", request.node.name)
        reason = preskip_reason(self.harness_class, name, params)
        if reason is not None:
            pytest.skip(reason)

    @pytest.fixture
    def kit_clock(self) -> KitClock:
        return KitClock()

    def test_declaration_is_valid(self, harness: Harness) -> None:
        spec = spec_of(harness.adapter)
        assert spec.semantics <= frozenset(Semantic)
        assert isinstance(harness, Harness)


class SemanticsTests(DeclarationTests):
    """One test per semantic; a semantic the adapter does not declare is skipped."""

    def test_current_view(self, harness: Harness) -> None:
        check_declared(harness, Semantic.CURRENT_VIEW)

    def test_supersession(self, harness: Harness) -> None:
        check_declared(harness, Semantic.SUPERSESSION)

    def test_valid_time(self, harness: Harness) -> None:
        check_declared(harness, Semantic.VALID_TIME)

    def test_transaction_time(self, harness: Harness) -> None:
        check_declared(harness, Semantic.TRANSACTION_TIME)

    def test_history(self, harness: Harness) -> None:
        check_declared(harness, Semantic.HISTORY)

    def test_retraction(self, harness: Harness) -> None:
        check_declared(harness, Semantic.RETRACTION)

    def test_erasure(self, harness: Harness) -> None:
        check_declared(harness, Semantic.ERASURE)

    def test_provenance(self, harness: Harness) -> None:
        check_declared(harness, Semantic.PROVENANCE)

    def test_time_in_output(self, harness: Harness) -> None:
        check_declared(harness, Semantic.TIME_IN_OUTPUT)

    def test_transcript(self, harness: Harness) -> None:
        check_declared(harness, Semantic.TRANSCRIPT)


class UndeclaredTests(DeclarationTests):
    """Asking for an undeclared semantic raises ``UnsupportedSemantics``."""

    @pytest.mark.parametrize("semantic", _SEMANTICS, ids=_IDS)
    def test_undeclared_is_refused(self, harness: Harness, semantic: Semantic) -> None:
        check_undeclared(harness, semantic)


class IsolationTests(DeclarationTests):
    """Siblings never see each other's data; special characters never widen a prefix."""

    @pytest.mark.parametrize("name", SIBLING_NAMES)
    @pytest.mark.parametrize("kind", SIBLING_KINDS)
    def test_sibling_isolated(self, harness: Harness, kind: str, name: str) -> None:
        check_sibling_isolated(harness, kind, name)

    def test_prefix_not_widened(self, harness: Harness) -> None:
        check_prefix_not_widened(harness)


class ConformanceTests(SemanticsTests, UndeclaredTests, IsolationTests):
    """The whole suite. Subclass it and provide a ``harness`` fixture."""
