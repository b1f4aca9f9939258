"""A new item's plain put is planned without ``plan_document``'s branches
(``writes.plan_document``'s first case): the same operations as the general
planner (``writes._plan_document``) makes of every put of a new item, with or
without a TTL, any index paths, refreshed or not, a creation time or none."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph.store.chronomem import writes

leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["", " ", "tea", "a\x00b"])
)
values = st.dictionaries(
    st.sampled_from(["text", "tags", "a", "b"]),
    st.one_of(leaf, st.lists(leaf, max_size=3), st.dictionaries(st.just("c"), leaf)),
    max_size=4,
)
paths = st.sampled_from(
    [(), ("$",), ("text",), ("text", "tags[*]"), ("a.c",), ("tags[*]",), ("b", "a")]
)


@given(
    value=st.one_of(st.none(), values),
    index=paths,
    ttl=st.sampled_from([None, 1.0, 30.0]),
    at=st.integers(0, 2**52),
    refresh=st.booleans(),
    created=st.one_of(st.none(), st.integers(0, 2**52)),
)
@settings(max_examples=300, deadline=None)
def test_a_new_items_plan_is_the_general_plan(
    value: dict[str, Any] | None,
    index: tuple[str, ...],
    ttl: float | None,
    at: int,
    refresh: bool,
    created: int | None,
) -> None:
    put = writes.prepare(("users", "u1"), "k", value, index if value is not None else (), ttl)
    fast = writes.plan_document(put, None, at, refresh=refresh, created=created)
    general = writes._plan_document(put, None, at, refresh=refresh, created=created)
    assert fast == general
