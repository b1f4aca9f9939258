"""One triple, three write paths, one fact.

"alice lives in Paris" arrives through a structured ``remember``, through an
extraction-shaped write citing a source episode (``add_episode`` then
``remember(..., source=ep, extractor=...)``), and again from a second episode.
Every path goes through the same state machine, so they converge to ONE live
fact whose provenance (``why``) lists every episode and the extractor."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chronomem import Memory, State

from .conftest import ManualClock, utc

JAN = utc(2026, 1, 1)
JUN = utc(2026, 6, 1)


def live(memory: Memory, **kw: object) -> list:
    return memory.facts(subject="alice", predicate="lives_in", **kw)


def test_three_write_paths_converge_to_one_fact(memory: Memory, clock: ManualClock) -> None:
    # 1. structured
    r1 = memory.remember("Alice", "lives_in", "Paris", valid_from=JAN)
    assert len(r1.added) == 1 and len(r1.fact_ids) == 1
    fid = r1.fact_ids[0]

    # 2. extraction-shaped: an episode, then the extracted triple citing it
    clock.advance(hours=1)
    ep1 = memory.add_episode("I live in Paris.", role="user", occurred_at=utc(2026, 2, 1))
    r2 = memory.remember(
        "alice", "resides_in", "paris", valid_from=JAN, source=ep1, extractor="rules/1"
    )
    assert r2.added == [] and len(r2.unchanged) == 1, r2
    assert r2.fact_ids == [fid]
    assert r2.superseded_count == 0

    # 3. the same triple from a second episode (passed as an id this time)
    clock.advance(hours=1)
    ep2 = memory.add_episode("Still in Paris, loving it.", role="user", occurred_at=utc(2026, 3, 1))
    r3 = memory.remember(
        "ALICE", "based_in", "Paris", valid_from=JAN, source=ep2.id, extractor="rules/1"
    )
    assert r3.added == [] and r3.fact_ids == [fid]

    facts = live(memory)
    assert [(f.id, f.object, f.valid_from, f.valid_to, f.state) for f in facts] == [
        (fid, "Paris", JAN, None, State.LIVE)
    ]
    assert set(facts[0].source_episode_ids) == {ep1.id, ep2.id}

    prov = memory.why(fid)
    assert prov.fact_id == fid
    assert [e.id for e in prov.episodes] == [ep1.id, ep2.id]  # in the order they occurred
    assert [e.text for e in prov.episodes] == ["I live in Paris.", "Still in Paris, loving it."]
    # the extractor confirmed a fact first written by a structured call: still provenance
    assert prov.extractors == ["rules/1"]
    assert len(prov.versions) == 1 and prov.superseded == []

    # History: one version, and the store keeps believing it from the first write on.
    hist = memory.history("alice", "lives_in")
    assert [(f.object, f.valid_from, f.valid_to) for f in hist] == [("Paris", JAN, None)]
    assert live(memory, known_at=r1.recorded_at)[0].id == fid
    assert live(memory, known_at=r1.recorded_at - timedelta(microseconds=1)) == []
    stats = memory.stats()
    assert (stats.facts, stats.versions, stats.current_versions, stats.episodes) == (1, 1, 1, 2)


def test_extraction_first_then_structured_and_second_episode(
    memory: Memory, clock: ManualClock
) -> None:
    """The extractor's write comes first: its version carries the extractor, and
    later writes from other paths only add provenance."""
    ep1 = memory.add_episode("I moved to Paris in January.", role="user")
    r1 = memory.remember(
        "alice", "lives_in", "Paris", valid_from=JAN, source=ep1, extractor="rules/1"
    )
    fid = r1.fact_ids[0]
    clock.advance(minutes=5)
    r2 = memory.remember("Alice", "lives_in", "Paris", valid_from=JAN)
    assert r2.fact_ids == [fid] and len(r2.unchanged) == 1
    clock.advance(minutes=5)
    ep2 = memory.add_episode("Paris is home now.", role="user")
    r3 = memory.remember(
        "alice", "lives_in", "Paris", source=ep2, extractor="rules/1"
    )  # default start
    assert r3.fact_ids == [fid] and r3.added == []

    prov = memory.why(fid)
    assert [e.id for e in prov.episodes] == [ep1.id, ep2.id]
    assert prov.extractors == ["rules/1"]
    assert [(f.object, f.valid_from, f.valid_to) for f in prov.versions] == [("Paris", JAN, None)]
    assert [f.id for f in live(memory)] == [fid]


def test_paths_then_a_move_keeps_provenance_and_history(memory: Memory, clock: ManualClock) -> None:
    """After the paths converge, a move to Berlin ends Paris: Paris keeps its
    episodes and extractor, and shows up in history as ended."""
    ep1 = memory.add_episode("I live in Paris", role="user")
    r1 = memory.remember(
        "alice", "lives_in", "Paris", valid_from=JAN, source=ep1, extractor="rules/1"
    )
    fid = r1.fact_ids[0]
    ep2 = memory.add_episode("yes, Paris", role="user")
    memory.remember("alice", "lives_in", "Paris", valid_from=JAN, source=ep2, extractor="rules/1")
    memory.remember("alice", "lives_in", "Paris", valid_from=JAN)
    clock.advance(days=1)
    ep3 = memory.add_episode("I moved to Berlin in June", role="user")
    r4 = memory.remember(
        "alice", "lives_in", "Berlin", valid_from=JUN, source=ep3, extractor="rules/1"
    )
    assert r4.superseded_count == 1 and len(r4.added) == 1
    berlin = r4.fact_ids[0]
    assert berlin != fid

    assert [(f.object, f.valid_from, f.valid_to) for f in memory.history("alice", "lives_in")] == [
        ("Paris", JAN, JUN),
        ("Berlin", JUN, None),
    ]
    assert [f.object for f in live(memory, valid_at=utc(2026, 3, 1))] == ["Paris"]
    assert [f.object for f in live(memory, valid_at=utc(2026, 7, 1))] == ["Berlin"]
    # Paris as believed before the move: open-ended
    before = live(
        memory, valid_at=utc(2026, 7, 1), known_at=r4.recorded_at - timedelta(microseconds=1)
    )
    assert [(f.object, f.valid_to) for f in before] == [("Paris", None)]

    prov = memory.why(fid)
    assert {e.id for e in prov.episodes} == {ep1.id, ep2.id}
    assert prov.extractors == ["rules/1"]
    # every version of Paris: the open-ended one (now closed) and the ended one
    assert sorted((f.valid_to is None, f.superseded_at is None) for f in prov.versions) == [
        (False, True),
        (True, False),
    ]
    why_berlin = memory.why(berlin)
    assert [e.id for e in why_berlin.episodes] == [ep3.id]
    assert [(f.object, f.valid_to) for f in why_berlin.superseded] == [("Paris", None)]


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0)])
def test_convergence_does_not_depend_on_arrival_order(
    memory: Memory, clock: ManualClock, order: tuple[int, int, int]
) -> None:
    eps = [memory.add_episode(f"message {i}: I live in Paris", role="user") for i in range(2)]
    writes = [
        lambda: memory.remember("Alice", "lives_in", "Paris", valid_from=JAN),
        lambda: memory.remember(
            "alice", "lives_in", "paris", valid_from=JAN, source=eps[0], extractor="rules/1"
        ),
        lambda: memory.remember(
            "alice", "lives_in", "PARIS", valid_from=JAN, source=eps[1], extractor="rules/1"
        ),
    ]
    fids = set()
    for i in order:
        clock.advance(seconds=1)
        fids.update(writes[i]().fact_ids)
    assert len(fids) == 1
    (fid,) = fids
    facts = live(memory)
    assert [f.id for f in facts] == [fid]
    prov = memory.why(fid)
    assert {e.id for e in prov.episodes} == {eps[0].id, eps[1].id}
    assert prov.extractors == ["rules/1"]
    assert memory.stats().versions == 1
