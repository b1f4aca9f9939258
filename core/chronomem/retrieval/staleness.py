"""What became of what an episode said (docs/design.md §6, "Stale episodes").

Provenance (``cm_sources``) links a fact to the episodes it was extracted from.
At a search's instant (valid time ``valid_at``, as believed at ``known_at``) an
episode is

* **current** when at least one fact extracted from it is live then,
* **stale** when it has extracted facts and every one is ended (its valid time
  closed, by ``end`` or by a newer value of its slot) or retracted then,
* **unknown** when no fact was extracted from it (or only facts not yet valid).

A stale episode's ``superseded_by`` are the facts live at that instant that
replaced one of its ended facts: same scope, subject and predicate, valid from
the instant it ended (a single-valued slot's next value, or, for a many-valued
predicate, "I no longer plan to visit Japan; I plan to visit Peru", the value
that began as its value ended, the value's versions being possibly several
facts; a value that began later is not taken for its replacement); its ``past_label``
says so in words a model reads: ``since superseded: user lives in Berlin``,
``since ended`` or ``since retracted``.

The work is bounded by the episodes handed in (a search's kept hits): one
statement reads their sources' versions, and, only when one is stale, one more
reads the live versions of the ended facts' subjects and predicates (the
``cm_versions_subject`` index). Nothing scans a session or
the tenant.

The other way round, for a question about the past ("where did I live before
Berlin?", ``render.asks_about_past``): ``past_of_facts`` finds, for the live facts a
search kept, the episodes that stated the values they replaced, so the search
can show them (labelled as past, just below the present value) even when no
leg found them. Two statements, bounded by the facts handed in."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, and_, bindparam, or_, select

from .. import reads
from ..model import CloseReason, Fact, State
from ..render import PAST_MARKERS
from ..schema import episodes, sources, versions
from ..scope import Scope
from ..timeutil import from_us

CURRENT = "current"
STALE = "stale"
UNKNOWN = "unknown"

SUPERSEDED, ENDED, RETRACTED = PAST_MARKERS


@dataclass(frozen=True)
class Staleness:
    """One episode's status at the search's instant (see the module docstring)."""

    status: str
    superseded_by: tuple[Fact, ...] = ()
    past_label: str | None = None
    # the successors' version ids, for ranking before their facts are materialized
    successor_ids: tuple[str, ...] = ()
    explain: dict[str, Any] = field(default_factory=dict)


NO_FACTS = Staleness(UNKNOWN, explain={"status": UNKNOWN, "facts": []})


def _fact_phrase(f: Fact) -> str:
    return f"{f.subject} {f.predicate.replace('_', ' ')} {f.object}"


def _sources_of_episodes(
    conn: Connection, scope: Scope, ids: Sequence[str], known_at: int | None
) -> list[Mapping[str, Any]]:
    """The versions (known at ``known_at``, or retracted by then) of every fact
    extracted from the episodes ``ids``, with the citing episode's id."""
    cited = [sources.c.tenant == scope.tenant, sources.c.episode_id.in_(ids)]
    if known_at is not None:
        cited.append(sources.c.recorded_at <= known_at)
    retracted_by = and_(
        versions.c.closed_reason == CloseReason.RETRACTED.value,
        versions.c.superseded_at.is_not(None)
        if known_at is None
        else and_(versions.c.recorded_at <= known_at, versions.c.superseded_at <= known_at),
    )
    q = (
        select(sources.c.episode_id.label("cited_by"), versions)
        .select_from(
            sources.join(
                versions,
                and_(
                    versions.c.tenant == sources.c.tenant, versions.c.fact_id == sources.c.fact_id
                ),
            )
        )
        .where(
            *cited,
            # the cited facts' ids, as a condition the versions' fact index serves:
            # SQLite (no statistics) otherwise walks every version of the tenant
            # and probes the sources of each
            versions.c.fact_id.in_(select(sources.c.fact_id).where(*cited)),
            reads.scope_visible(versions, scope),
            or_(reads.known(known_at), retracted_by),
        )
    )
    return [dict(r) for r in conn.execute(q).mappings()]


_SCOPE = ("user_id", "agent_id", "session_id")


