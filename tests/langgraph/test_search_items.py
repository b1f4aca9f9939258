"""A LangGraph search's page built the short way (issue #32, round eleven)
answers what the long way answers, item for item, score for score:

* ``scoring.rounded`` is ``round(x, DIGITS)``, the same float (its sign too);
* ``reading.search_item`` is ``SearchItem(...)``'s instance, attribute for attribute;
* a search whose cosines are rounded by ``scoring.rounded``, its page's records
  built with their documents decoded (``_hit_records``) and its items filled in
  directly (``to_search_item``) gives what ``round``, the records of before and
  LangGraph's constructor give, on SQLite and PostgreSQL, now and as of a past instant, in
  both score modes, at every step of random puts, deletes and clock moves."""

from __future__ import annotations

import itertools
import math
import struct
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp, SearchItem

from langgraph.store.chronomem import ChronomemStore, keys, reading, scoring
from langgraph.store.chronomem.records import Record, is_doc

from ..conftest import ManualClock
from .fakes import CharEmbeddings

# -- rounding ----------------------------------------------------------------------


def _same(a: float, b: float) -> bool:
    return repr(a) == repr(b)  # -0.0 and 0.0 differ, nan equals nan


def _float32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


@settings(max_examples=3000, deadline=None)
@given(x=st.floats(allow_nan=True, allow_infinity=True))
def test_rounded_is_round_for_any_float(x: float) -> None:
    assert _same(scoring.rounded(x), round(x, scoring.DIGITS))


@settings(max_examples=500, deadline=None)
@given(xs=st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.floats(-1.5, 1.5, width=32)))
def test_rounded_all_is_round_of_each(xs: list[float]) -> None:
    got = scoring.rounded_all(xs)
    assert len(got) == len(xs)
    assert all(_same(g, round(x, scoring.DIGITS)) for g, x in zip(got, xs, strict=True))


@settings(max_examples=3000, deadline=None)
@given(
    x=st.floats(-1.5, 1.5, width=32),  # what a float32 cosine widens to
    n=st.integers(-2_000_000, 2_000_000),
    steps=st.integers(-3, 3),
)
def test_rounded_is_round_at_cosines_and_next_to_halves(x: float, n: int, steps: int) -> None:
    assert _same(scoring.rounded(x), round(x, scoring.DIGITS))
    half = (n + 0.5) / scoring.SCALE  # the doubles next to a rounding tie
    for _ in range(abs(steps)):
        half = math.nextafter(half, math.copysign(math.inf, steps))
    for y in (half, n / scoring.SCALE, _float32(half), -half):
        assert _same(scoring.rounded(y), round(y, scoring.DIGITS)), y


# -- SearchItem ----------------------------------------------------------------------

INSTANTS = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1), timezones=st.just(UTC)
)


@settings(max_examples=300, deadline=None)
@given(
    namespace=st.lists(st.text(min_size=1, max_size=5), max_size=3).map(tuple),
    key=st.text(max_size=8),
    value=st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4), max_size=3),
    created=INSTANTS,
    updated=INSTANTS,
    score=st.none() | st.floats(allow_nan=False),
)
def test_search_item_is_the_constructors(
    namespace: tuple[str, ...],
    key: str,
    value: dict[str, Any],
    created: datetime,
    updated: datetime,
    score: float | None,
) -> None:
    got = reading.search_item(namespace, key, value, created, updated, score)
    want = SearchItem(
        namespace=namespace,
        key=key,
        value=value,
        created_at=created,
        updated_at=updated,
        score=score,
    )
    assert type(got) is SearchItem
    slots = [s for cls in type(want).__mro__ for s in getattr(cls, "__slots__", ())]
    assert slots and {s: getattr(got, s) for s in slots} == {s: getattr(want, s) for s in slots}
    assert got.value is value and got == want and got.dict() == want.dict()


def test_search_item_uses_the_constructor_for_another_layout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reading, "_DIRECT", False)
    at = datetime(2025, 1, 1, tzinfo=UTC)
    got = reading.search_item(("a",), "k", {"x": 1}, at, at, 0.5)
    assert got == SearchItem(("a",), "k", {"x": 1}, at, at, 0.5) and got.score == 0.5


# -- whole searches: the short way against the long way -----------------------------


def _hit_records_before(self: reading.Reader, subjects: Any) -> dict[str, Record | None]:
    """``Reader._hit_records`` as it was (each record's document decoded on use)."""
    found: dict[str, Record | None] = {}
    rest: list[str] = []
    for s in subjects:
        doc = self.hit_docs.get(s)
        parsed = (
            keys.parse_subject(s) if doc is not None and is_doc(doc.predicate, doc.object) else None
        )
        if doc is not None and parsed is not None:
            rec = Record(s, parsed[0], parsed[1], marker_fact=doc)
            m = rec.marker
            if m is not None and m.value is not None and m.ttl is None:
                found[s] = rec
                continue
        rest.append(s)
    if rest:
        found.update(self.items(rest, light=True))
    return found


