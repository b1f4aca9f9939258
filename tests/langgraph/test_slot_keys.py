"""Items whose keys and field names hold separator characters never share a
slot (issue #14 C): each scenario also runs on LangGraph's InMemoryStore."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from chronomem import keycodec
from langgraph.store.chronomem import ChronomemStore

from .conftest import snapshot


def _both(store: ChronomemStore, scenario: Any) -> None:
    assert scenario(store) == scenario(InMemoryStore())


def test_the_reported_collision_keeps_both_items(store: ChronomemStore) -> None:
    def scenario(s: BaseStore) -> Any:
        s.put(("ns",), "profile\x1ecity", {"k": 1})
        s.put(("ns",), "profile", {"city\x1ek": 2})
        return [
            snapshot(s.get(("ns",), "profile\x1ecity")),
            snapshot(s.get(("ns",), "profile")),
        ]

    _both(store, scenario)


_piece = st.lists(
    st.sampled_from(["a", "~", keycodec.ESC, keycodec.SEP_SLOT, keycodec.SEP_FIELD]),
    min_size=1,
    max_size=4,
).map("".join)


_examples = itertools.count()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(items=st.lists(st.tuples(_piece, _piece), min_size=2, max_size=5, unique=True))
def test_keys_and_fields_with_separators_match_in_memory(
    store: ChronomemStore, items: list[tuple[str, str]]
) -> None:
    ns = ("ns", f"example{next(_examples)}")  # one store, a fresh namespace per example

    def scenario(s: BaseStore) -> Any:
        for i, (key, field) in enumerate(items):
            s.put(ns, key, {field: i})
        return sorted((snapshot(it) for it in s.search(ns, limit=100)), key=lambda t: t[1])

    assert scenario(store) == scenario(InMemoryStore())
