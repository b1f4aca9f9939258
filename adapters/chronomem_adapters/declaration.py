"""How an adapter class declares the semantics it keeps, as data.

An adapter class carries two class attributes::

    class MyStore(BaseStore):
        SEMANTICS = frozenset({Semantic.CURRENT_VIEW, Semantic.HISTORY})
        AS_OF = TimeKeeping.VIEW

``spec_of(MyStore)`` validates them and returns an ``AdapterSpec``; the
conformance kit and the README table read declarations only through it.
``declare(...)`` is a class decorator that sets both attributes (plus the
optional per-semantic notes) in one place."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chronomem import InvalidInput, InvalidType

from .semantics import TIME_TRAVEL, Semantic, TimeKeeping, UnsupportedSemantics

T = TypeVar("T")


@dataclass(frozen=True)
class AdapterSpec:
    """What one adapter declares: its semantics, how it keeps ``as_of``, and why."""

    name: str
    semantics: frozenset[Semantic]
    as_of: TimeKeeping
    notes: Mapping[Semantic, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.as_of, TimeKeeping):
            raise InvalidType(f"{self.name}: AS_OF must be a TimeKeeping, not {self.as_of!r}")
        bad = [s for s in self.semantics if not isinstance(s, Semantic)]
        if bad:
            raise InvalidType(f"{self.name}: SEMANTICS holds non-Semantic values {bad!r}")
        travel = self.semantics & TIME_TRAVEL
        if travel and self.as_of is TimeKeeping.NONE:
            names = sorted(s.name for s in travel)
            raise InvalidInput(f"{self.name}: declares {names} but AS_OF is NONE")
        if not travel and self.as_of is not TimeKeeping.NONE:
            raise InvalidInput(
                f"{self.name}: AS_OF is {self.as_of.name} but neither VALID_TIME nor "
                "TRANSACTION_TIME is declared"
            )

    def keeps(self, semantic: Semantic) -> bool:
        return semantic in self.semantics

    def require(self, semantic: Semantic, detail: str = "") -> None:
        """Raise ``UnsupportedSemantics`` unless ``semantic`` is declared."""
        if semantic not in self.semantics:
            raise UnsupportedSemantics(semantic, self.name, detail or self.notes.get(semantic, ""))

    @property
    def undeclared(self) -> frozenset[Semantic]:
        return frozenset(Semantic) - self.semantics


def spec_of(adapter: type | object) -> AdapterSpec:
    """The validated declaration of an adapter class (or instance)."""
    cls = adapter if isinstance(adapter, type) else type(adapter)
    semantics = getattr(cls, "SEMANTICS", None)
    as_of = getattr(cls, "AS_OF", None)
    if not isinstance(semantics, frozenset):
        raise InvalidType(f"{cls.__qualname__}.SEMANTICS must be a frozenset of Semantic")
    if as_of is None:
        raise InvalidType(f"{cls.__qualname__}.AS_OF must be a TimeKeeping")
    notes = getattr(cls, "SEMANTICS_NOTES", {}) or {}
    name = getattr(cls, "ADAPTER_NAME", None) or cls.__qualname__
    return AdapterSpec(str(name), semantics, as_of, dict(notes))


def declare(
    semantics: Iterable[Semantic],
    *,
    as_of: TimeKeeping,
    name: str | None = None,
    notes: Mapping[Semantic, str] | None = None,
) -> Callable[[type[T]], type[T]]:
    """Class decorator: set ``SEMANTICS``, ``AS_OF`` (and notes, name) and validate them."""

    def apply(cls: type[T]) -> type[T]:
        attrs: dict[str, Any] = {
            "SEMANTICS": frozenset(semantics),
            "AS_OF": as_of,
            "SEMANTICS_NOTES": dict(notes or {}),
        }
        if name is not None:
            attrs["ADAPTER_NAME"] = name
        for key, value in attrs.items():
            setattr(cls, key, value)
        spec_of(cls)  # fail at import time, not in a test
        return cls

    return apply
