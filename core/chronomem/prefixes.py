"""Which subject prefixes hold a live fact (``Memory.live_prefixes``): one
existence probe per prefix, each an index seek on the subject head
(``cm_versions_subject_head``) that stops at the first live version it meets.

A caller keeping its own list of prefixes (an adapter's index of the
namespaces it wrote) asks which of them still hold anything at a read's
instants, at a cost bounded by the number of prefixes asked, not by the
number of facts under them. The probes of one call run as statements of
``CHUNK`` prefixes at most, each a single row of booleans, prepared once per
shape (scope levels, as-of or not, length, kind of head range), all in one
read transaction. When a prefix's head range holds exactly the keys starting
with it (a prefix of at most ``SUBJECT_HEAD`` characters whose range bound did
not have to drop characters), the range is the whole test: the statement
carries no byte comparison for it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    Select,
    bindparam,
    exists,
    literal,
    select,
    type_coerce,
)

from . import reads
from .engine import Engine
from .errors import InvalidType
from .model import State
from .prepared import Prepared
from .schema import SUBJECT_HEAD, SubjectHead, versions
from .scope import Scope

CHUNK = 64  # prefixes probed by one statement at most
_LIVE = frozenset({State.LIVE})


@functools.lru_cache(maxsize=256)
def _probe(levels: tuple[bool, bool, bool], as_of: bool, n: int, kind: int) -> Prepared:
    """``SELECT EXISTS(...) AS e0, …`` for ``n`` prefixes whose head ranges are of
    ``kind`` (0 none, 1 lower bound only, 2 both: ``reads.subject_range``; 3 both,
    and exactly the keys with the prefix: no byte comparison)."""
    c = versions.c
    valid_at = bindparam("valid_at", type_=BigInteger())
    known_at = bindparam("known_at", type_=BigInteger()) if as_of else None
    head = SubjectHead(c.subject_key)
    cols: list[ColumnElement[Any]] = []
    for i in range(n):
        conds: list[ColumnElement[bool]] = [reads.scope_bound(versions, levels)]
        if kind < 3:
            conds.append(reads.prefix_bound(c.subject_key, f"p{i}"))
        if kind >= 1:
            conds.append(head >= bindparam(f"p{i}_from"))
        if kind >= 2:
            conds.append(head < bindparam(f"p{i}_to"))
        conds.append(reads.temporal(_LIVE, valid_at, known_at))
        probe = exists(select(literal(1)).select_from(versions).where(*conds))
        cols.append(type_coerce(probe, Integer()).label(f"e{i}"))  # 0/1: no result processor
    stmt: Select[Any] = select(*cols)
    return Prepared(stmt)


def _kind(prefix: str) -> tuple[int, tuple[str, str | None] | None]:
    found = reads.subject_range(prefix)
    if found is None:
        return 0, None
    low, high = found
    if high is None:
        return 1, found
    # ``[prefix, prefix with its last character the next one)`` holds exactly the
    # heads (so the keys) starting with the prefix, in code point order
    exact = len(prefix) <= SUBJECT_HEAD and low == prefix and len(high) == len(prefix)
    return (3 if exact else 2), found


def live_prefixes(
    engine: Engine,
    scope: Scope,
    valid_at: int,
    known_at: int | None,
    prefixes: Sequence[str],
) -> list[str]:
    """The prefixes (non-empty, as given, in their order, each once) under which a
    fact visible in ``scope`` is live at ``valid_at`` as believed at ``known_at``."""
    if isinstance(prefixes, str):
        raise InvalidType("prefixes must be a sequence of str, not a str")
    wanted = list(dict.fromkeys(prefixes))
    for p in wanted:
        if not isinstance(p, str) or not p:
            raise InvalidType("each prefix must be a non-empty str")
    if not wanted:
        return []
    levels, base = reads.scope_params(scope)
    base.update(valid_at=valid_at, known_at=known_at)
    by_kind: dict[int, list[tuple[str, tuple[str, str | None] | None]]] = {}
    for p in wanted:
        kind, bounds = _kind(p)
        by_kind.setdefault(kind, []).append((p, bounds))
    runs: list[tuple[Prepared, dict[str, Any], list[str]]] = []
    for kind, group in sorted(by_kind.items()):
        for at in range(0, len(group), CHUNK):
            part = group[at : at + CHUNK]
            params = dict(base)
            for i, (p, bounds) in enumerate(part):
                if kind < 3:
                    params.update(reads.prefix_params(p, f"p{i}"))
                if bounds is not None:
                    params[f"p{i}_from"] = bounds[0]
                    if bounds[1] is not None:
                        params[f"p{i}_to"] = bounds[1]
            probe = _probe(levels, known_at is not None, len(part), kind)
            runs.append((probe, params, [p for p, _ in part]))
    live: set[str] = set()
    backend = engine.backend
    with backend.point_read() if len(runs) == 1 else backend.read() as conn:
        for prepared, params, names in runs:
            (row,) = prepared.rows(conn, params)
            live.update(p for p, hit in zip(names, row, strict=False) if hit)
    return [p for p in wanted if p in live]
