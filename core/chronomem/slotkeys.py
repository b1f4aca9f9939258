"""Slot keys: which stored versions compete for one timeline.

A slot is (scope, subject key, predicate, object key — only for a MANY
predicate). Its key is a digest of the injective join of those parts
(``keycodec``), so two different slots never share a key: ``("a\\x1eb", "c")``
and ``("a", "b\\x1ec")`` used to, and the second write ended the first.

For every subject, predicate and object without the characters ``\\x1d`` and
``\\x1e`` the key is the one earlier versions wrote, so existing stores keep
working unchanged. Rows that do hold those characters were keyed by the old,
ambiguous join; ``schema.rekey_legacy_slots`` moves them to their new keys (a schema
migration step, idempotent, touching only those rows)."""

from __future__ import annotations

import hashlib

from . import keycodec
from .scope import Scope

# The characters whose presence makes a key differ from the legacy join.
SPECIAL = (keycodec.ESC, keycodec.SEP_SLOT)


def _digest(raw: str) -> str:
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()


def slot_key(scope: Scope, subject_key: str, predicate: str, object_key: str | None) -> str:
    """The key of a slot (``object_key`` None: a single-valued slot)."""
    return scoped_slot_key(scope.key, subject_key, predicate, object_key)


def scoped_slot_key(
    scope_key: str, subject_key: str, predicate: str, object_key: str | None
) -> str:
    """``slot_key`` of the scope whose ``Scope.key`` is ``scope_key``."""
    parts = (scope_key, subject_key, predicate, object_key or "")
    return _digest(keycodec.join(parts, keycodec.SEP_SLOT))


def legacy_slot_key(scope: Scope, subject_key: str, predicate: str, object_key: str | None) -> str:
    """The key stores written before the escaped join used (ambiguous)."""
    parts = (scope.key, subject_key, predicate, object_key or "")
    return _digest(keycodec.legacy_join(parts, keycodec.SEP_SLOT))
