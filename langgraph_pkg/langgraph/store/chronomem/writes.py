"""Puts, deletes and TTL refreshes planned as chronomem write operations.

Every fact of an item is a single-valued slot (``exact`` keys, cardinality
ONE) asserted over ``[at, expiry)`` as a *bounded* write, so that re-putting
an unchanged field writes nothing, a changed field ends exactly its old value
at ``at`` (history keeps it), and extending a TTL merges into the running
version. Fields and index entries that disappear end at ``at``; a TTL shorter
than the running one first ends the running versions at ``at``. A delete
retracts the item's live facts (the audit view keeps them, marked retracted).
One batch becomes one ``Memory.apply``: one transaction, one transaction time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chronomem import Cardinality
from chronomem.ops import AssertOp, EndOp, RetractOp, WriteOp
from chronomem.timeutil import to_us

from . import keys
from .indexing import entries
from .records import Marker, Record, encode_field

US_PER_MINUTE = 60_000_000


@dataclass(frozen=True)
class PreparedPut:
    """A validated put: the value already encoded, so nothing can fail mid-batch."""

    namespace: tuple[str, ...]
    key: str
    subject: str
    value: dict[str, Any] | None  # None: delete
    fields: dict[str, str]  # predicate -> JSON object
    names: tuple[str, ...]
    paths: tuple[str, ...]
    ttl: float | None


def prepare(
    namespace: tuple[str, ...],
    key: str,
    value: Mapping[str, Any] | None,
    paths: tuple[str, ...],
    ttl: float | None,
) -> PreparedPut:
    subject = keys.subject(namespace, key)
    if value is None:
        return PreparedPut(namespace, key, subject, None, {}, (), (), None)
    fields = {keys.field_predicate(n): encode_field(n, v) for n, v in value.items()}
    return PreparedPut(namespace, key, subject, dict(value), fields, tuple(value), paths, ttl)


def expiry(at: int, ttl: float | None) -> int | None:
    return None if ttl is None else at + round(ttl * US_PER_MINUTE)


def _assert(
    subject: str, predicate: str, obj: str, at: int, until: int | None, text: str
) -> AssertOp:
    return AssertOp(
        subject,
        predicate,
        obj,
        at,
        until,
        bounded=True,  # valid_to None then means "forever", and same values merge
        exact=True,
        cardinality=Cardinality.ONE,
        index_text=text,
    )


def _end(subject: str, predicate: str, at: int) -> EndOp:
    return EndOp(subject, predicate, None, at, exact=True, cardinality=Cardinality.ONE)


def plan_put(
    put: PreparedPut,
    existing: Record | None,
    at: int,
    *,
    updated: int | None = None,
) -> list[WriteOp]:
    """The operations that make the item equal to ``put`` from ``at`` on."""
    if put.value is None:
        return plan_delete(existing)
    old = existing.marker if existing is not None else None
    until = expiry(at, put.ttl)
    marker = Marker(
        created=old.created if old is not None else at,
        updated=updated if updated is not None else at,
        ttl=put.ttl,
        fields=put.names,
        index=put.paths,
    )
    texts = entries(put.value, put.paths)
    wanted: dict[str, tuple[str, str]] = {keys.MARKER: (marker.encode(), "")}
    wanted.update({p: (obj, "") for p, obj in put.fields.items()})
    wanted.update({p: (keys.digest_text(t), t) for p, t in texts.items()})
    first: list[WriteOp] = []
    ops: list[WriteOp] = [
        _assert(put.subject, pred, obj, at, until, text) for pred, (obj, text) in wanted.items()
    ]
    for fact in existing.all_facts() if existing is not None else ():
        if fact.predicate not in wanted:  # a removed field or index entry
            ops.append(_end(put.subject, fact.predicate, at))
        elif until is not None and (fact.valid_to is None or to_us(fact.valid_to) > until):
            # The running version outlives the new expiry: end it now, so that the
            # bounded assert does not leave its tail standing after the expiry (a
            # same value then merges back into one version up to the new expiry).
            first.append(_end(put.subject, fact.predicate, at))
    return first + ops


def plan_delete(existing: Record | None) -> list[WriteOp]:
    if existing is None or not existing.alive:
        return []
    ids = dict.fromkeys(f.id for f in existing.all_facts())
    return [RetractOp(fid) for fid in ids]


def plan_refresh(existing: Record, at: int) -> list[WriteOp]:
    """Re-put the item as it is, with its TTL counted from ``at`` (``updated`` kept)."""
    m = existing.marker
    if m is None or m.ttl is None:
        return []
    put = prepare(existing.namespace, existing.key, existing.value(), m.index, m.ttl)
    return plan_put(put, existing, at, updated=m.updated)


def needs_refresh(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r.alive and r.marker is not None and r.marker.ttl is not None]
