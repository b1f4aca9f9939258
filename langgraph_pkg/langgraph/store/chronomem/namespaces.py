"""``list_namespaces``: LangGraph's match conditions over the namespaces in use
(validated here; read from the namespace index, ``namespace_index.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import ListNamespacesOp, MatchCondition

from chronomem import InvalidInput, InvalidType

WILDCARD = "*"


def validate(op: ListNamespacesOp) -> None:
    for cond in op.match_conditions or ():
        if cond.match_type not in ("prefix", "suffix"):
            raise InvalidInput(f"unsupported match type {cond.match_type!r}; use prefix or suffix")
    if op.max_depth is not None and (
        not isinstance(op.max_depth, int) or isinstance(op.max_depth, bool) or op.max_depth < 1
    ):
        raise InvalidInput(f"max_depth must be a positive int or None, got {op.max_depth!r}")
    check_page(op.limit, op.offset)


def check_page(limit: object, offset: object) -> None:
    for name, v in (("limit", limit), ("offset", offset)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise InvalidType(f"{name} must be an int, not {type(v).__name__}")
        if v < 0:
            raise InvalidInput(f"{name} must be >= 0, got {v}")


def fixed_prefix(conditions: Sequence[MatchCondition] | None) -> tuple[str, ...]:
    """The longest wildcard-free leading labels of the prefix conditions (pushed to SQL)."""
    best: tuple[str, ...] = ()
    for cond in conditions or ():
        if cond.match_type != "prefix":
            continue
        lead: list[str] = []
        for label in cond.path:
            if label == WILDCARD:
                break
            lead.append(label)
        if len(lead) > len(best):
            best = tuple(lead)
    return best


def _matches(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(ns) < len(path):
        return False
    if cond.match_type == "prefix":
        pairs = zip(ns, path, strict=False)
    else:
        pairs = zip(reversed(ns), reversed(path), strict=False)
    return all(p == WILDCARD or n == p for n, p in pairs)


def matches_all(conditions: Sequence[MatchCondition] | None, ns: tuple[str, ...]) -> bool:
    """Whether ``ns`` meets every condition (LangGraph: all of them must hold)."""
    return all(_matches(c, ns) for c in conditions or ())
