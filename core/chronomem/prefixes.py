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

__all__ = ["Arm", "Entries"]  # what an adapter may import: the argument of Memory.live_entries

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    FunctionElement,
    Integer,
    Select,
    Table,
    Text,
    bindparam,
    exists,
    func,
    literal,
    or_,
    select,
    type_coerce,
    union_all,
)
from sqlalchemy.ext.compiler import compiles

from . import reads
from .engine import Engine
from .errors import InvalidType
from .model import State
from .prepared import Prepared
from .schema import SUBJECT_HEAD, SubjectHead, entry_term, versions
from .scope import Scope
from .timeutil import MIN_US

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


def any_live(engine: Engine, scope: Scope, valid_at: int, known_at: int | None) -> bool:
    """Whether any fact visible in ``scope`` is live at ``valid_at`` as believed at
    ``known_at``: one statement that stops at the first such version (``LIMIT 1``),
    whatever the store holds, compiled once per shape (``_any_live``)."""
    levels, params = reads.scope_params(scope)
    params.update(valid_at=valid_at, known_at=known_at)
    with engine.backend.point_read() as conn:
        return bool(_any_live(levels, known_at is not None).rows(conn, params))


@functools.lru_cache(maxsize=16)
def _any_live(levels: tuple[bool, bool, bool], as_of: bool) -> Prepared:
    valid_at = bindparam("valid_at", type_=BigInteger())
    known_at = bindparam("known_at", type_=BigInteger()) if as_of else None
    return Prepared(
        select(literal(1))
        .select_from(versions)
        .where(
            reads.scope_bound(versions, levels),
            reads.temporal((State.LIVE,), valid_at, known_at),
        )
        .limit(1)
    )


# --- index entries: a page of an adapter's own index, each entry probed --------
#
# An adapter may keep an index of the subject prefixes it wrote under: *entries*,
# facts written ``exact`` (valid at every instant) in subject ranges of their own,
# each range's subjects a fixed head followed by a *key* that sorts as the
# adapter wants its listing sorted and is a sequence of labels each ended by
# ``sep`` (so a key's depth is its number of ``sep``), and whose object is a
# subject prefix (ending with ``end``) that the entry stands for. ``live_entries``
# reads a page of keys in code point order from one or several ranges (*arms*),
# keeping the entries whose prefix (the object, and an arm's ``extra`` after it)
# holds a live fact at the read's instants: one correlated index probe per entry
# met, which stops at the first live fact. The page's LIMIT and OFFSET are in the
# statement (several arms: each arm stops at ``offset + limit`` keys, the merge
# pages them), so the rows read are bounded by the page, not by the number of
# entries or of facts.


class _CodePoints(FunctionElement[str]):
    """A text column compared in code point order (UTF-8 byte order) on every dialect."""

    name = "cm_code_points"
    inherit_cache = True
    type = Text()


@compiles(_CodePoints)
def _code_points_sqlite(element: _CodePoints, compiler: Any, **kw: Any) -> str:
    (column,) = (compiler.process(c, **kw) for c in element.clauses)
    return column  # BINARY collation: byte order


@compiles(_CodePoints, "postgresql")
def _code_points_pg(element: _CodePoints, compiler: Any, **kw: Any) -> str:
    (column,) = (compiler.process(c, **kw) for c in element.clauses)
    return f'({column} COLLATE "C")'


@dataclass(frozen=True)
class Arm:
    """One range of entries: the subjects starting with ``head`` and then ``within``
    (the key's leading part), at ``predicate``; the listed key is the subject after
    ``head``. ``min_depth``/``max_depth`` bound the key's depth, ``suffix`` its end;
    ``extra`` is appended to each entry's object to give the prefix probed ("" or
    text ending with the entries' ``end``)."""

    head: str
    predicate: str
    within: str = ""
    min_depth: int | None = None
    max_depth: int | None = None
    suffix: str | None = None
    extra: str = ""


@dataclass(frozen=True)
class Entries:
    """Which entries ``live_entries`` reads: its arms (whose keys are disjoint), the
    separator ending each label of a key, and the last character of every object
    (not U+10FFFF)."""

    arms: tuple[Arm, ...]
    sep: str
    end: str


