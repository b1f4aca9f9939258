"""``Memory.latest_episodes`` and ``Memory.tagged_episodes``: a transcript's tail
and a lookup by the caller's keys, exactly one scope, on every backend."""

from __future__ import annotations

import pytest

from chronomem import InvalidType, Memory

from .conftest import ManualClock


def _fill(m: Memory, clock: ManualClock, n: int, tag: str) -> list[str]:
    ids = []
    for i in range(n):
        clock.advance(seconds=1)
        meta = {"t": {"kind": tag, "id": f"{tag}{i}"}}
        batch = m.add_episodes([{"text": f"{tag} {i}.{j}", "metadata": meta} for j in range(2)])
        ids += [e.id for e in batch]
    return ids


def test_latest_pages_back_through_exactly_one_scope(memory: Memory, clock: ManualClock) -> None:
    user = memory.scoped(user="u")
    session = user.scoped(session="s")
    _fill(user, clock, 3, "parent")
    mine = _fill(session, clock, 7, "own")
    _fill(user.scoped(session="other"), clock, 3, "sibling")
    seen, before = [], None
    while page := session.latest_episodes(3, before=before):
        seen += [e.id for e in page]
        before = page[-1]
    assert seen == mine[::-1]  # newest first, same-transaction ties by creation order
    assert [e.id for e in session.latest_episodes(100)] == mine[::-1]
    cut = session.latest_episodes(100)[5].recorded_at
    assert [e.id for e in session.latest_episodes(100, known_at=cut)] == [
        e for e in mine[::-1] if e in {x.id for x in session.episodes(known_at=cut)}
    ]


def test_tagged_reads_only_the_matching_episodes(memory: Memory, clock: ManualClock) -> None:
    session = memory.scoped(user="u", session="s")
    _fill(session, clock, 4, "a")
    _fill(session, clock, 4, "b")
    _fill(memory.scoped(user="u"), clock, 4, "a")  # the parent's are not this scope's
    got = session.tagged_episodes(("t", "id"), ["a1", "b2", "zz"])
    assert sorted(e.text for e in got) == ["a 1.0", "a 1.1", "b 2.0", "b 2.1"]
    only_b = session.tagged_episodes(("t", "id"), ["a1", "b2"], where={"kind": "b"})
    assert [e.text for e in only_b] == ["b 2.0", "b 2.1"]
    after = session.tagged_episodes(("t", "kind"), ["a"], after=got[1])
    assert [e.text for e in after] == ["a 2.0", "a 2.1", "a 3.0", "a 3.1"]
    assert session.count_tagged(("t", "kind"), ["a", "b"]) == 16
    assert session.tagged_episodes(("t", "id"), []) == []
    with pytest.raises(InvalidType):
        session.tagged_episodes("t", ["a"])
    with pytest.raises(InvalidType):
        session.latest_episodes(3, before="not an episode")  # type: ignore[arg-type]
