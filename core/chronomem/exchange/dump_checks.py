"""Whole-dump checks, run before anything is written: a dump is input from
outside, so every key that decides where a row belongs is verified against the
row's own scope, and a damaged dump (truncated, edited, reordered into a
contradiction) is refused instead of imported in part.

- the header's counts match what arrived (a dump cut at a line boundary);
- every record lies in the header's scope (an episode a fact there cites may be
  an ancestor scope's); a version's slot is the key of its own scope, subject,
  predicate and object; a fact's versions share one scope; a source link
  cites an episode its fact's scope can see;
- every successor a version names is in the dump, in its scope, recorded when
  the predecessor was closed, unless the header lists it as erased;
- invariant I1 over the current versions; no transaction time after the
  importing store's clock (it would drag every later write into the future)."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise
from typing import Any

from ..errors import InvalidInput, TimeTravel
from ..identity import fold_predicate
from ..predicates import BUILTIN
from ..scope import Scope
from ..slotkeys import slot_key

Rows = dict[str, list[dict[str, Any]]]
_COLS = ("user_id", "agent_id", "session_id")


def row_scope(row: dict[str, Any]) -> Scope:
    return Scope(row["tenant"], *(row[c] or None for c in _COLS))


def within(inner: Scope, outer: Scope) -> bool:
    """``inner`` is ``outer`` or under it (what ``purge``/export of ``outer`` takes)."""
    levels = ("user", "agent", "session")
    deepest = max((i for i, lv in enumerate(levels) if getattr(outer, lv)), default=-1)
    return all(getattr(inner, lv) == getattr(outer, lv) for lv in levels[: deepest + 1])


def sees(reader: Scope, row: Scope) -> bool:
    """``reader`` sees ``row``'s rows: ``row`` is ``reader`` or an ancestor of it (its
    levels down to its deepest set one are the reader's, the rest unset)."""
    levels = ("user", "agent", "session")
    deepest = max((i for i, lv in enumerate(levels) if getattr(row, lv)), default=-1)
    return all(getattr(row, lv) == getattr(reader, lv) for lv in levels[: deepest + 1]) and all(
        getattr(row, lv) is None for lv in levels[deepest + 1 :]
    )


def check_counts(header: dict[str, Any], rows: Rows) -> None:
    counts = header.get("counts")
    if not isinstance(counts, dict):
        raise InvalidInput("the dump's header has no record counts")
    for kind, got in rows.items():
        want = counts.get(kind + "s")
        if not isinstance(want, int) or isinstance(want, bool) or want != len(got):
            raise InvalidInput(
                f"the dump's header counts {want!r} {kind}s, {len(got)} arrived: it was cut "
                "short or edited; nothing was imported"
            )


def check_scopes(top: Scope, rows: Rows, source_tenant: str) -> None:
    """Scope checks (module docstring). A version's slot is verified against its scope
    in the tenant the dump came from, then re-keyed for the importing tenant (a slot
    key includes the tenant: kept as it was, later writes would miss the slot)."""
    eps = {r["id"]: row_scope(r) for r in rows["episode"]}
    fact_scope: dict[str, Scope] = {}
    for r in rows["version"]:
        scope = row_scope(r)
        if not within(scope, top):
            raise InvalidInput(f"version {r['id']} lies outside the dump's scope {top.as_dict()}")
        if fact_scope.setdefault(r["fact_id"], scope) != scope:
            raise InvalidInput(
                f"fact {r['fact_id']} has versions in two scopes: the dump mixes scopes' ids"
            )
        src = Scope(source_tenant, scope.user, scope.agent, scope.session)
        keys = {
            slot_key(src, r["subject_key"], r["predicate"], okey): okey
            for okey in (None, r["object_key"])
        }
        if r["slot"] not in keys:
            raise InvalidInput(
                f"version {r['id']}: its slot is not the key of its own scope, subject, "
                "predicate and object (a slot from elsewhere); nothing was imported"
            )
        r["slot"] = slot_key(scope, r["subject_key"], r["predicate"], keys[r["slot"]])
    cited = set()
    for s in rows["source"]:
        fscope, escope = fact_scope.get(s["fact_id"]), eps.get(s["episode_id"])
        if fscope is None or escope is None:
            raise InvalidInput(
                f"source link {s['fact_id']} -> {s['episode_id']} names a fact or an "
                "episode the dump does not hold"
            )
        if not sees(fscope, escope):
            raise InvalidInput(
                f"source link {s['fact_id']} -> {s['episode_id']}: the fact's scope cannot "
                "see that episode"
            )
        cited.add(s["episode_id"])
    for eid, scope in eps.items():
        if not within(scope, top) and not (eid in cited and sees(top, scope)):
            raise InvalidInput(f"episode {eid} lies outside the dump's scope {top.as_dict()}")


