"""A batch of one ``PutOp`` (what ``store.put`` sends) runs outside the general
path of ``_run`` (``ChronomemStore._put``, issue #32: less Python per single put).
It must store exactly what the general path stores: two stores on their own
databases, on clocks moved alike, take the same random puts (new keys, overwrites,
deletes, TTLs, ``index=False`` and field lists), one through ``put`` and one in a
batch the general path runs (the put beside a get of another item, which writes
nothing); every version each holds, in every state, and every read agree."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, PutOp

from langgraph.store.chronomem import ChronomemStore

from ..conftest import ManualClock
from .fakes import CharEmbeddings

NAMESPACES = [("users", "u1"), ("users", "u2"), ("docs",), ("a", "b", "c")]
VALUES = st.one_of(
    st.none(),  # a delete
    st.fixed_dictionaries({"text": st.sampled_from(["tea", "coffee", "green tea", "ü"])}),
    st.fixed_dictionaries(
        {"text": st.sampled_from(["x", "y"]), "tags": st.lists(st.sampled_from(["p", "q"]))}
    ),
)
PUTS = st.lists(
    st.tuples(
        st.sampled_from(NAMESPACES),
        st.sampled_from(["k1", "k2", "k3"]),
        VALUES,
        st.sampled_from([None, False, ["text"], ["text", "tags[*]"]]),  # index
        st.sampled_from([None, 5.0, 60.0]),  # ttl (minutes)
        st.integers(0, 400),  # seconds before the put
    ),
    min_size=1,
    max_size=12,
)


def _stored(store: ChronomemStore) -> list[tuple[Any, ...]]:
    """Every version row the store holds (any state), without its ids, and how many
    vectors it holds."""
    with store.memory.backend.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT subject, predicate, object, valid_from, valid_to, recorded_at, "
            "superseded_at, closed_reason, index_text, metadata, user_id FROM cm_versions"
        ).all()
        vectors = conn.exec_driver_sql("SELECT count(*) FROM cm_vectors").scalar()
    return [*sorted((tuple(r) for r in rows), key=repr), ("vectors", vectors)]


def _open(clock: ManualClock) -> ChronomemStore:
    index = {"dims": 16, "embed": CharEmbeddings(dims=16), "fields": ["text"]}
    return ChronomemStore(clock=clock, index=index)  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(puts=PUTS)
def test_put_stores_what_the_general_path_stores(puts: list[Any]) -> None:
    clocks = ManualClock(), ManualClock()
    single, batched = _open(clocks[0]), _open(clocks[1])
    try:
        for ns, key, value, index, ttl, wait in puts:
            for c in clocks:
                c.advance(seconds=wait)
            single.put(ns, key, value, index, ttl=ttl)
            batched.batch(
                [
                    PutOp(ns, key, value, index=index, ttl=ttl),
                    GetOp(("elsewhere",), "none", refresh_ttl=False),
                ]
            )
        assert _stored(single) == _stored(batched)
        for ns in NAMESPACES:
            for key in ("k1", "k2", "k3"):
                a, b = single.get(ns, key), batched.get(ns, key)
                assert (a is None) == (b is None)
                if a is not None and b is not None:
                    assert (a.value, a.created_at, a.updated_at) == (
                        b.value,
                        b.created_at,
                        b.updated_at,
                    )
        assert single.list_namespaces() == batched.list_namespaces()
    finally:
        single.close()
        batched.close()
