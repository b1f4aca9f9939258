"""A ``get`` in the store's present (no pinned run, not a view) reads its item
by one ``Memory.rows`` point read at ``_now()`` without building a ``Reader``
(``ChronomemStore._item``), the statement run on a kept driver connection
(``Backend.point_fetch``), and fills its ``Item`` in directly
(``reading.to_item``). It must answer, refresh and store what the reader's
path did (``_ReaderGet``: ``Reader.item``, LangGraph's ``Item`` constructor):
two stores on clocks moved alike take the same random puts (values, deletes,
TTLs, index paths) and gets (refreshing a TTL or not); every get's ``Item``,
attribute for attribute, every version each store holds and every read agree.
On a SQLite file (the driver's own path), in-memory SQLite and PostgreSQL, in a
tenant's scope and in a user's."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import Item

from langgraph.store.chronomem import ChronomemStore, reading
from langgraph.store.chronomem.records import Record

from ._store_compare import KEYS, NAMESPACES, PUT_STEP, answers, pair, stored
from .test_search_items import INSTANTS  # search_item's twin test draws the same instants

STEPS = st.lists(
    st.one_of(
        PUT_STEP,
        st.tuples(
            st.just("get"),
            st.sampled_from(NAMESPACES),
            st.sampled_from([*KEYS, "missing"]),
            st.none(),
            st.none(),
            st.sampled_from([None, True, False]),  # refresh_ttl
            st.integers(0, 400),
        ),
    ),
    min_size=1,
    max_size=12,
)


class _ReaderGet(ChronomemStore):
    """The get as it was: ``Reader.item`` at ``_now()``, LangGraph's constructor."""

    def _item(self, subject: str, refresh: bool, ctx: Any) -> Item | None:
        reader = self._reader(ctx)
        rec = reader.item(subject)
        if rec is None:
            return None
        value, created, updated = rec.item_parts()
        item = Item(
            value=value,
            key=rec.key,
            namespace=rec.namespace,
            created_at=created,
            updated_at=updated,
        )
        pinned = reader.known_at is not None and self._pin is None
        m = rec.marker
        if refresh and not pinned and self._pin is None and m is not None and m.ttl:
            self._refresh_and_write(reader, {}, {subject: rec}, {subject: rec}, ctx)
        return item


def _attrs(item: Item | None) -> Any:
    if item is None:
        return None
    return (
        type(item),
        item.value,
        type(item.value),
        item.key,
        item.namespace,
        type(item.namespace),
        item.created_at,
        item.created_at.tzinfo,
        item.updated_at,
        item.updated_at.tzinfo,
    )


@pytest.fixture(params=["sqlite-file", "sqlite-memory", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """A file store (its point reads on a kept driver connection), in memory, PostgreSQL."""
    if request.param == "sqlite-file":
        return str(tmp_path / "store.db")
    if request.param == "sqlite-memory":
        return None
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.mark.parametrize("user", [None, "ann"], ids=["tenant scope", "user scope"])
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_a_get_answers_refreshes_and_stores_what_the_readers_get_did(
    where: str | None, user: str | None, steps: list[Any]
) -> None:
    clocks, new, old = pair(where, user, _ReaderGet)
    try:
        for kind, ns, key, value, paths, arg, wait in steps:
            for c in clocks:
                c.advance(seconds=wait)
            if kind == "put":
                for store in (new, old):
                    store.put(ns, key, value, paths, ttl=arg)
            else:
                got = [_attrs(store.get(ns, key, refresh_ttl=arg)) for store in (new, old)]
                assert got[0] == got[1]
            assert stored(new) == stored(old)
        assert answers(new, NAMESPACES, KEYS) == answers(old, NAMESPACES, KEYS)
    finally:
        new.close()
        old.close()


@settings(max_examples=200, deadline=None)
@given(
    namespace=st.lists(st.text(min_size=1, max_size=5), max_size=3).map(tuple),
    key=st.text(max_size=5),
    value=st.dictionaries(st.text(max_size=3), st.integers() | st.text(max_size=3), max_size=3),
    created=INSTANTS,
    updated=INSTANTS,
)
def test_to_item_is_the_constructors_item(
    namespace: tuple[str, ...],
    key: str,
    value: dict[str, Any],
    created: datetime,
    updated: datetime,
) -> None:
    class _Parts(Record):
        __slots__ = ()

        def item_parts(self) -> tuple[dict[str, Any], datetime, datetime]:
            return value, created, updated

    rec = _Parts("s", namespace, key)
    got = reading.to_item(rec)
    want = Item(value=value, key=key, namespace=namespace, created_at=created, updated_at=updated)
    assert _attrs(got) == _attrs(want)
    assert got.value is value  # kept as given, as the constructor keeps it
    assert got == want
    assert got.dict() == want.dict()