def _arm_select(
    levels: tuple[bool, bool, bool],
    as_of: bool,
    i: int,
    kind: int,
    depth: tuple[bool, bool],
    suffix: bool,
    extra: bool,
    exact_order: bool,
) -> Select[Any]:
    """Arm ``i``'s keys, in order (bind parameters suffixed ``_{i}``; ``kind`` of its
    range as in ``_probe``): by head, the index's order, and (``exact_order``) by
    the whole subject among subjects with the same head. ``extra``: the arm probes
    its objects with text appended (else the object as stored, no concatenation)."""
    e = cast(Table, versions.alias(f"entry{i}"))
    dup = cast(Table, versions.alias(f"dup{i}"))
    c = versions.c
    valid_at = bindparam("valid_at", type_=BigInteger())
    known_at = bindparam("known_at", type_=BigInteger()) if as_of else None
    key_type = e.c.subject_key.type
    head = SubjectHead(e.c.subject_key)
    conds: list[ColumnElement[bool]] = [reads.scope_bound(e, levels)]
    if kind < 3:
        conds.append(reads.prefix_bound(e.c.subject_key, f"p_{i}"))
    if kind >= 1:
        conds.append(head >= bindparam(f"p_{i}_from"))
    if kind >= 2:
        conds.append(head < bindparam(f"p_{i}_to"))
    conds.append(e.c.predicate == type_coerce(bindparam(f"pred_{i}"), e.c.predicate.type))
    # an entry is current and valid at every instant (asserted so): valid from the
    # start of the calendar as the partial index of entries says it (``entry_term``:
    # SQLite then walks that index, which holds every column read here)
    conds += [
        reads.known(None, e),
        entry_term(e.c.valid_from),
        or_(e.c.valid_to.is_(None), e.c.valid_to > MIN_US),
    ]
    if depth[0] or depth[1]:
        sep = type_coerce(bindparam("sep"), key_type)
        n = func.length(e.c.subject_key) - func.length(func.replace(e.c.subject_key, sep, ""))
        if depth[0]:
            conds.append(n >= bindparam(f"min_{i}", type_=Integer()))
        if depth[1]:
            conds.append(n <= bindparam(f"max_{i}", type_=Integer()))
    if suffix:
        tail = type_coerce(bindparam(f"suffix_{i}"), key_type)
        start = func.length(e.c.subject_key) - func.length(tail) + 1
        conds.append(func.substr(e.c.subject_key, start) == tail)
    if any(levels):
        # one entry per subject and predicate: the first of the visible scopes' copies
        # (a scope holds one: it is a slot's current version, valid at every instant)
        conds.append(
            ~exists(
                select(literal(1))
                .select_from(dup)
                .where(
                    reads.scope_bound(dup, levels),
                    dup.c.subject_hash == e.c.subject_hash,
                    dup.c.predicate == e.c.predicate,
                    dup.c.subject_key == e.c.subject_key,
                    reads.known(None, dup),
                    reads.in_states(_LIVE, MIN_US, dup),
                    # an expression: no planner walks the primary key for it
                    dup.c.id.concat("") < e.c.id,
                )
            )
        )
    # the probed prefix holds a live fact: its head range, and (for a prefix longer
    # than a head) the key's own start
    probed: ColumnElement[str] = e.c.object_key
    if extra:
        probed = probed.concat(type_coerce(bindparam(f"extra_{i}"), key_type))
    item_head = SubjectHead(c.subject_key)
    bump = type_coerce(bindparam("bump"), key_type)
    # (a scalar subquery, not EXISTS: a planner estimates a semi-join's selectivity
    # low and then probes every entry in range and sorts them, where this filter
    # leaves it the walk in head order that stops once the page is full)
    probe = (
        select(literal(1))
        .select_from(versions)
        .where(
            reads.scope_bound(versions, levels),
            item_head >= func.substr(probed, 1, SUBJECT_HEAD),
            item_head < func.substr(probed, 1, func.length(probed) - 1).concat(bump),
            or_(
                func.length(probed) <= SUBJECT_HEAD,
                func.substr(c.subject_key, 1, func.length(probed)) == probed,
            ),
            reads.temporal(_LIVE, valid_at, known_at),
        )
        .limit(1)
    )
    conds.append(probe.scalar_subquery().is_not(None))
    skip = bindparam(f"skip_{i}", type_=Integer())
    stmt = (
        select(type_coerce(func.substr(e.c.subject_key, skip), key_type).label("k"))
        .where(*conds)
        .order_by(head)
    )
    return stmt.order_by(_CodePoints(e.c.subject_key)) if exact_order else stmt


