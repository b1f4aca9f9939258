"""Slot keys: which stored versions compete for one timeline.

A slot is (scope, subject key, predicate, object key — only for a MANY
predicate). Its key is a digest of the injective join of those parts
(``keycodec``), so two different slots never share a key: ``("a\\x1eb", "c")``
and ``("a", "b\\x1ec")`` used to, and the second write ended the first.

For every subject, predicate and object without the characters ``\\x1d`` and
``\\x1e`` the key is the one earlier versions wrote, so existing stores keep
working unchanged. Rows that do hold those characters were keyed by the old,
ambiguous join; ``rekey_legacy_slots`` moves them to their new keys (a schema
migration step, idempotent, touching only those rows)."""

from __future__ import annotations

import hashlib

from sqlalchemy import Connection, bindparam, or_, select, update

from . import keycodec
from .schema import versions
from .scope import Scope

# The characters whose presence makes a key differ from the legacy join.
_SPECIAL = (keycodec.ESC, keycodec.SEP_SLOT)


def _digest(raw: str) -> str:
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()


def slot_key(scope: Scope, subject_key: str, predicate: str, object_key: str | None) -> str:
    """The key of a slot (``object_key`` None: a single-valued slot)."""
    parts = (scope.key, subject_key, predicate, object_key or "")
    return _digest(keycodec.join(parts, keycodec.SEP_SLOT))


def legacy_slot_key(scope: Scope, subject_key: str, predicate: str, object_key: str | None) -> str:
    """The key stores written before the escaped join used (ambiguous)."""
    parts = (scope.key, subject_key, predicate, object_key or "")
    return _digest(keycodec.legacy_join(parts, keycodec.SEP_SLOT))


def rekey_legacy_slots(conn: Connection) -> int:
    """Move rows keyed by the legacy join to their injective keys; returns how many.

    Only rows whose subject key, predicate or object key holds ``\\x1d`` or
    ``\\x1e`` can differ. Whether a row sits in a single-valued slot or in its
    object's slot is read off the stored key itself (it matches exactly one of
    the two legacy forms); a row matching neither (already re-keyed) is left
    alone, so running this twice changes nothing."""
    cols = (versions.c.subject_key, versions.c.predicate, versions.c.object_key)
    rows = conn.execute(
        select(
            versions.c.tenant,
            versions.c.id,
            versions.c.user_id,
            versions.c.agent_id,
            versions.c.session_id,
            versions.c.slot,
            *cols,
        ).where(or_(*(c.contains(ch, autoescape=True) for c in cols for ch in _SPECIAL)))
    ).all()
    changes: list[dict[str, str]] = []
    for r in rows:
        scope = Scope(r.tenant, r.user_id or None, r.agent_id or None, r.session_id or None)
        okey: str | None
        if r.object_key and r.slot == legacy_slot_key(
            scope, r.subject_key, r.predicate, r.object_key
        ):
            okey = r.object_key
        elif r.slot == legacy_slot_key(scope, r.subject_key, r.predicate, None):
            okey = None
        else:
            continue
        new = slot_key(scope, r.subject_key, r.predicate, okey)
        if new != r.slot:
            changes.append({"t": r.tenant, "vid": r.id, "new": new})
    if changes:
        conn.execute(
            update(versions)
            .where(versions.c.tenant == bindparam("t"), versions.c.id == bindparam("vid"))
            .values(slot=bindparam("new")),
            changes,
        )
    return len(changes)