def check_chains(header: dict[str, Any], rows: Rows) -> None:
    erased = header.get("erased_successors", [])
    if not isinstance(erased, list) or not all(isinstance(i, str) for i in erased):
        raise InvalidInput("the header's erased_successors must be a list of ids")
    gone = set(erased)
    by_id = {r["id"]: r for r in rows["version"]}
    if len(by_id) != len(rows["version"]):
        raise InvalidInput("the dump repeats a version id")
    if len({r["id"] for r in rows["episode"]}) != len(rows["episode"]):
        raise InvalidInput("the dump repeats an episode id")
    for r in rows["version"]:
        nxt = r["superseded_by"]
        if nxt is None:
            if r["closed_reason"] in ("superseded", "ended"):
                raise InvalidInput(f"version {r['id']} was {r['closed_reason']} by no version")
            continue
        succ = by_id.get(nxt)
        if succ is None:
            if nxt in gone:
                continue
            raise InvalidInput(
                f"version {r['id']}'s successor {nxt} is missing from the dump: it was cut "
                "short or edited; nothing was imported"
            )
        if row_scope(succ) != row_scope(r) or succ["recorded_at"] != r["superseded_at"]:
            raise InvalidInput(
                f"version {r['id']}'s successor {nxt} is in another scope or was not "
                "recorded when it was closed"
            )
    _check_i1(rows["version"])


def _check_i1(rows: list[dict[str, Any]]) -> None:
    """Invariant I1 over the dump's current versions: in a slot they never overlap
    in valid time (a crafted or damaged dump is refused, not imported)."""
    by_slot: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for r in rows:
        if r["superseded_at"] is None:
            where = (r["user_id"], r["agent_id"], r["session_id"], r["slot"])
            end = r["valid_to"] if r["valid_to"] is not None else 2**63
            by_slot.setdefault(where, []).append((r["valid_from"], end))
    for key, spans in by_slot.items():
        spans.sort()
        for (_, a_end), (b_start, _) in pairwise(spans):
            if b_start < a_end:
                raise InvalidInput(
                    f"the dump's current versions of slot {key[3]} overlap in valid time "
                    "(invariant I1): it was damaged or edited; nothing was imported"
                )


def check_registry(rows: list[dict[str, Any]]) -> None:
    """Each alias names a predicate the dump or the built-ins define."""
    names = {r["name"] for r in rows}
    if len(names) != len(rows):
        raise InvalidInput("the dump registers a predicate name twice")
    canon = {r["name"] for r in rows if r["name"] == r["canonical"]}
    builtin = {fold_predicate(s.name) for s in BUILTIN}
    for r in rows:
        if r["canonical"] not in canon and r["canonical"] not in builtin:
            raise InvalidInput(f"predicate alias {r['name']!r} names no predicate")


def check_clock(rows: Rows, now_us: int) -> int | None:
    """The latest transaction time in the dump (``TimeTravel`` if after ``now_us``)."""
    times: Iterable[int] = [
        *(r["recorded_at"] for k in ("episode", "version", "source") for r in rows[k]),
        *(r["superseded_at"] for r in rows["version"] if r["superseded_at"] is not None),
    ]
    latest = max(times, default=None)
    if latest is not None and latest > now_us:
        raise TimeTravel(
            "the dump holds a transaction time after this store's clock: an import records "
            "the past, and would otherwise drag every later write's time forward"
        )
    return latest