def _key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a replacing value shares with the value it replaced."""
    return (row["subject_key"], row["predicate"], *(row[c] for c in _SCOPE))


def _live_values(
    conn: Connection,
    scope: Scope,
    ended: Sequence[Mapping[str, Any]],
    valid_at: int,
    known_at: int | None,
) -> list[Mapping[str, Any]]:
    """The versions known at ``known_at`` and begun by ``valid_at`` of the subjects
    and predicates of the ``ended`` versions (by ``cm_versions_subject``)."""
    q = select(versions).where(
        versions.c.tenant == scope.tenant,
        versions.c.subject_hash.in_(bindparam("subjects", expanding=True)),
        versions.c.predicate.in_(bindparam("predicates", expanding=True)),
        reads.scope_visible(versions, scope),
        reads.known(known_at),
        versions.c.valid_from <= valid_at,
    )
    params = {
        "subjects": sorted({r["subject_hash"] for r in ended}),
        "predicates": sorted({r["predicate"] for r in ended}),
    }
    rows: list[Mapping[str, Any]] = [dict(r) for r in conn.execute(q, params).mappings()]
    rows.sort(key=lambda r: (r["valid_from"], r["id"]))
    return rows


def _fact_state(rows: Sequence[Mapping[str, Any]], valid_at: int, known_at: int | None) -> State:
    """One fact's state at the instant, from its versions read by ``_sources_of_episodes``."""
    known = [
        r
        for r in rows
        if r["superseded_at"] is None or (known_at is not None and r["superseded_at"] > known_at)
    ]
    if not known:
        return State.RETRACTED
    states = {reads.state_of(r, valid_at) for r in known}
    for s in (State.LIVE, State.SCHEDULED):
        if s in states:
            return s
    return State.ENDED


def of_episodes(
    conn: Connection,
    scope: Scope,
    episode_ids: Sequence[str],
    valid_at: int,
    known_at: int | None,
) -> dict[str, Staleness]:
    """Each episode's ``Staleness`` at (``valid_at``, ``known_at``)."""
    ids = list(dict.fromkeys(episode_ids))
    if not ids:
        return {}
    rows = _sources_of_episodes(conn, scope, ids, known_at)
    by_fact: dict[str, list[Mapping[str, Any]]] = {}
    cites: dict[str, set[str]] = {}
    for r in rows:
        by_fact.setdefault(r["fact_id"], []).append(r)
        cites.setdefault(r["cited_by"], set()).add(r["fact_id"])
    state = {fid: _fact_state(rs, valid_at, known_at) for fid, rs in by_fact.items()}
    stale = {
        e
        for e, fids in cites.items()
        if all(state[f] in (State.ENDED, State.RETRACTED) for f in fids)
    }
    # the stale episodes' ended facts: the last version of each (its end), by fact id
    ended: dict[str, Mapping[str, Any]] = {}
    for e in stale:
        for f in cites[e]:
            if state[f] is State.ENDED:
                ended[f] = max(by_fact[f], key=lambda r: r["valid_to"] or 0)
    live: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    value_end: dict[str, int] = {}  # slot -> when its value last ended (a value's versions
    # may be several facts: a restatement can start a new one)
    if ended:
        for r in _live_values(conn, scope, list(ended.values()), valid_at, known_at):
            if r["valid_to"] is not None and r["valid_to"] <= valid_at:
                value_end[r["slot"]] = max(value_end.get(r["slot"], 0), r["valid_to"])
            elif r["fact_id"] not in ended:
                live.setdefault(_key(r), []).append(r)
    out: dict[str, Staleness] = {}
    for e in ids:
        fids = sorted(cites.get(e, ()))
        facts = [
            {
                "fact_id": f,
                "object": by_fact[f][0]["object"],
                "state": state[f].value,
            }
            for f in fids
        ]
        if e not in cites:
            out[e] = NO_FACTS
            continue
        if e not in stale:
            status = CURRENT if any(state[f] is State.LIVE for f in fids) else UNKNOWN
            out[e] = Staleness(status, explain={"status": status, "facts": facts})
            continue
        succ_rows: dict[str, Mapping[str, Any]] = {}
        for f in fids:
            if state[f] is State.ENDED:
                slot = ended[f]["slot"]
                end = max(ended[f]["valid_to"], value_end.get(slot, 0))
                for r in live.get(_key(ended[f]), ()):
                    # its slot's live value, or another value that began as it ended
                    if r["slot"] == slot or r["valid_from"] == end:
                        succ_rows.setdefault(r["id"], r)
        successors = tuple(reads.to_fact(r, valid_at) for r in succ_rows.values())
        if successors:
            label = f"{SUPERSEDED}: " + "; ".join(_fact_phrase(s) for s in successors)
        elif any(state[f] is State.ENDED for f in fids):
            label = ENDED
        else:
            label = RETRACTED
        for item in facts:
            if item["state"] == State.ENDED.value:
                ends = [
                    r["valid_to"] for r in by_fact[item["fact_id"]] if r["valid_to"] is not None
                ]
                if ends:
                    item["ended_at"] = from_us(max(ends)).isoformat()
        out[e] = Staleness(
            STALE,
            successors,
            label,
            tuple(succ_rows),
            {
                "status": STALE,
                "facts": facts,
                "superseded_by": [s.version_id for s in successors],
                "label": label,
            },
        )
    return out


def order(
    items: list[Any], stale_of: Callable[[Any], tuple[str, ...]], id_of: Callable[[Any], str | None]
) -> list[Any]:
    """``items`` (best first) with every stale episode moved just below the last of
    its successors that is among them: a stale episode never outranks the live
    fact that replaced its fact, whatever the scores (ties, a reranker)."""
    out = list(items)
    for item in list(out):
        succ = set(stale_of(item))
        if not succ:
            continue
        i = out.index(item)
        last = max((j for j, x in enumerate(out) if id_of(x) in succ), default=-1)
        if last > i:
            out.insert(last, out.pop(i))
    return out


