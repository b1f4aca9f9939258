"""Physical deletion (docs/design.md §8): ``erase``, ``erase_subject``, ``purge``.

The one module that deletes stored text: versions, source links and episodes,
and their vectors (through ``retrieval.indexing``, which owns ``cm_vectors``);
the text indexes follow by trigger or generated column. Afterwards
every process's mirror of the tenant is told to reload, the backend cleans
its indexes and pages, and this process forgets its cached text."""

from __future__ import annotations

from sqlalchemy import Connection, delete, select, update

from . import readlog, reads
from .batching import chunks
from .engine import Engine
from .errors import NotFound
from .facts import own_fact
from .retrieval.indexing import delete_vectors
from .schema import episodes as episodes_table
from .schema import predicates as predicates_table
from .schema import sources, txclock, versions
from .scope import Scope
from .writer import stamp

Counts = dict[str, int]


def _counts() -> Counts:
    return {"versions": 0, "episodes": 0, "vectors": 0, "sources": 0}


def erase(
    engine: Engine,
    scope: Scope,
    *,
    fact_ref: str | None = None,
    subject_key: str | None = None,
    subject: str | None = None,
    descendants: bool = True,
) -> Counts:
    """Erase every fact about ``subject_key`` in ``scope`` and (``descendants``)
    the scopes under it (``subject``: the name as given, for the error), or the
    one fact ``fact_ref`` names, which must be this scope's own. Never an enclosing scope's shared memory: that is erased
    through its own scope."""
    with engine.backend.write() as conn:
        tx = _lock_tenant(engine, conn, scope.tenant)
        if fact_ref is not None:
            fids = [own_fact(conn, scope, fact_ref)]
        else:
            where = reads.scope_within if descendants else reads.scope_is
            fids = list(
                conn.execute(
                    select(versions.c.fact_id)
                    .where(where(versions, scope), reads.subject_is(str(subject_key)))
                    .distinct()
                ).scalars()
            )
        if not fids:
            raise NotFound(f"no facts about {subject!r} in this scope")
        counts = _counts()
        for chunk in chunks(fids):
            _erase_facts(conn, scope, chunk, counts)
        _mark_erased(conn, scope.tenant, tx)
        engine.backend.after_erase(conn)
    _after(engine)
    return counts


def _erase_facts(conn: Connection, scope: Scope, fids: list[str], counts: Counts) -> None:
    t = scope.tenant
    ids = list(
        conn.execute(
            select(versions.c.id).where(versions.c.tenant == t, versions.c.fact_id.in_(fids))
        ).scalars()
    )
    eps = set(
        conn.execute(
            select(sources.c.episode_id).where(sources.c.tenant == t, sources.c.fact_id.in_(fids))
        ).scalars()
    )
    counts["sources"] += conn.execute(
        delete(sources).where(sources.c.tenant == t, sources.c.fact_id.in_(fids))
    ).rowcount
    counts["vectors"] += delete_vectors(conn, t, "v", ids)
    counts["versions"] += conn.execute(
        delete(versions).where(versions.c.tenant == t, versions.c.fact_id.in_(fids))
    ).rowcount
    # only this scope's (and its descendants') episodes: never an enclosing scope's
    eps = set(
        conn.execute(
            select(episodes_table.c.id).where(
                reads.scope_within(episodes_table, scope), episodes_table.c.id.in_(list(eps))
            )
        ).scalars()
    )
    still_cited = set(
        conn.execute(
            select(sources.c.episode_id).where(
                sources.c.tenant == t, sources.c.episode_id.in_(list(eps))
            )
        ).scalars()
    )
    orphans = sorted(eps - still_cited)
    if orphans:
        counts["vectors"] += delete_vectors(conn, t, "e", orphans)
        counts["episodes"] += conn.execute(
            delete(episodes_table).where(
                episodes_table.c.tenant == t, episodes_table.c.id.in_(orphans)
            )
        ).rowcount
    readlog.forget(conn, t, version_ids=ids, episode_ids=orphans)


def purge(engine: Engine, scope: Scope) -> Counts:
    """Physically delete everything in ``scope`` and the scopes under it (a user's
    purge takes their sessions too; other users are untouched). A tenant's purge
    also drops its registered predicates and its clock row."""
    t = scope.tenant
    whole_tenant = scope.user is None and scope.agent is None and scope.session is None
    with engine.backend.write() as conn:
        tx = _lock_tenant(engine, conn, t)
        vis = reads.scope_within(versions, scope)
        vids = list(conn.execute(select(versions.c.id).where(vis)).scalars())
        fids = list(conn.execute(select(versions.c.fact_id).where(vis).distinct()).scalars())
        eps_vis = reads.scope_within(episodes_table, scope)
        eids = list(conn.execute(select(episodes_table.c.id).where(eps_vis)).scalars())
        counts = _counts()
        for chunk in chunks(fids):
            counts["sources"] += conn.execute(
                delete(sources).where(sources.c.tenant == t, sources.c.fact_id.in_(chunk))
            ).rowcount
        counts["vectors"] = delete_vectors(conn, t, "v", vids) + delete_vectors(conn, t, "e", eids)
        counts["versions"] = conn.execute(delete(versions).where(vis)).rowcount
        counts["episodes"] = conn.execute(delete(episodes_table).where(eps_vis)).rowcount
        readlog.forget(conn, t, version_ids=vids, episode_ids=eids)
        readlog.forget_scope(conn, scope)
        if whole_tenant:
            conn.execute(delete(predicates_table).where(predicates_table.c.tenant == t))
            engine.registry.invalidate(t)
            # nothing of the tenant is left, not even its name in the clock table
            conn.execute(delete(txclock).where(txclock.c.tenant == t))
        else:
            _mark_erased(conn, t, tx)
        engine.backend.after_erase(conn)
    _after(engine)
    return counts


def _lock_tenant(engine: Engine, conn: Connection, tenant: str) -> int:
    """Stamp the sweep before it reads anything: the tenant's clock row stays
    locked until commit, so no write of the tenant commits between the sweep's
    reads and its deletes. (On PostgreSQL each statement sees the latest
    commits: a version written in between would be deleted with the fact's
    other versions while its vector, listed before it existed, stayed.)"""
    return stamp(conn, tenant, engine.tx_us())


def _mark_erased(conn: Connection, tenant: str, tx: int) -> None:
    """Tell every process's search mirror of this tenant to reload."""
    conn.execute(update(txclock).where(txclock.c.tenant == tenant).values(erased_us=tx))


def _after(engine: Engine) -> None:
    engine.backend.maintenance_after_erase()
    engine.invalidate_index()
