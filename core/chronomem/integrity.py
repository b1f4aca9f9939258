"""``Memory.check()`` / ``chronomem doctor``: find (and optionally repair) damage
that a reader would otherwise meet as errors or wrong answers.

Checked, cheaply and across the whole database (every tenant):

- the SQLite FTS5 text indexes: FTS5's own ``integrity-check``, which also
  compares each index with the text it is built from (repair: rebuild from the
  text; an index whose structure cannot even be read is emptied first);
- invariant I1: two current versions of one slot overlapping in valid time
  (reported only: which one is right is not the store's to decide);
- orphans: source links to a missing fact or episode, vectors of a missing
  version or episode (repair: delete them; they hold no fact).

Repairs run in one write transaction; the report says what was done."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import Connection, and_, delete, exists, func, not_, or_, select
from sqlalchemy.orm import aliased

from . import backends
from .schema import episodes, sources, vectors, versions

if TYPE_CHECKING:
    from .engine import Engine

_FOREVER = 2**62


@dataclass(frozen=True)
class CheckReport:
    """What ``Memory.check`` found. ``ok`` is True when nothing is wrong (after
    the repairs, when ``repair=True``)."""

    backend: str
    fts: dict[str, str] = field(default_factory=dict)  # index -> "ok" or the error
    i1_violations: int = 0  # pairs of current versions of a slot that overlap
    orphan_sources: int = 0
    orphan_vectors: int = 0
    repaired: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return (
            all(v == "ok" for v in self.fts.values())
            and not self.i1_violations
            and not self.orphan_sources
            and not self.orphan_vectors
        )

    def lines(self) -> list[str]:
        out = [f"backend: {self.backend}"]
        out += [f"text index {name}: {state}" for name, state in self.fts.items()]
        out += [
            f"I1 violations (overlapping current versions of a slot): {self.i1_violations}",
            f"orphan source links: {self.orphan_sources}",
            f"orphan vectors: {self.orphan_vectors}",
        ]
        out += [f"repaired: {r}" for r in self.repaired]
        out.append("ok" if self.ok else "PROBLEMS FOUND")
        return out


def _i1_violations(conn: Connection) -> int:
    """Pairs of current versions of one slot that overlap in valid time. The ids
    are compared as ``id || ''``: an expression no index serves, so SQLite pairs
    each version with its slot's current versions (``cm_versions_slot_current``)
    instead of every later id of the tenant by the primary key (a walk of half the
    tenant per version: 17 s at 10k versions)."""
    a, b = aliased(versions), aliased(versions)
    pair = a.c.id.concat("") < b.c.id.concat("")
    q = (
        select(func.count())
        .select_from(a)
        .join(b, and_(a.c.tenant == b.c.tenant, a.c.slot == b.c.slot, pair))
        .where(
            a.c.superseded_at.is_(None),
            b.c.superseded_at.is_(None),
            a.c.valid_from < func.coalesce(b.c.valid_to, _FOREVER),
            b.c.valid_from < func.coalesce(a.c.valid_to, _FOREVER),
        )
    )
    return int(conn.execute(q).scalar_one())


def _orphan_sources() -> object:
    fact = exists().where(
        versions.c.tenant == sources.c.tenant, versions.c.fact_id == sources.c.fact_id
    )
    episode = exists().where(
        episodes.c.tenant == sources.c.tenant, episodes.c.id == sources.c.episode_id
    )
    return or_(not_(fact), not_(episode))


def _orphan_vectors() -> object:
    version = exists().where(
        versions.c.tenant == vectors.c.tenant, versions.c.id == vectors.c.item_id
    )
    episode = exists().where(
        episodes.c.tenant == vectors.c.tenant, episodes.c.id == vectors.c.item_id
    )
    return or_(
        and_(vectors.c.kind == "v", not_(version)),
        and_(vectors.c.kind == "e", not_(episode)),
    )


def _count(conn: Connection, table: object, where: object) -> int:
    return int(conn.execute(select(func.count()).select_from(table).where(where)).scalar_one())  # type: ignore[arg-type]


def inspect(conn: Connection, *, repair: bool) -> CheckReport:
    """Check (and repair) on one connection inside the caller's transaction."""
    backend = backends.of(conn)
    fts, repaired = backend.check_text_indexes(conn, repair=repair)
    n_sources = _count(conn, sources, _orphan_sources())
    n_vectors = _count(conn, vectors, _orphan_vectors())
    if repair and n_sources:
        conn.execute(delete(sources).where(_orphan_sources()))  # type: ignore[arg-type]
        repaired.append(f"deleted {n_sources} orphan source links")
        n_sources = 0
    if repair and n_vectors:
        conn.execute(delete(vectors).where(_orphan_vectors()))  # type: ignore[arg-type]
        repaired.append(f"deleted {n_vectors} orphan vectors")
        n_vectors = 0
    return CheckReport(
        backend=backend.name,
        fts=fts,
        i1_violations=_i1_violations(conn),
        orphan_sources=n_sources,
        orphan_vectors=n_vectors,
        repaired=tuple(repaired),
    )


def check(engine: Engine, *, repair: bool = False) -> CheckReport:
    """See ``Memory.check``."""
    backend = engine.backend
    if repair:
        with backend.write() as conn:
            report = inspect(conn, repair=True)
        if report.repaired:
            engine.invalidate_index()
        return report
    with backend.read() as conn:
        return inspect(conn, repair=False)
