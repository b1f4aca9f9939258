"""``why`` (where a fact came from) and ``stats`` (what a scope holds)."""

from __future__ import annotations

from sqlalchemy import func, select

from . import reads
from .engine import Engine
from .errors import NotFound
from .model import Provenance, State, Stats
from .schema import episodes as episodes_table
from .schema import sources, versions
from .scope import Scope
from .timeutil import opt_dt


def why(engine: Engine, scope: Scope, rid: str, *, is_fact_id: bool = False) -> Provenance:
    """Every version of the fact ``rid`` names ever recorded, its source episodes,
    the extractors that wrote it, and the versions its writes superseded
    (``is_fact_id``: ``rid`` is a fact id already, as a ``Fact``'s is)."""
    v = engine.now_us()
    t = scope.tenant
    with engine.backend.read() as conn:
        fact_id = rid if is_fact_id else reads.fact_id_of(conn, t, rid)
        rows = (
            conn.execute(
                select(versions)
                .where(reads.scope_visible(versions, scope), versions.c.fact_id == fact_id)
                .order_by(versions.c.recorded_at, versions.c.valid_from)
            )
            .mappings()
            .all()
        )
        if not rows:
            raise NotFound(f"no fact {rid!r} in this scope")
        ids = [r["id"] for r in rows]
        src = reads.sources_of(conn, t, [fact_id]).get(fact_id, [])
        cited_by = set(
            conn.execute(
                select(sources.c.extractor).where(
                    sources.c.tenant == t,
                    sources.c.fact_id == fact_id,
                    sources.c.extractor.is_not(None),
                )
            ).scalars()
        )
        eps = (
            conn.execute(
                reads.episodes_query(scope)
                .where(episodes_table.c.id.in_(src))
                .order_by(episodes_table.c.occurred_at)
            )
            .mappings()
            .all()
            if src
            else []
        )
        replaced = (
            conn.execute(
                select(versions).where(
                    versions.c.tenant == t,
                    versions.c.superseded_by.in_(ids),
                    versions.c.fact_id != fact_id,
                )
            )
            .mappings()
            .all()
        )
    return Provenance(
        fact_id=fact_id,
        versions=[reads.to_fact(r, v, src) for r in rows],
        episodes=[reads.to_episode(e) for e in eps],
        extractors=sorted({r["extractor"] for r in rows if r["extractor"]} | cited_by),
        superseded=[reads.to_fact(r, v) for r in replaced],
    )


def stats(engine: Engine, scope: Scope) -> Stats:
    v = engine.now_us()
    vis = reads.scope_visible(versions, scope)
    distinct_facts = func.count(versions.c.fact_id.distinct())
    with engine.backend.read() as conn:

        def one(q: object) -> int:
            return int(conn.execute(q).scalar_one())  # type: ignore[call-overload]

        n_versions = one(select(func.count()).where(vis))
        n_current = one(select(func.count()).where(vis, versions.c.superseded_at.is_(None)))
        n_facts = one(select(distinct_facts).where(vis))
        n_live = one(
            select(distinct_facts).where(vis, reads.known(None), reads.in_states({State.LIVE}, v))
        )
        n_eps = one(select(func.count()).where(reads.scope_visible(episodes_table, scope)))
        n_preds = one(select(func.count(versions.c.predicate.distinct())).where(vis))
        last = conn.execute(select(func.max(versions.c.recorded_at)).where(vis)).scalar()
    return Stats(n_facts, n_live, n_versions, n_current, n_eps, n_preds, opt_dt(last))
