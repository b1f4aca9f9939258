"""The retriever's read options, validated the same way at construction and per call.

A LangChain ``invoke(q, as_of=…)`` keyword, a ``.bind(k=…)``, a
``configurable_fields`` value from a serialised config and a constructor
argument all pass through these functions, so a value that one path refuses
every path refuses, with the same error. Instants use the shared
``chronomem_adapters.timeselect`` rules (aware datetimes or ISO-8601 strings
with an offset; ``as_of`` never combined with the other two)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from chronomem import InvalidInput, InvalidType
from chronomem.model import parse_states
from chronomem_adapters.limits import MAX_K
from chronomem_adapters.timeselect import TimeSelection, select_time

# The per-call keywords a retriever call accepts (besides LangChain's own).
READ_OPTIONS = ("k", "valid_at", "known_at", "as_of", "states", "include_episodes", "min_score")
# Keywords LangChain's ``invoke`` itself reads and then forwards: accepted, ignored here.
FRAMEWORK_KEYWORDS = frozenset({"verbose"})


def check_k(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidType(f"k must be an int, not {type(value).__name__}")
    if value < 0:
        raise InvalidInput(f"k must be >= 0, not {value}")
    if value > MAX_K:
        raise InvalidInput(f"k must be <= {MAX_K} (chronomem_adapters.limits.MAX_K), not {value}")
    return value


def check_states(value: object) -> tuple[str, ...] | None:
    """``None`` (live only), a state name, or a collection of names."""
    if value is None:
        return None
    return tuple(sorted(s.value for s in parse_states(value)))  # type: ignore[arg-type]


def check_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidType(f"{name} must be a bool, not {type(value).__name__}")
    return value


def check_score(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise InvalidType(f"min_score must be a number, not {value!r}")
    return float(value)


@dataclass(frozen=True)
class ReadOptions:
    """Everything one retriever read needs, validated."""

    k: int = 4
    time: TimeSelection = field(default_factory=TimeSelection)
    states: tuple[str, ...] | None = None
    include_episodes: bool = False
    min_score: float = 0.0

    def override(self, owner: str, call: Mapping[str, Any]) -> ReadOptions:
        """These options with a call's keywords applied; unknown keywords are a ``TypeError``."""
        unknown = sorted(set(call) - set(READ_OPTIONS) - FRAMEWORK_KEYWORDS)
        if unknown:
            raise TypeError(
                f"{owner} got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
                f"it accepts {', '.join(READ_OPTIONS)}"
            )
        out = self
        if any(name in call for name in ("valid_at", "known_at", "as_of")):
            chosen = select_time(call.get("valid_at"), call.get("known_at"), call.get("as_of"))
            out = replace(out, time=out.time.override(chosen))
        if "k" in call:
            out = replace(out, k=check_k(call["k"]))
        if "states" in call:
            out = replace(out, states=check_states(call["states"]))
        if "include_episodes" in call:
            out = replace(
                out, include_episodes=check_bool(call["include_episodes"], "include_episodes")
            )
        if "min_score" in call:
            out = replace(out, min_score=check_score(call["min_score"]))
        return out

    def search_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``Memory.search``."""
        return {
            "k": self.k,
            "states": self.states,
            "include_episodes": self.include_episodes,
            "min_score": self.min_score,
            **self.time.kwargs(),
        }
