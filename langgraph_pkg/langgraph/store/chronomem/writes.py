"""Puts, deletes and TTL refreshes planned as chronomem write operations.

Every fact of an item is a single-valued slot (``exact`` keys, cardinality
ONE) asserted from the transaction time up to the item's expiry as a
*bounded* write, so that re-putting an unchanged field writes nothing, a
changed field ends its old value exactly where the new one starts (history
keeps it), and extending a TTL merges into the running version. Every other
fact of the item (a removed field or index entry) is ended by one
``EndOthersOp``, which finds them inside the write transaction under a
subject lock: two concurrent puts of one item leave exactly one put's fields
live, never the union. A TTL shorter than the running one first ends the
running versions. A delete retracts the item's live facts (the audit view
keeps them, marked retracted) and ends anything a concurrent put added since
they were read. Every instant a write takes effect is its transaction time,
which orders the writes of every store on the database as they committed.
One batch becomes one ``Memory.apply``: one transaction, one transaction time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chronomem import Cardinality
from chronomem.ops import AssertOp, EndOp, EndOthersOp, RetractOp, WriteOp
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


def _assert(subject: str, predicate: str, obj: str, ttl: float | None, text: str) -> AssertOp:
    return AssertOp(
        subject,
        predicate,
        obj,
        None,  # from the transaction time
        None,
        bounded=True,  # valid_to None then means "forever", and same values merge
        exact=True,
        cardinality=Cardinality.ONE,
        index_text=text,
        # a TTL runs from the transaction time itself: exactly ttl minutes
        valid_for=None if ttl is None else round(ttl * US_PER_MINUTE),
    )


def _end(subject: str, predicate: str) -> EndOp:
    """End the slot's running value at the transaction time."""
    return EndOp(subject, predicate, None, None, exact=True, cardinality=Cardinality.ONE)


def plan_put(
    put: PreparedPut,
    existing: Record | None,
    at: int,
    *,
    refresh: bool = False,
) -> list[WriteOp]:
    """The operations that make the item equal to ``put`` from the transaction on.

    ``at`` is the instant the write is planned (after the batch's reads, a
    moment before its transaction): a TTL counts from it. ``existing`` (the item
    as the batch read it) only supplies what the new facts cannot: the item's
    creation time, and whether a running version outlives a shorter TTL; which
    facts to end is decided inside the write transaction. ``refresh``: the
    marker is kept as it is, so the item's times do not move."""
    if put.value is None:
        return plan_delete(existing)
    old = existing.marker if existing is not None else None
    until = expiry(at, put.ttl)
    if refresh and old is not None:
        created, updated = old.created, old.updated
    else:
        # None: this put creates the item (its creation time is the marker's start)
        created = existing.created_us if existing is not None and old is not None else None
        updated = at  # new each put: the marker's new version starts at the put
    marker = Marker(
        created=created,
        updated=updated,
        ttl=put.ttl,
        fields=put.names,
        index=put.paths,
    )
    texts = entries(put.value, put.paths)
    wanted: dict[str, tuple[str, str]] = {keys.MARKER: (marker.encode(), "")}
    wanted.update({p: (obj, "") for p, obj in put.fields.items()})
    wanted.update({p: (keys.digest_text(t), t) for p, t in texts.items()})
    first: list[WriteOp] = []
    if until is not None and existing is not None:
        for fact in existing.all_facts():
            if fact.predicate in wanted and (fact.valid_to is None or to_us(fact.valid_to) > until):
                # The running version outlives the new expiry: end it now, so that the
                # bounded assert does not leave its tail standing after the expiry (a
                # same value then merges back into one version up to the new expiry).
                first.append(_end(put.subject, fact.predicate))
    ops: list[WriteOp] = [
        _assert(put.subject, pred, obj, put.ttl, text) for pred, (obj, text) in wanted.items()
    ]
    # Removed fields and index entries: whatever is live when the write runs.
    ops.append(EndOthersOp(put.subject, frozenset(wanted), exact=True))
    return first + ops


def plan_delete(existing: Record | None) -> list[WriteOp]:
    """Retract the facts the batch read; end any other fact of the item that a
    concurrent put made live since (so the item is gone from current reads)."""
    if existing is None or not existing.alive:
        return []
    ids = dict.fromkeys(f.id for f in existing.all_facts())
    return [
        *(RetractOp(fid) for fid in ids),
        EndOthersOp(existing.subject, frozenset(), exact=True),
    ]


def plan_refresh(existing: Record, at: int) -> list[WriteOp]:
    """Re-put the item as it is, with its TTL counted from ``at`` (its times kept)."""
    m = existing.marker
    if m is None or m.ttl is None:
        return []
    put = prepare(existing.namespace, existing.key, existing.value(), m.index, m.ttl)
    return plan_put(put, existing, at, refresh=True)