def _to_search_item_before(rec: Record, score: float | None = None) -> SearchItem:
    value, created, updated = rec.item_parts()
    return SearchItem(
        namespace=rec.namespace,
        key=rec.key,
        value=value,
        created_at=created,
        updated_at=updated,
        score=score,
    )


def _the_long_way(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(scoring, "rounded", lambda x: round(x, scoring.DIGITS))
    mp.setattr(scoring, "rounded_all", lambda xs: [round(x, scoring.DIGITS) for x in xs])
    mp.setattr(reading.Reader, "_hit_records", _hit_records_before)
    mp.setattr(reading, "to_search_item", _to_search_item_before)


NAMESPACES = [("ns", "a"), ("ns", "b")]
WORDS = ["red", "green", "tea", "apple", "river", "stone"]
TEXT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
# (namespace, key, value or None: a delete, index: default / two fields / none, ttl)
PUT = st.tuples(
    st.integers(0, 1),
    st.sampled_from(["k0", "k1", "k2", "k3", "k4"]),
    st.none() | st.fixed_dictionaries({"text": TEXT, "tag": st.sampled_from(["x", "y"])}),
    st.sampled_from(["default", "both", "off"]),
    st.sampled_from([None, 5.0]),
)
STEP = st.one_of(
    st.tuples(st.just("put"), st.lists(PUT, min_size=1, max_size=6)),
    st.tuples(st.just("tick"), st.integers(1, 400)),
)
INDEX: dict[str, Any] = {"default": None, "both": ["text", "tag"], "off": False}
_tenants = itertools.count()


def _shape(items: list[SearchItem]) -> list[tuple[Any, ...]]:
    return [
        (
            i.namespace,
            i.key,
            i.value,
            i.created_at,
            i.updated_at,
            None if i.score is None else repr(i.score),
        )
        for i in items
    ]


def _searches(store: ChronomemStore, query: str) -> list[list[tuple[Any, ...]]]:
    out = []
    for prefix in (("ns", "a"), ("ns",)):
        for limit, offset, filter_ in ((10, 0, None), (3, 1, None), (4, 0, {"tag": "x"})):
            found = store.search(prefix, query=query, limit=limit, offset=offset, filter=filter_)
            out.append(_shape(found))
    return out


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(STEP, min_size=1, max_size=6), query=TEXT)
@example(
    steps=[
        ("put", [(0, "k0", {"text": "red tea", "tag": "x"}, "default", None)]),
        ("put", [(0, "k1", {"text": "red tea", "tag": "y"}, "default", None)]),
        ("tick", 60),
        ("put", [(0, "k2", {"text": "green apple", "tag": "x"}, "both", 5.0)]),
    ],
    query="red tea",
)
def test_a_search_answers_what_the_long_way_answers(
    durable_url: str,
    monkeypatch: pytest.MonkeyPatch,
    steps: list[tuple[Any, ...]],
    query: str,
) -> None:
    clock = ManualClock()
    emb = CharEmbeddings(dims=16)  # few dimensions: many equal cosines, ties broken
    tenant = f"items{next(_tenants)}"

    def opened(score: str) -> ChronomemStore:
        return ChronomemStore(
            durable_url,
            clock=clock,
            tenant=tenant,
            score=score,
            index={"dims": emb.dims, "embed": emb, "fields": ["text"]},
            ttl={"refresh_on_read": False},  # a search writes nothing: one state read
        )

    store = opened("cosine")
    fused = opened("fused")  # (its own memory: its reads stand at the clock's instant)
    try:
        instants = []
        for step in steps:
            if step[0] == "put":
                store.batch(
                    [
                        PutOp(NAMESPACES[n], k, v, index=INDEX[ix], ttl=ttl)
                        for n, k, v, ix, ttl in step[1]
                    ]
                )
            else:
                clock.advance(seconds=step[1])
            instants.append(clock())
            clock.advance(seconds=1)
            views = [store, fused, store.as_of(instants[0].isoformat())]
            for view in views:
                short = _searches(view, query)
                with monkeypatch.context() as mp:
                    _the_long_way(mp)
                    long = _searches(view, query)
                assert short == long, (step, view)
                # (every live item is reached: scored, or listed after the hits)
                assert bool(short[0]) == bool(view.search(("ns", "a"), limit=1))
    finally:
        fused.close()
        store.close()
