"""Reading facts: by filter (``Memory.facts``), by id (``Memory.get``), and which
fact a reference names and whether this scope owns it.

``Receipt.added`` and ``Fact.version_id`` are version ids; a version belongs to
exactly one fact, so its id names that fact as well as the fact id does."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, select

from . import readlog, reads
from .arguments import names
from .batching import chunks
from .engine import Engine
from .errors import InvalidInput, InvalidType, NotFound
from .identity import fold, require_text
from .model import ALL_STATES, Fact, FactRow, State
from .schema import sources as sources_table
from .schema import versions
from .scope import Scope
from .slotkeys import slot_key
from .writer import missing_fact

MAX_LIMIT = 2**62  # larger limits mean "all" (and would not fit a SQL BIGINT)


def check_limit(limit: object) -> int | None:
    if limit is None:
        return None
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise InvalidInput("limit must be a non-negative int")
    return min(limit, MAX_LIMIT)


def read(
    engine: Engine,
    scope: Scope,
    valid_at: int,
    known_at: int | None,
    states: frozenset[State],
    *,
    subject: str | None = None,
    predicate: str | None = None,
    obj: str | None = None,
    limit: int | None = None,
    subject_prefix: str | None = None,
    exact: bool = False,
    subjects: Sequence[str] | None = None,
) -> list[Fact]:
    """``Memory.facts`` (see there) at resolved instants: in one read transaction, or
    (a point read) in one statement."""

    def key(s: object, n: str) -> str:
        return require_text(s, n) if exact else fold(require_text(s, n))

    # A point read that joins its sources is one statement (after the registry's
    # version check): no read transaction needed. A logged read's instant must
    # come from the statement's snapshot: the backend runs the read log's lookup
    # in it (``Backend.point_read``'s ``on_end``).
    point = limit is None and (
        subject is not None
        or (isinstance(subjects, list | tuple) and 0 < len(subjects) <= reads.INLINE)
    )
    on_end = readlog.instant_hook if engine.read_log else None
    with engine.backend.point_read(on_end=on_end) if point else engine.backend.read() as conn:
        preds = None
        if predicate is not None:
            preds = [
                require_text(predicate, "predicate")
                if exact
                else engine.registry.resolve(conn, scope.tenant, predicate).name
            ]
        if subject_prefix is not None and not isinstance(subject_prefix, str):
            raise InvalidType("subject_prefix must be a str")
        q = reads.facts_query(
            scope,
            valid_at=valid_at,
            known_at=known_at,
            states=states,
            subject_key=key(subject, "subject") if subject is not None else None,
            predicates=preds,
            object_key=key(obj, "obj") if obj is not None else None,
            subject_prefix=subject_prefix,
            subject_keys=[key(x, "subjects") for x in names(subjects, "subjects")]
            if subjects is not None
            else None,
            limit=check_limit(limit),
        )
        return q.facts(conn, valid_at)


LIVE = frozenset({State.LIVE})


def citing(
    engine: Engine, scope: Scope, valid_at: int, known_at: int | None, episode_ids: object
) -> list[Fact]:
    """``Memory.facts_citing`` (see there) at resolved instants: in one read
    transaction, the sources by their episode index, then those facts by id."""
    wanted = list(dict.fromkeys(names(episode_ids, "episode_ids")))
    if not wanted:
        return []
    s = sources_table.c
    with engine.backend.read() as conn:
        found: list[str] = []
        for chunk in chunks(wanted):
            found += conn.execute(
                select(s.fact_id).where(s.tenant == scope.tenant, s.episode_id.in_(chunk))
            ).scalars()
        out: list[Fact] = []
        for chunk in chunks(list(dict.fromkeys(found))):
            q = reads.facts_query(
                scope, valid_at=valid_at, known_at=known_at, states=LIVE, fact_ids=chunk
            )
            out += q.facts(conn, valid_at)
        return out


def with_values(
    engine: Engine,
    scope: Scope,
    valid_at: int,
    known_at: int | None,
    subject: object,
    predicate: object,
    objects: object,
) -> list[Fact]:
    """``Memory.facts_with_values`` (see there) at resolved instants: the slot of each
    value in each scope ``scope`` sees, read by slot key in one read transaction."""
    s = require_text(subject, "subject")
    p = require_text(predicate, "predicate")
    wanted = list(dict.fromkeys(names(objects, "objects")))
    if not wanted:
        return []
    slots = [slot_key(sc, s, p, o) for sc in reads.enclosing_scopes(scope) for o in wanted]
    # one prepared statement, and the sources' only when a fact is found (a marker
    # has none): a point read, no read transaction around it
    with engine.backend.point_read() as conn:
        return reads.slot_facts(conn, scope, valid_at=valid_at, known_at=known_at, slots=slots)


def newest(
    engine: Engine,
    scope: Scope,
    valid_at: int,
    known_at: int | None,
    predicate: str,
    limit: int,
    offset: int,
    *,
    exact: bool = False,
) -> list[Fact]:
    """``Memory.newest_facts`` (see there) at resolved instants: in one read
    transaction (the page, then its sources)."""
    with engine.backend.read() as conn:
        name = (
            require_text(predicate, "predicate")
            if exact
            else engine.registry.resolve(conn, scope.tenant, predicate).name
        )
        return reads.newest_facts(
            conn,
            scope,
            valid_at=valid_at,
            known_at=known_at,
            states=LIVE,
            predicate=name,
            limit=limit,
            offset=offset,
        )


def count(
    engine: Engine,
    scope: Scope,
    valid_at: int,
    known_at: int | None,
    predicate: str,
    *,
    exact: bool = False,
) -> int:
    """``Memory.count_facts`` (see there) at resolved instants."""
    with engine.backend.read() as conn:
        name = (
            require_text(predicate, "predicate")
            if exact
            else engine.registry.resolve(conn, scope.tenant, predicate).name
        )
        return reads.count_facts(conn, scope, valid_at=valid_at, known_at=known_at, predicate=name)


def rows(
    engine: Engine,
    scope: Scope,
    valid_at: int,
    known_at: int | None,
    subjects: object,
    *,
    subject_prefix: str | None = None,
    exact: bool = False,
) -> list[FactRow]:
    """``Memory.rows`` (see there) at resolved instants: one prepared statement
    per ``reads.INLINE`` subjects (or one for a prefix); one statement is a point
    read (no transaction), more run in one read transaction (one snapshot)."""
    if subject_prefix is not None and not isinstance(subject_prefix, str):
        raise InvalidType("subject_prefix must be a str")
    groups: list[list[str] | None] = [None]
    if subjects is not None:
        given = names(subjects, "subjects")
        if len(given) == 1 and subject_prefix is None:  # one subject (a get): one statement
            key = given[0] if exact else fold(given[0])
            return reads.point_subject_rows(engine.backend, scope, valid_at, known_at, (key,))
        wanted = list(dict.fromkeys(given if exact else (fold(s) for s in given)))
        if not wanted:
            return []
        step = reads.INLINE
        groups = [wanted[i : i + step] for i in range(0, len(wanted), step)]
    backend = engine.backend
    if subject_prefix is None and len(groups) == 1 and groups[0]:
        # a few subjects: one prepared statement, a point read of its own
        return reads.point_subject_rows(backend, scope, valid_at, known_at, groups[0])
    queries = [
        reads.facts_query(
            scope,
            valid_at=valid_at,
            known_at=known_at,
            states=LIVE,
            subject_keys=group,
            subject_prefix=subject_prefix,
            light=True,
        )
        for group in groups
    ]
    with backend.point_read() if len(queries) == 1 else backend.read() as conn:
        if len(queries) == 1:
            return queries[0].rows(conn)
        return [row for q in queries for row in q.rows(conn)]


def versions_of(
    engine: Engine,
    scope: Scope,
    rid: str,
    valid_at: int,
    known_at: int | None,
    *,
    is_fact_id: bool = False,
) -> list[Fact]:
    """``Memory.get``: the versions (every state) of the fact ``rid`` names
    (``is_fact_id``: ``rid`` is a fact id already, as a ``Fact``'s is)."""
    q = reads.facts_query(
        scope,
        valid_at=valid_at,
        known_at=known_at,
        states=ALL_STATES,
        fact_ref=rid,
        ref_is_fact_id=is_fact_id,
        with_sources=True,
    )
    # one statement: the fact ``rid`` names, its versions and their sources
    with engine.backend.point_read() as conn:
        return q.facts(conn, valid_at)


def own_fact(conn: Connection, scope: Scope, rid: str) -> str:
    """The fact id a write by id (retract, correct, erase) may change, or
    NotFound (quoting the reference as given, never another scope's fact id) /
    ScopeError (the fact is an enclosing scope's shared memory).

    A write by id reaches exactly this scope's facts: a read by id (``get``,
    ``why``) sees this scope and its ancestors, so everything a write by id can
    change, a read by id can see; an ancestor's fact is readable but owned
    elsewhere (ScopeError), and a narrower scope's fact (a user's, seen from the
    tenant) is NotFound for both. Erasure by subject and ``purge`` are the
    administrative sweeps that do take narrower scopes."""
    fid = reads.fact_id_of(conn, scope.tenant, rid)
    owned = conn.execute(
        select(versions.c.id)
        .where(reads.scope_is(versions, scope), versions.c.fact_id == fid)
        .limit(1)
    ).first()
    if owned is None:
        err = missing_fact(conn, scope, fid)
        if isinstance(err, NotFound):
            raise NotFound(f"no fact {rid!r} in this scope")
        raise err
    return fid