# -- questions about the past ----------------------------------------------------------


def past_of_facts(
    conn: Connection,
    scope: Scope,
    fact_ids: Sequence[str],
    valid_at: int,
    known_at: int | None,
    episode_filters: Sequence[Any],
) -> dict[str, list[str]]:
    """For each live fact version in ``fact_ids``: the episodes (passing
    ``episode_filters``) that stated a value it replaced (same scope, subject and
    predicate; ended by ``valid_at``, in its slot or as it began), the latest value
    first. Two statements: the facts' rows, then the replaced values' sources."""
    ids = list(dict.fromkeys(fact_ids))
    if not ids:
        return {}
    rows = [
        dict(r)
        for r in conn.execute(
            select(versions).where(versions.c.tenant == scope.tenant, versions.c.id.in_(ids))
        ).mappings()
    ]
    live = [r for r in rows if reads.state_of(r, valid_at) is State.LIVE]
    if not live:
        return {}
    cited = [sources.c.recorded_at <= known_at] if known_at is not None else []
    q = (
        select(
            versions.c.id,
            versions.c.slot,
            versions.c.valid_to,
            versions.c.subject_key,
            versions.c.predicate,
            versions.c.object,
            *(versions.c[c] for c in _SCOPE),
            sources.c.episode_id,
            episodes.c.occurred_at,
        )
        .select_from(
            versions.join(
                sources,
                and_(
                    sources.c.tenant == versions.c.tenant, sources.c.fact_id == versions.c.fact_id
                ),
            ).join(
                episodes,
                and_(episodes.c.tenant == sources.c.tenant, episodes.c.id == sources.c.episode_id),
            )
        )
        .where(
            versions.c.tenant == scope.tenant,
            versions.c.subject_hash.in_(bindparam("subjects", expanding=True)),
            versions.c.predicate.in_(bindparam("predicates", expanding=True)),
            reads.scope_visible(versions, scope),
            reads.known(known_at),
            versions.c.valid_to.is_not(None),
            versions.c.valid_to <= valid_at,
            *cited,
            *episode_filters,
        )
    )
    params = {
        "subjects": sorted({r["subject_hash"] for r in live}),
        "predicates": sorted({r["predicate"] for r in live}),
    }
    past = [dict(r) for r in conn.execute(q, params).mappings()]
    past.sort(key=lambda r: (-r["valid_to"], -r["occurred_at"], r["episode_id"]))
    out: dict[str, list[str]] = {}
    for f in live:
        for r in past:
            replaced = r["slot"] == f["slot"] or r["valid_to"] == f["valid_from"]
            # a restatement's earlier version holds the same value: not a past one
            if _key(r) == _key(f) and replaced and r["object"] != f["object"]:
                eps = out.setdefault(f["id"], [])
                if r["episode_id"] not in eps:
                    eps.append(r["episode_id"])
    return out


# -- records overwritten (the record stores) ---------------------------------------------


@dataclass(frozen=True)
class RecordScore:
    """A record's score in a record store's search: its live version's own score,
    lifted to the best score of its stale versions (``lift_records``)."""

    score: float
    own: float | None  # the live version's own score (``None``: only a stale one was hit)
    lifted_from: float | None = None  # the stale versions' best, when it lifted the score

    @property
    def lifted(self) -> bool:
        return self.lifted_from is not None


def lift_records(hits: Iterable[tuple[str, float, bool]]) -> dict[str, RecordScore]:
    """The same rule as a stale episode's, where a record store's item was overwritten.

    A record store (CrewAI's storage, the LangGraph store) keeps each item as one
    single-valued slot, so writing the item again supersedes its version: at the
    search's instant the earlier version is *stale* (ended, its value replaced) and
    the item's live version is what replaced it. ``hits`` are a search's hits over
    live and ended versions, as ``(record, score, stale)``; each record's score is
    its live version's best, lifted to at least its stale versions' best: a stale
    version never outranks what superseded it, and since a record store shows
    current items only, the present answers the question its past matched ("who
    is my employer?" finds "I left Initech and joined Hooli." through "I'm
    employed at Initech."). The caller keeps only the records live at the instant
    (a record ended or deleted has no successor: its past lifts nothing), so the rule
    is bitemporal as the episodes' is: before the change the old version is live.
    The records come in the order the hits first name them."""
    own: dict[str, float] = {}
    past: dict[str, float] = {}
    seen: dict[str, None] = {}  # the records in the order the hits first name them
    for record, score, stale in hits:
        seen.setdefault(record)
        into = past if stale else own
        if score > into.get(record, float("-inf")):
            into[record] = score
    out: dict[str, RecordScore] = {}
    for record in seen:
        mine, old = own.get(record), past.get(record)
        if old is not None and (mine is None or old > mine):
            out[record] = RecordScore(old, mine, old)
        else:
            assert mine is not None
            out[record] = RecordScore(mine, mine)
    return out
