"""Two ``ChronomemStore``s written two ways (``pair``: the store's own paths and
an old one's, on clocks moved alike) and what they are compared on: every version
row of the store's tenant (any state, without its ids) and its vectors
(``stored``), and what the store answers (``answers``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock
from .fakes import CharEmbeddings

_tenants = itertools.count()

# the items a comparison test puts and reads, and a put step of its random steps:
# (kind, namespace, key, value or None for a delete, index paths, ttl, seconds before)
NAMESPACES = [("users", "u1"), ("docs",)]
KEYS = ["k1", "k2"]
VALUES = st.one_of(
    st.none(),  # a delete
    st.fixed_dictionaries({"text": st.sampled_from(["tea", "coffee", "green tea"])}),
    st.fixed_dictionaries(
        {"text": st.sampled_from(["x", "y"]), "tags": st.lists(st.sampled_from(["p", "q"]))}
    ),
)
PUT_STEP = st.tuples(
    st.just("put"),
    st.sampled_from(NAMESPACES),
    st.sampled_from(KEYS),
    VALUES,
    st.sampled_from([None, False, ["text"], ["text", "tags[*]"]]),  # index
    st.sampled_from([None, 1.0, 5.0, 60.0]),  # ttl (minutes)
    st.integers(0, 400),  # seconds before the step
)


def pair(
    url: str | None, user: str | None, old_paths: type[ChronomemStore]
) -> tuple[tuple[ManualClock, ManualClock], ChronomemStore, ChronomemStore]:
    """Two stores of one database, each in a tenant of its own (``user``'s scope
    when given), indexed and with TTLs refreshed on read: the store's own paths
    and ``old_paths``, and their two clocks."""
    clocks = ManualClock(), ManualClock()
    n = next(_tenants)
    index = {"dims": 16, "embed": CharEmbeddings(dims=16), "fields": ["text"]}
    ttl = {"refresh_on_read": True, "default_ttl": None}
    new = ChronomemStore(url, clock=clocks[0], index=index, ttl=ttl, tenant=f"n{n}", user=user)  # type: ignore[arg-type]
    old = old_paths(url, clock=clocks[1], index=index, ttl=ttl, tenant=f"o{n}", user=user)  # type: ignore[arg-type]
    return clocks, new, old


def stored(store: ChronomemStore) -> list[Any]:
    """Every version row of the store's tenant (any state) without its ids, and
    its vectors."""
    tenant = store.memory.scope.tenant
    with store.memory.backend.engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        where, arg = ("tenant = ?", (tenant,)) if sqlite else ("tenant = %(t)s", {"t": tenant})
        rows = conn.exec_driver_sql(
            "SELECT subject, predicate, object, valid_from, valid_to, recorded_at, "
            "superseded_at, closed_reason, index_text, metadata, user_id FROM cm_versions "
            f"WHERE {where}",
            arg,
        ).all()
        vectors = conn.exec_driver_sql(f"SELECT vec FROM cm_vectors WHERE {where}", arg).all()
    return [*sorted((tuple(r) for r in rows), key=repr), sorted(bytes(v[0]) for v in vectors)]


def answers(
    store: ChronomemStore, namespaces: Sequence[tuple[str, ...]], keys: Sequence[str]
) -> list[Any]:
    """Each item's ``get``, each namespace's searches (with a query and without),
    and ``list_namespaces``, none refreshing a TTL."""
    out: list[Any] = []
    for ns in namespaces:
        for key in keys:
            item = store.get(ns, key, refresh_ttl=False)
            out.append(None if item is None else (item.value, item.created_at, item.updated_at))
        found = store.search(ns, query="tea", limit=10, refresh_ttl=False)
        out.append([(i.key, i.value, i.score) for i in found])
        out.append([(i.key, i.value) for i in store.search(ns, limit=10, refresh_ttl=False)])
    out.append(store.list_namespaces())
    return out
