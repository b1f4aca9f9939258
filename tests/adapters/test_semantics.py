"""The semantics vocabulary and declarations."""

from __future__ import annotations

import pytest

from chronomem import ChronomemError, InvalidInput, InvalidType
from chronomem_adapters import (
    MEANINGS,
    AdapterSpec,
    Semantic,
    TimeKeeping,
    UnsupportedSemantics,
    declare,
    spec_of,
)


def test_ten_semantics_of_the_design() -> None:
    assert [s.name for s in Semantic] == [
        "CURRENT_VIEW",
        "SUPERSESSION",
        "VALID_TIME",
        "TRANSACTION_TIME",
        "HISTORY",
        "RETRACTION",
        "ERASURE",
        "PROVENANCE",
        "TIME_IN_OUTPUT",
        "TRANSCRIPT",
    ]
    assert set(MEANINGS) == set(Semantic)
    assert Semantic.HISTORY.meaning == "ended values are reachable, labelled as past"


def test_unsupported_semantics_is_a_chronomem_error() -> None:
    err = UnsupportedSemantics(Semantic.PROVENANCE, "X store", "items carry no sources")
    assert isinstance(err, ChronomemError) and isinstance(err, NotImplementedError)
    assert err.semantic is Semantic.PROVENANCE
    assert "X store does not keep PROVENANCE" in str(err) and "items carry no sources" in str(err)
    assert UnsupportedSemantics("history").semantic is Semantic.HISTORY


def test_declare_sets_data_and_validates() -> None:
    @declare({Semantic.CURRENT_VIEW, Semantic.VALID_TIME}, as_of=TimeKeeping.PER_CALL, name="Mine")
    class Mine:
        pass

    spec = spec_of(Mine)
    assert spec == AdapterSpec("Mine", frozenset({Semantic.CURRENT_VIEW, Semantic.VALID_TIME}),
                               TimeKeeping.PER_CALL, {})  # fmt: skip
    assert spec_of(Mine()) == spec
    assert spec.undeclared == frozenset(Semantic) - spec.semantics
    spec.require(Semantic.VALID_TIME)
    with pytest.raises(UnsupportedSemantics, match="Mine does not keep ERASURE"):
        spec.require(Semantic.ERASURE)


def test_time_travel_needs_a_time_keeping() -> None:
    with pytest.raises(InvalidInput, match="AS_OF is NONE"):
        AdapterSpec("A", frozenset({Semantic.TRANSACTION_TIME}), TimeKeeping.NONE)
    with pytest.raises(InvalidInput, match="neither VALID_TIME nor"):
        AdapterSpec("A", frozenset({Semantic.HISTORY}), TimeKeeping.VIEW)


def test_malformed_declarations_are_refused() -> None:
    class NoDecl:
        pass

    with pytest.raises(InvalidType):
        spec_of(NoDecl)
    with pytest.raises(InvalidType):
        AdapterSpec("A", frozenset({"history"}), TimeKeeping.NONE)  # type: ignore[arg-type]
    with pytest.raises(InvalidType):
        AdapterSpec("A", frozenset(), "none")  # type: ignore[arg-type]
