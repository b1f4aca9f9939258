"""Model-based: any sequence of remembered values, forgets and clock moves, read
back through CrewAI's recall at every past instant, matches a plain model."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem_adapters.conformance import KitClock
from crewai_chronomem import ChronomemMemory
from crewai_chronomem.conformance import KitExtractor

CITIES = ["Paris", "Berlin", "Rome", "Oslo"]
ops = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(CITIES)),
        st.tuples(st.just("forget"), st.none()),
    ),
    min_size=1,
    max_size=6,
)


def city_of(cm: ChronomemMemory, **when: object) -> list[str]:
    found = cm.recall("ada city", limit=50, **when)
    return [
        m.record.metadata["object"]
        for m in found
        if m.record.metadata.get("kind") == "fact" and m.record.metadata.get("predicate") == "city"
    ]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_recall_as_of_every_instant_matches_the_model(steps: list[tuple[str, str | None]]) -> None:
    clock = KitClock(datetime(2026, 1, 1, tzinfo=timezone.utc), timedelta(seconds=1))
    store = Memory(clock=clock)
    store.register_predicate("city", cardinality="one")
    cm = ChronomemMemory(memory=store, extractor=KitExtractor())
    model: str | None = None
    marks: list[tuple[datetime, str | None]] = [(clock.mark(), None)]
    for op, value in steps:
        clock.advance(minutes=1)
        if op == "write":
            cm.remember(json.dumps({"entity": "ada", "attribute": "city", "value": value}))
            model = value
        elif model is not None:
            ids = [
                m.record.id
                for m in cm.recall("ada city", limit=50)
                if m.record.metadata.get("kind") == "fact"
            ]
            cm.forget(record_ids=ids)
            model = None
        marks.append((clock.mark(), model))
    assert city_of(cm) == ([model] if model else [])
    for at, expected in marks:
        assert city_of(cm, as_of=at) == ([expected] if expected else []), at
        assert city_of(cm.as_of(at)) == ([expected] if expected else [])
    assert len(store.facts(subject="ada", predicate="city")) <= 1  # I1
    store.close()


def test_scope_and_slice_views_and_async(clock) -> None:  # type: ignore[no-untyped-def]
    cm = ChronomemMemory(memory=Memory(clock=clock))
    view = cm.scope("/crew/x")
    assert view.remember("note about ramen").scope == "/crew/x"
    assert len(view.recall("ramen")) == 1
    assert cm.scope("/crew/xy").recall("ramen") == []  # path-aware
    assert len(cm.slice(["/crew/x", "/crew/z"]).recall("ramen")) == 1
    assert asyncio.run(cm.arecall("ramen"))[0].record.scope == "/crew/x"
    assert asyncio.run(cm.aremember("more ramen", scope="/crew/z")) is not None
    assert len(cm.recall("ramen")) == 2
