"""The namespace index: what ``list_namespaces`` reads instead of the items.

Every namespace an item was ever put in has one *entry*, a chronomem fact
written by the put's own batch (same transaction, same transaction time) in the
store's scope::

    subject  "lg@ns:users.42."   (the namespace's labels, each ended by ".")
    predicate "@namespace", object ["users", "42"] (JSON)

written ``exact``, cardinality ``ONE``, valid from the start of the calendar
forever, with nothing indexed for search. Re-putting into a namespace asserts
the same value over the same interval: ``unchanged``, nothing is stored. A
delete, an expiry or an erasure never touches the index, so an entry says "this
namespace may hold items", never "it does". ``list_namespaces`` reads the
entries (as believed now: an entry is valid at every instant, so this is the
superset of every namespace that ever held an item) under the longest fixed
prefix of its match conditions, applies the conditions, and keeps the
namespaces that hold an item live at the read's instants by one index probe per
namespace (``Memory.live_prefixes``, on the items' subject prefix
``lg:users.42..``), in sorted order and only until the page is full. Its cost is
bounded by the number of namespaces, not of items, and it is exact on both
clocks: the probe runs at the view's ``valid_at``/``known_at``.

A store written before the index existed is indexed once per scope, on the first
``list_namespaces`` of a store of that scope: every namespace that holds a fact of
an item visible there, in any state (so that views of the past list them too),
plus a *built* fact (subject ``lg@ns``, predicate ``@built``, object the scope)
in the same transaction. Concurrent first calls write the same entries (merged)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime

from langgraph.store.base import ListNamespacesOp

from chronomem import Cardinality, Memory
from chronomem.model import ALL_STATES
from chronomem.ops import AssertOp, WriteOp
from chronomem.timeutil import MIN_US, from_us, opt_dt

from . import keys, namespaces

ENTRY_PREFIX = "lg@ns:"
ENTRY = "@namespace"
BUILT_SUBJECT = "lg@ns"
BUILT = "@built"
PROBES = 64  # namespaces probed per core call (one statement)


def entry_subject(namespace: Iterable[str]) -> str:
    """The subject of a namespace's entry: a namespace prefix is a character prefix."""
    return ENTRY_PREFIX + "".join(f"{label}." for label in namespace)


def _namespace_of(subject: str) -> tuple[str, ...] | None:
    if not subject.startswith(ENTRY_PREFIX) or not subject.endswith("."):
        return None
    return tuple(subject[len(ENTRY_PREFIX) : -1].split("."))


def _assert(subject: str, predicate: str, obj: str) -> AssertOp:
    return AssertOp(
        subject,
        predicate,
        obj,
        MIN_US,  # valid at every instant: a view of any past reads it
        None,
        bounded=True,  # forever, and a repeat is ``unchanged``
        exact=True,
        cardinality=Cardinality.ONE,
        index_text="",  # not searchable
    )


def entries(namespaces_put: Iterable[tuple[str, ...]]) -> list[AssertOp]:
    """The entries a put batch asserts: one per distinct namespace it puts into."""
    return [
        _assert(entry_subject(ns), ENTRY, json.dumps(list(ns), ensure_ascii=False))
        for ns in dict.fromkeys(tuple(ns) for ns in namespaces_put)
    ]


def _scope_tag(memory: Memory) -> str:
    return json.dumps(memory.scope.columns(), sort_keys=True)


def built(memory: Memory) -> bool:
    """Whether this exact scope's items were indexed (or it was indexed from the start)."""
    tag = _scope_tag(memory)
    return any(
        r.predicate == BUILT and r.object == tag
        for r in memory.rows([BUILT_SUBJECT], exact=True, valid_at=from_us(MIN_US))
    )


def build(memory: Memory) -> int:
    """Index every namespace holding a fact of an item visible in this scope, in any
    state, once (see the module docstring); returns the number of entries written."""
    if built(memory):
        return 0
    found = memory.facts(
        subject_prefix=keys.SUBJECT_PREFIX,
        exact=True,
        states=ALL_STATES,
        valid_at=from_us(MIN_US),
    )
    names = sorted({p[0] for f in found if (p := keys.parse_subject(f.subject)) is not None})
    memory.apply([*entries(names), _assert(BUILT_SUBJECT, BUILT, _scope_tag(memory))])
    return len(names)


def add_to_import(
    memory: Memory, writes: list[tuple[list[WriteOp], datetime, str]], ns_of: list[tuple[str, ...]]
) -> None:
    """An importer's writes (``exchange.write_history``, one per item, oldest first;
    ``ns_of`` their namespaces): the first write into a namespace the index lacks
    also asserts its entry, at that item's instant (an indexed namespace is left
    alone: its entry's slot was written after the imported past)."""
    indexed = {
        ns
        for r in memory.rows(subject_prefix=ENTRY_PREFIX, exact=True, valid_at=from_us(MIN_US))
        if (ns := _namespace_of(r.subject)) is not None
    }
    for (ops, _, _), ns in zip(writes, ns_of, strict=True):
        if ns not in indexed:
            ops.extend(entries([ns]))
            indexed.add(ns)


def _candidates(memory: Memory, op: ListNamespacesOp) -> list[tuple[str, ...]]:
    """The indexed namespaces under the conditions' fixed prefix that match them, sorted."""
    fixed = namespaces.fixed_prefix(op.match_conditions)
    rows = memory.rows(subject_prefix=entry_subject(fixed), exact=True, valid_at=from_us(MIN_US))
    found = {
        ns for r in rows if r.predicate == ENTRY and (ns := _namespace_of(r.subject)) is not None
    }
    return sorted(ns for ns in found if namespaces.matches_all(op.match_conditions, ns))


def _chunks(
    candidates: list[tuple[str, ...]], depth: int | None, done: list[tuple[str, ...]]
) -> Iterator[list[tuple[str, ...]]]:
    """The candidates in probe-sized chunks, skipping those whose listed form
    (truncated to ``depth``) is already known to be live."""
    chunk: list[tuple[str, ...]] = []
    for ns in candidates:
        if done and done[-1] == ns[:depth]:
            continue
        chunk.append(ns)
        if len(chunk) == PROBES:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def list_namespaces(
    memory: Memory, op: ListNamespacesOp, valid_at: int, known_at: int | None
) -> list[tuple[str, ...]]:
    """``op``'s page of namespaces holding an item live at ``valid_at`` as believed at
    ``known_at`` (as LangGraph's stores order, truncate and page them)."""
    depth = op.max_depth
    want = op.offset + op.limit
    listed: list[tuple[str, ...]] = []  # sorted, distinct (candidates are sorted)
    if want > 0:
        candidates = _candidates(memory, op)
        v: datetime = from_us(valid_at)
        k = opt_dt(known_at)
        for chunk in _chunks(candidates, depth, listed):
            probes = {keys.namespace_prefix(ns) + ".": ns for ns in chunk}
            live = set(memory.live_prefixes(list(probes), valid_at=v, known_at=k))
            for prefix, ns in probes.items():
                if prefix in live and (not listed or listed[-1] != ns[:depth]):
                    listed.append(ns[:depth])
            if len(listed) >= want:
                break
    return listed[op.offset : want]
