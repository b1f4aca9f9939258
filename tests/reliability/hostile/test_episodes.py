"""Hostile input to the episodes: ``add_episode``, ``get_episode`` and
``episodes`` (fuzzed round-trips, filters, citing and erasing), and their type checks."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import (
    ChronomemError,
    InvalidType,
    Memory,
    NotFound,
)

from ._inputs import (
    FUZZ,
    UTC,
    Harness,
    aware_datetimes,
    is_aware,
    is_valid_metadata,
    maybe,
    metadatas,
    name_texts,
    or_wrong,
    texts,
)


@FUZZ
@given(data=st.data())
def test_episodes_round_trip_or_refuse(h: Harness, data: st.DataObject) -> None:
    b = h.backend
    text = data.draw(or_wrong(texts(b)), "text")
    role = data.draw(maybe(or_wrong(name_texts(b, 64))), "role")
    occurred = data.draw(maybe(or_wrong(aware_datetimes())), "occurred_at")
    md = data.draw(metadatas(b), "metadata")
    m = h.fresh()
    ep, err = h.attempt(
        "add_episode", lambda: m.add_episode(text, role=role, occurred_at=occurred, metadata=md)
    )
    valid = (
        isinstance(text, str)
        and (role is None or isinstance(role, str))
        and (occurred is None or is_aware(occurred))
        and is_valid_metadata(md)
    )
    if err is not None:
        assert not valid or (isinstance(text, str) and not text.strip()), f"refused: {err!r}"
        return
    assert valid, "an invalid episode was accepted"
    assert ep is not None
    back = m.get_episode(ep.id)
    assert (back.text, back.role, back.metadata) == (text, role, md or {})
    assert back.occurred_at == (occurred if occurred is not None else back.recorded_at)
    assert back == ep
    listed, _ = h.read_only(
        "episodes", lambda: m.episodes(role=role) if role is not None else m.episodes()
    )
    assert [e.id for e in listed or []] == [ep.id]
    window, _ = h.read_only(
        "episodes(window)",
        lambda: (
            m.episodes(since=back.occurred_at, until=back.occurred_at + timedelta(microseconds=1))
            if back.occurred_at < datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
            else m.episodes(since=back.occurred_at)
        ),
    )
    assert [e.id for e in window or []] == [ep.id]
    # It can be cited as a source, and erasing the citing fact erases it.
    r = m.remember("ann", "said", "something", source=ep)
    assert m.why(r.fact_ids[0]).episodes == [back]
    counts = m.erase(r.fact_ids[0])
    assert counts["episodes"] == 1
    _, err = h.read_only("get_episode", lambda: m.get_episode(ep.id))
    assert isinstance(err, NotFound)


def test_episode_filters_are_type_checked(store: Memory) -> None:
    with pytest.raises(InvalidType):
        store.episodes(role=123)  # type: ignore[arg-type]
    with pytest.raises(ChronomemError):
        store.get_episode(123)  # type: ignore[arg-type]
