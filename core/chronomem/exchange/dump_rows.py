"""A dump's records as table rows, each field checked as hostile input: strings
that are valid Unicode, ids of our shape, scopes named as a write names them,
instants in range, metadata JSON within the nesting limit, registry rows a
registration could have written."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..errors import ChronomemError, InvalidInput
from ..identity import encodable, fold_predicate, key_hash
from ..jsondepth import check_depth
from ..model import CloseReason
from ..predicates import Cardinality, Volatility
from ..schema import episodes, sources, versions
from ..schema import predicates as predicates_table
from ..scope import Scope
from .common import SCOPE_COLUMNS, VERSION_OPT_TEXT, VERSION_TEXT, opt_instant, parse_instant

_ID = re.compile(r"[0-9A-Za-z_-]{1,32}")
CLOSED_REASONS = frozenset(m.value for m in CloseReason)


def text(rec: dict[str, Any], key: str, n: int, *, optional: bool = False) -> Any:
    value = rec.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"line {n}: {rec['type']} field {key!r} must be a string")
    return encodable(value, f"line {n}: {rec['type']} field {key!r}")


def digest(rec: dict[str, Any], n: int) -> str:
    value: str = text(rec, "content_hash", n)
    if len(value) > 40:
        raise InvalidInput(f"line {n}: {rec['type']} content_hash is at most 40 characters")
    return value


def ident(rec: dict[str, Any], key: str, n: int, *, optional: bool = False) -> Any:
    value = text(rec, key, n, optional=optional)
    if value is not None and not _ID.fullmatch(value):
        raise InvalidInput(f"line {n}: {rec['type']} field {key!r} is not an id: {value[:40]!r}")
    return value


def scope_of(rec: dict[str, Any], n: int, tenant: str) -> Scope:
    """The record's scope, its names checked as a write checks them."""
    scope = rec.get("scope") or {}
    if not isinstance(scope, dict) or not set(scope) <= {"user", "agent", "session"}:
        raise InvalidInput(f"line {n}: scope must be an object of user/agent/session")
    try:
        return Scope(tenant, **{k: v for k, v in scope.items() if v != ""})
    except ChronomemError as exc:
        raise InvalidInput(f"line {n}: {exc}") from None


def _scope_cols(rec: dict[str, Any], n: int, tenant: str) -> dict[str, str]:
    cols = scope_of(rec, n, tenant).columns()
    return {col: cols[col] for _, col in SCOPE_COLUMNS}


def _metadata(rec: dict[str, Any], n: int) -> str:
    meta = rec.get("metadata", {})
    if not isinstance(meta, dict):
        raise InvalidInput(f"line {n}: metadata must be an object")
    check_depth(meta, f"line {n}: metadata")
    out = json.dumps(meta, sort_keys=True, ensure_ascii=False)
    return encodable(out, f"line {n}: metadata")


def episode_row(rec: dict[str, Any], n: int, tenant: str) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "id": ident(rec, "id", n),
        **_scope_cols(rec, n, tenant),
        "role": text(rec, "role", n, optional=True),
        "text": text(rec, "text", n),
        "occurred_at": parse_instant(rec.get("occurred_at"), f"line {n}: occurred_at"),
        "recorded_at": parse_instant(rec.get("recorded_at"), f"line {n}: recorded_at"),
        "metadata": _metadata(rec, n),
        "content_hash": digest(rec, n),
    }


def version_row(rec: dict[str, Any], n: int, tenant: str) -> dict[str, Any]:
    row: dict[str, Any] = {"tenant": tenant, "id": ident(rec, "id", n)}
    row["fact_id"] = ident(rec, "fact_id", n)
    row.update(_scope_cols(rec, n, tenant))
    for key in VERSION_TEXT:
        row[key] = text(rec, key, n)
    for key in VERSION_OPT_TEXT:
        row[key] = text(rec, key, n, optional=True)
    if row["superseded_by"] is not None:
        ident(rec, "superseded_by", n)
    row["subject_hash"] = key_hash(row["subject_key"])
    row["valid_from"] = parse_instant(rec.get("valid_from"), f"line {n}: valid_from")
    row["valid_to"] = opt_instant(rec.get("valid_to"), f"line {n}: valid_to")
    row["recorded_at"] = parse_instant(rec.get("recorded_at"), f"line {n}: recorded_at")
    row["superseded_at"] = opt_instant(rec.get("superseded_at"), f"line {n}: superseded_at")
    if row["valid_to"] is not None and row["valid_to"] <= row["valid_from"]:
        raise InvalidInput(f"line {n}: valid_to must be after valid_from")
    if row["superseded_at"] is not None and row["superseded_at"] <= row["recorded_at"]:
        raise InvalidInput(f"line {n}: superseded_at must be after recorded_at")
    if (row["superseded_at"] is None) != (row["closed_reason"] is None):
        raise InvalidInput(f"line {n}: a version is closed (superseded_at) with a closed_reason")
    if row["closed_reason"] is not None and row["closed_reason"] not in CLOSED_REASONS:
        raise InvalidInput(f"line {n}: unknown closed_reason {row['closed_reason'][:40]!r}")
    if row["superseded_at"] is None and row["superseded_by"] is not None:
        raise InvalidInput(f"line {n}: a current version names a successor")
    if len(row["predicate"]) > 255:
        raise InvalidInput(f"line {n}: predicate names are at most 255 characters")
    row["metadata"] = _metadata(rec, n)
    row["content_hash"] = digest(rec, n)
    return row


def source_row(rec: dict[str, Any], n: int, tenant: str) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "fact_id": ident(rec, "fact_id", n),
        "episode_id": ident(rec, "episode_id", n),
        "recorded_at": parse_instant(rec.get("recorded_at"), f"line {n}: recorded_at"),
        "extractor": text(rec, "extractor", n, optional=True),
    }


def predicate_row(rec: dict[str, Any], n: int, tenant: str) -> dict[str, Any]:
    """A registry row as ``register_predicate`` writes one: folded names of at most
    255 characters, a known cardinality and volatility (a row the registry cannot
    load would break every later write of the tenant)."""
    row = {
        "tenant": tenant,
        **{k: text(rec, k, n) for k in ("name", "canonical", "cardinality", "volatility")},
        "origin": text(rec, "origin", n, optional=True) or "user",
    }
    for key in ("name", "canonical"):
        if not row[key].strip() or fold_predicate(row[key]) != row[key] or len(row[key]) > 255:
            raise InvalidInput(f"line {n}: predicate {key} {row[key][:40]!r} is not a folded name")
    for key, kind in (("cardinality", Cardinality), ("volatility", Volatility)):
        if row[key] not in {m.value for m in kind}:
            raise InvalidInput(f"line {n}: predicate {key} {row[key][:40]!r} is not one of "
                               f"{sorted(m.value for m in kind)}")  # fmt: skip
    if len(row["origin"]) > 32:
        raise InvalidInput(f"line {n}: predicate origin is at most 32 characters")
    return row


ROWS: dict[str, tuple[Any, Callable[[dict[str, Any], int, str], dict[str, Any]]]] = {
    "predicate": (predicates_table, predicate_row),
    "episode": (episodes, episode_row),
    "version": (versions, version_row),
    "source": (sources, source_row),
}