@functools.lru_cache(maxsize=128)
def _entries_stmt(
    levels: tuple[bool, bool, bool],
    as_of: bool,
    arms: tuple[tuple[int, tuple[bool, bool], bool, bool], ...],
    exact_order: bool,
) -> Prepared:
    """The page statement of one shape (per arm: its range's kind, whether its depth
    is bounded below / above, whether it has a suffix, whether it has an ``extra``;
    whether one arm's subjects are ordered beyond their heads, as several arms'
    always are)."""
    limit = bindparam("page_limit", type_=BigInteger())
    offset = bindparam("page_offset", type_=BigInteger())
    exact_order = exact_order or len(arms) > 1
    selects = [_arm_select(levels, as_of, i, *arm, exact_order) for i, arm in enumerate(arms)]
    if len(selects) == 1:
        return Prepared(selects[0].limit(limit).offset(offset))
    each = bindparam("arm_limit", type_=BigInteger())
    parts = [select(s.limit(each).subquery(f"arm{i}").c.k) for i, s in enumerate(selects)]
    merged = union_all(*parts).subquery("merged")
    stmt = select(merged.c.k).order_by(_CodePoints(merged.c.k)).limit(limit).offset(offset)
    return Prepared(stmt)


def live_entries(
    engine: Engine,
    scope: Scope,
    valid_at: int,
    known_at: int | None,
    entries: Entries,
    limit: int,
    offset: int = 0,
) -> list[str]:
    """The keys of the ``offset``-th to ``offset + limit``-th entries (in code point
    order, each once) of ``entries``'s arms whose probed prefix holds a fact of
    ``scope`` live at ``valid_at`` as believed at ``known_at``: one statement (see
    the section's comment)."""
    if limit <= 0 or not entries.arms:
        return []
    levels, params = reads.scope_params(scope)
    params.update(
        valid_at=valid_at,
        known_at=known_at,
        sep=entries.sep,
        bump=chr(ord(entries.end) + 1),
        page_limit=limit,
        page_offset=offset,
        arm_limit=offset + limit,
    )
    shape: list[tuple[int, tuple[bool, bool], bool, bool]] = []
    head = entries.arms[0].head
    for i, arm in enumerate(entries.arms):
        kind, bounds = _kind(arm.head + arm.within)
        if kind < 3:
            params.update(reads.prefix_params(arm.head + arm.within, f"p_{i}"))
        if bounds is not None:
            params[f"p_{i}_from"] = bounds[0]
            if bounds[1] is not None:
                params[f"p_{i}_to"] = bounds[1]
        params[f"pred_{i}"] = arm.predicate
        if arm.extra:
            params[f"extra_{i}"] = arm.extra
        params[f"skip_{i}"] = len(arm.head) + 1  # SQL counts characters from 1
        if arm.min_depth is not None:
            params[f"min_{i}"] = arm.min_depth
        if arm.max_depth is not None:
            params[f"max_{i}"] = arm.max_depth
        if arm.suffix is not None:
            params[f"suffix_{i}"] = arm.suffix
        depth = (arm.min_depth is not None, arm.max_depth is not None)
        shape.append((kind, depth, arm.suffix is not None, bool(arm.extra)))
    as_of = known_at is not None

    def page(exact_order: bool) -> list[str]:
        stmt = _entries_stmt(levels, as_of, tuple(shape), exact_order)
        with engine.backend.walk_read() as conn:
            return [row[0] for row in stmt.rows(conn, params)]

    keys = page(False)
    # a subject as long as a head (stored escaped, PostgreSQL's may be twice as long):
    # those sharing a head may be out of order, or the page cut among them (then the
    # page holds one of them): read it again in full order
    if len(shape) == 1 and keys and 2 * (len(head) + max(map(len, keys))) >= SUBJECT_HEAD:
        keys = page(True)
    return keys
