"""Puts, deletes and TTL refreshes planned as chronomem write operations.

An item is one single-valued slot (``item``, ``exact`` keys, cardinality ONE)
holding the item's document (``records``), asserted from the transaction time
up to the item's expiry as a *bounded* write: a put replaces the running
version exactly where the new one starts (history keeps it), and a TTL
refresh re-asserts the same document, which merges into the running version.
The common put is one version: its search text is that version's
``index_text``. A put whose index paths yield several texts writes each as an
entry fact beside the document, and one ``EndOthersOp`` ends whatever else of
the item is live when the write runs (decided inside the write transaction
under a subject lock); the same op ends an old-layout item's field facts and
entries, so the put migrates it. A TTL shorter than the running one first ends
the running version. A delete retracts the item's live facts (the audit view
keeps them, marked retracted) and ends anything a concurrent put added since
they were read. Every instant a write takes effect is its transaction time,
which orders the writes of every store on the database as they committed.
One batch becomes one ``Memory.apply``: one transaction, one transaction time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from chronomem import Cardinality
from chronomem.ops import (
    AssertOp,
    DocumentOp,
    EndOp,
    EndOthersOp,
    PlannedOp,
    RetractOp,
    WriteOp,
    expanded,
)
from chronomem.timeutil import to_us

from . import keys
from .indexing import entries
from .records import Record, doc_stamp, encode_doc, encode_value

US_PER_MINUTE = 60_000_000
_KEEP_DOC = frozenset((keys.DOC,))  # what a put's ``EndOthersOp`` keeps (one set for every put)


class PreparedPut(NamedTuple):
    """A validated put: the value already encoded, so nothing can fail mid-batch
    (a tuple: a batch makes one per put, and a frozen dataclass costs a call per field)."""

    namespace: tuple[str, ...]
    key: str
    subject: str
    value: dict[str, Any] | None  # None: delete
    text: str  # the value as JSON ("" for a delete)
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
        return PreparedPut(namespace, key, subject, None, "", (), None)
    doc = dict(value)  # the put's own copy, encoded as is (no second copy)
    return PreparedPut(namespace, key, subject, doc, encode_value(doc), paths, ttl)


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
    created: int | None = None,
) -> list[WriteOp]:
    """The operations that make the item equal to ``put`` from the transaction on
    (``plan_document``: what each of them is).

    ``at`` is the instant the write is planned (after the batch's reads, a
    moment before its transaction): a TTL counts from it. ``existing`` (the item
    as the batch read it) supplies the item's creation time, whether a running
    version outlives a shorter TTL, and whether anything beside the document
    must be ended. ``refresh``: the document is re-asserted as it is (an
    old-layout item is rewritten with its times), so the item's times do not
    move. ``created``: the creation time to record (an import's)."""
    return expanded(plan_document(put, existing, at, refresh=refresh, created=created))


def plan_document(
    put: PreparedPut,
    existing: Record | None,
    at: int,
    *,
    refresh: bool = False,
    created: int | None = None,
) -> list[PlannedOp]:
    """``plan_put``'s operations, a plain put (a value with one text or none to
    index, no TTL) as its ``DocumentOp``: the document's assert, then, for a new
    item or one with facts beside its document, the end of its other facts (what
    ``DocumentOp.ops()`` is), which the writer may apply set-wise
    (``Memory.apply_planned``)."""
    if put.value is None:
        return plan_delete(existing)  # type: ignore[return-value]  # a list of WriteOps
    old = existing.marker if existing is not None else None
    until = expiry(at, put.ttl)
    if refresh and old is not None and old.value is not None and existing is not None:
        assert existing.marker_fact is not None
        doc = existing.marker_fact.object
        stamp_created, updated = old.created, old.updated
    else:
        if refresh and old is not None:
            stamp_created, updated = old.created, old.updated
        else:
            # None: this put creates the item (its creation time is the version's start)
            stamp_created = (
                existing.created_us if existing is not None and old is not None else None
            )
            updated = at  # new each put: the document's new version starts at the put
        if created is not None:
            stamp_created = created
        doc = encode_doc(put.text, stamp_created, updated, put.ttl, put.paths)
    texts = entries(put.value, put.paths)
    first: list[PlannedOp] = []
    if until is not None and existing is not None:
        for fact in existing.all_facts():
            if fact.valid_to is None or to_us(fact.valid_to) > until:
                # The running version outlives the new expiry: end it now, so that the
                # bounded assert does not leave its tail standing after the expiry (a
                # same value then merges back into one version up to the new expiry).
                first.append(_end(put.subject, fact.predicate))
    if len(texts) <= 1:
        text = next(iter(texts.values()), "")
        if put.ttl is None:  # no expiry: nothing ends first (``first`` is empty)
            ends = existing is None or existing.extra_facts()
            return [DocumentOp(put.subject, keys.DOC, doc, text, ends)]
        ops: list[PlannedOp] = [_assert(put.subject, keys.DOC, doc, put.ttl, text)]
        if existing is None or existing.extra_facts():
            # a new item (a concurrent put may have written entries), or one with
            # entries or old-layout fields beside its document: end them
            ops.append(EndOthersOp(put.subject, _KEEP_DOC, exact=True))
        return first + ops if first else ops
    stamp = doc_stamp(stamp_created, updated)
    ops = [_assert(put.subject, keys.DOC, doc, put.ttl, "")]
    ops += [
        # the entries belong to this put's document (a new one's are new versions)
        _assert(put.subject, p, keys.digest_text(f"{stamp}:{t}"), put.ttl, t)
        for p, t in texts.items()
    ]
    ops.append(EndOthersOp(put.subject, frozenset((keys.DOC, *texts)), exact=True))
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
