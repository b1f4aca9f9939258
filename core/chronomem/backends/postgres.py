"""PostgreSQL: for when one machine's embedded file is not enough.

Writers take a transaction-scoped advisory lock per slot and read the slot's
current versions ``FOR UPDATE``; invariant I1 is also an exclusion constraint
(see ``schema``)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, create_engine, text

from ..errors import ChronomemError, StoreUnavailable
from ..keycodec import SEP_FIELD, join
from .base import Backend


def lock_key(tenant: str, slot: str) -> str:
    """The advisory-lock name of a slot: an injective join of tenant and slot key."""
    return join((tenant, slot), SEP_FIELD)


class PostgresBackend(Backend):
    name = "postgresql"

    def __init__(self, url: str):
        if url.startswith("postgres://"):
            url = "postgresql://" + url[len("postgres://") :]
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url[len("postgresql://") :]
        engine = create_engine(url, pool_pre_ping=True, pool_size=8, max_overflow=16)
        super().__init__(engine)

    def lock_slots(self, conn: Connection, tenant: str, slots: Sequence[str]) -> None:
        # One statement, locks taken in sorted order (no deadlock between writers of
        # overlapping slot sets). Writers already serialize per tenant on the clock row;
        # these guard the slots against any writer that does not (maintenance, imports).
        if not slots:
            return
        conn.execute(
            text(
                "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) "
                "FROM unnest(CAST(:keys AS text[])) AS k ORDER BY k"
            ),
            {"keys": sorted({lock_key(tenant, s) for s in slots})},
        )

    def translate_error(self, exc: BaseException, *, connecting: bool) -> ChronomemError | None:
        import psycopg

        if connecting and isinstance(exc, psycopg.OperationalError):
            u = self.engine.url
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return StoreUnavailable(
                f"cannot connect to PostgreSQL at {u.host or 'localhost'}:{u.port or 5432} "
                f"(database {u.database!r}, user {u.username!r}): {reason}. Check the URL's "
                "host, port, user and database, and that the server is running and reachable."
            )
        return None

    @property
    def for_update(self) -> bool:
        return True

    def after_erase(self, conn: Connection) -> None:
        # Dead tuples keep erased text on disk until vacuum; see maintenance.
        pass

    def maintenance_after_erase(self) -> None:
        # VACUUM removes the dead tuples (the rows' text stays in the pages' free
        # space until reused: see SECURITY.md); ANALYZE rewrites the planner
        # statistics (pg_stats most-common values, histograms, most-common lexemes)
        # from the remaining rows, so an erased value does not outlive its row there.
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for table in ("cm_versions", "cm_episodes", "cm_vectors", "cm_sources"):
                conn.execute(text(f"VACUUM (ANALYZE) {table}"))
