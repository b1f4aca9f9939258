"""``why`` (where a fact came from), ``stats`` (what a scope holds) and ``scopes``
(every scope of the database, with what each holds)."""

from __future__ import annotations

from sqlalchemy import func, select

from . import reads
from .engine import Engine
from .errors import NotFound
from .model import Provenance, ScopeCounts, State, Stats
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


def scopes(engine: Engine) -> list[ScopeCounts]:
    """Every scope that holds facts or episodes, in every tenant, with its own counts
    (not its ancestors'): what a reader needs to pick ``--user``/``--session``."""
    v = engine.now_us()
    cols = (versions.c.tenant, versions.c.user_id, versions.c.agent_id, versions.c.session_id)
    ecols = (
        episodes_table.c.tenant,
        episodes_table.c.user_id,
        episodes_table.c.agent_id,
        episodes_table.c.session_id,
    )
    counts: dict[tuple[str, str, str, str], list[int]] = {}
    with engine.backend.read() as conn:
        for row in conn.execute(
            select(*cols, func.count(versions.c.fact_id.distinct())).group_by(*cols)
        ):
            counts.setdefault(tuple(row[:4]), [0, 0, 0])[0] = int(row[4])
        live = reads.known(None) & reads.in_states({State.LIVE}, v)
        for row in conn.execute(
            select(*cols, func.count(versions.c.fact_id.distinct())).where(live).group_by(*cols)
        ):
            counts.setdefault(tuple(row[:4]), [0, 0, 0])[1] = int(row[4])
        for row in conn.execute(select(*ecols, func.count()).group_by(*ecols)):
            counts.setdefault(tuple(row[:4]), [0, 0, 0])[2] = int(row[4])
    return [
        ScopeCounts(Scope(t, u or None, a or None, s or None), n[0], n[1], n[2])
        for (t, u, a, s), n in sorted(counts.items())
    ]
