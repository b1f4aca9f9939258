"""The persisted predicate registry of one store (per tenant), with a cache."""

from __future__ import annotations

import enum
import threading

from sqlalchemy import Connection, bindparam, select, update

from .backends import of
from .errors import UnknownPredicate
from .identity import fold_predicate, require_text
from .predicates import BUILTIN, Cardinality, PredicateSpec, Volatility
from .prepared import Prepared
from .schema import predicates as predicates_table
from .schema import txclock


def _builtin_index() -> dict[str, PredicateSpec]:
    index: dict[str, PredicateSpec] = {}
    for spec in BUILTIN:
        index[spec.name] = spec
        for alias in spec.aliases:
            index[fold_predicate(alias)] = spec
    return index


_BUILTIN_INDEX = _builtin_index()
# prebuilt: ``load`` runs on every write and every read that names a predicate
# (the version check compiled once per dialect and run on the driver's cursor)
_VERSION = Prepared(select(txclock.c.registry_us).where(txclock.c.tenant == bindparam("tenant")))


class _Unread(enum.Enum):
    UNREAD = 0  # Registry.load reads the registry's version itself


_ROWS = select(predicates_table).where(predicates_table.c.tenant == bindparam("tenant"))


class Registry:
    """Resolves predicate names (and aliases) to their spec, per tenant."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int | None, dict[str, PredicateSpec]]] = {}
        self._lock = threading.Lock()

    def invalidate(self, tenant: str) -> None:
        with self._lock:
            self._cache.pop(tenant, None)

    def peek(self, tenant: str) -> dict[str, PredicateSpec] | None:
        """The tenant's cached index (of whichever version was cached last), without
        a read; ``load`` returns the same object while that version is current."""
        with self._lock:
            cached = self._cache.get(tenant)
        return None if cached is None else cached[1]

    def load(
        self, conn: Connection, tenant: str, *, version: int | _Unread | None = _Unread.UNREAD
    ) -> dict[str, PredicateSpec]:
        """The tenant's predicate index. ``version``: the clock row's
        ``registry_us`` when the caller has just read it (the writer's stamp
        returns it), sparing the read."""
        if isinstance(version, _Unread):
            # One small read: another process may have registered a predicate since.
            found: int | None = _VERSION.scalar(conn, {"tenant": tenant})
            version = found
        with self._lock:
            cached = self._cache.get(tenant)
        if cached is not None and cached[0] == version:
            return cached[1]
        index = dict(_BUILTIN_INDEX)
        rows = conn.execute(_ROWS, {"tenant": tenant}).mappings()
        specs: dict[str, PredicateSpec] = {}
        aliases: dict[str, str] = {}
        for r in rows:
            if r["name"] == r["canonical"]:
                specs[r["canonical"]] = PredicateSpec(
                    r["canonical"], Cardinality(r["cardinality"]), Volatility(r["volatility"])
                )
            else:
                aliases[r["name"]] = r["canonical"]
        for name, spec in specs.items():
            index[name] = spec
        for alias, canonical in aliases.items():
            target = specs.get(canonical) or index.get(canonical)
            if target is not None:
                index[alias] = target
        with self._lock:
            self._cache[tenant] = (version, index)
        return index

    @staticmethod
    def builtin(name: str) -> bool:
        """Whether ``name`` is a built-in predicate or alias (no database read)."""
        return fold_predicate(name) in _BUILTIN_INDEX

    def known(self, conn: Connection, tenant: str, name: str) -> bool:
        """Whether ``name`` is a built-in predicate or alias, or registered in the
        tenant (an unknown name resolves to ``MANY`` too, so a spec cannot tell)."""
        return fold_predicate(name) in self.load(conn, tenant)

    def register(self, conn: Connection, tenant: str, spec: PredicateSpec, tx: int) -> None:
        """Persist ``spec`` (and its aliases) inside the caller's transaction, which
        has stamped the tenant's clock row at ``tx`` first: registrations of one
        tenant then run one after another (concurrent ones used to insert the same
        name at once and fail on PostgreSQL), and the alias check sees every
        earlier one. Call ``invalidate`` after the commit."""
        self.save(conn, self.rows_for(tenant, spec, self.load(conn, tenant)))
        conn.execute(update(txclock).where(txclock.c.tenant == tenant).values(registry_us=tx))

    def resolve(self, conn: Connection, tenant: str, name: object) -> PredicateSpec:
        key = fold_predicate(require_text(name, "predicate"))
        spec = self.load(conn, tenant).get(key)
        return spec if spec is not None else PredicateSpec(key)  # unknown: MANY, SLOW

    @staticmethod
    def rows_for(
        tenant: str, spec: PredicateSpec, existing: dict[str, PredicateSpec]
    ) -> list[dict[str, str]]:
        """Rows that persist ``spec``; an alias already bound elsewhere is an error."""
        rows = []
        names = list(dict.fromkeys([spec.name, *(fold_predicate(a) for a in spec.aliases)]))
        if any(len(n) > 255 for n in names):
            raise UnknownPredicate("predicate names and aliases are at most 255 characters")
        for n in names:
            other = existing.get(n)
            if n != spec.name and other is not None and other.name != spec.name:
                raise UnknownPredicate(f"alias {n!r} already names predicate {other.name!r}")
            rows.append(
                {
                    "tenant": tenant,
                    "name": n,
                    "canonical": spec.name,
                    "cardinality": spec.cardinality.value,
                    "volatility": spec.volatility.value,
                }
            )
        return rows

    @staticmethod
    def save(conn: Connection, rows: list[dict[str, str]]) -> None:
        """Insert the rows, or update the ones whose (tenant, name) exists: an
        insert-if-absent that never collides with a concurrent registration."""
        if not rows:
            return
        of(conn).upsert(
            conn,
            predicates_table,
            rows,
            keys=("tenant", "name"),
            columns=("canonical", "cardinality", "volatility"),
        )
