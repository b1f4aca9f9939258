"""``asked_at`` (issue #28): the instant a question is asked. The query's relative
times ("yesterday", "10 days ago", "last Friday") count from it; it moves the time
window's boost and the ``episode_window`` leg, and never filters what is searched."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem.errors import InvalidType, NaiveDatetime
from chronomem.queries import RecallQuery, SearchQuery
from chronomem.readlog.args import decode, encode
from chronomem.retrieval.querytime import time_window
from chronomem.retrieval.search import WINDOW_DAYS, short_past
from tests.conftest import utc

STORE = "Jon: I opened the clothing store"
Q = "when did Jon open the store yesterday"


def _twins(memory: Memory) -> None:
    memory.add_episode(STORE, occurred_at=utc(2023, 2, 1, 12))
    memory.add_episode(STORE, occurred_at=utc(2023, 2, 3, 12))


def test_relative_times_count_from_asked_at(memory: Memory) -> None:
    _twins(memory)
    hits = memory.search(Q, k=2, include_episodes=True, asked_at=utc(2023, 2, 4, 9))
    assert [h.episode.occurred_at for h in hits] == [utc(2023, 2, 3, 12), utc(2023, 2, 1, 12)]
    assert [h.explain["in_time_window"] for h in hits] == [True, False]
    # the other day's twin is outside the window and still found (a boost, not a filter)
    hits = memory.search(Q, k=2, include_episodes=True, asked_at=utc(2023, 2, 2, 9))
    assert [h.episode.occurred_at for h in hits] == [utc(2023, 2, 1, 12), utc(2023, 2, 3, 12)]
    assert [h.explain["in_time_window"] for h in hits] == [True, False]
    # without it, relative to the store's now (2026): "yesterday" holds neither
    now = memory.search(Q, k=2, include_episodes=True)
    assert [h.explain["in_time_window"] for h in now] == [False, False]


def test_asked_at_defaults_to_the_valid_instant(memory: Memory) -> None:
    _twins(memory)
    at = utc(2023, 2, 4, 9)
    by_valid = memory.search(Q, k=2, include_episodes=True, valid_at=at)
    both = memory.search(Q, k=2, include_episodes=True, valid_at=at, asked_at=at)
    assert [(h.episode.id, h.score) for h in by_valid] == [(h.episode.id, h.score) for h in both]
    assert by_valid[0].explain["in_time_window"] is True


def test_asked_at_filters_nothing(memory: Memory) -> None:
    """An episode that occurred after the question, and a fact valid only after it,
    are still found: only ``valid_at``/``known_at`` select what is searched."""
    memory.add_episode("Jon: the clothing store got a new sign", occurred_at=utc(2024, 5, 1))
    memory.remember("jon", "owns", "a clothing store", valid_from=utc(2024, 6, 1))
    hits = memory.search(
        "clothing store sign yesterday", k=5, include_episodes=True, asked_at=utc(2023, 2, 4)
    )
    assert {h.episode.text for h in hits if h.episode} == {"Jon: the clothing store got a new sign"}
    assert {h.text for h in hits if h.fact} == {"jon has a clothing store"}
    assert all(h.explain["in_time_window"] is False for h in hits)


def test_a_short_past_window_finds_episodes_its_words_rank_low(memory: Memory) -> None:
    """ "10 days ago": the episodes of that time vote in their own leg, so the one the
    question means is found although thirty others match more of its words."""
    for i in range(30):
        memory.add_episode(
            f"which kitchen appliance should I buy, option {i}", occurred_at=utc(2023, 1, 2 + i)
        )
    memory.add_episode("I bought a stand mixer for the kitchen", occurred_at=utc(2023, 3, 15, 9))
    q = "What kitchen appliance did I buy 10 days ago?"
    asked = memory.search(q, k=5, include_episodes=True, asked_at=utc(2023, 3, 25, 18))
    assert asked[0].episode.text == "I bought a stand mixer for the kitchen"
    assert "episode_window" in asked[0].explain["legs"]
    plain = memory.search(q, k=5, include_episodes=True)
    assert "I bought a stand mixer for the kitchen" not in [h.episode.text for h in plain]
    assert all("episode_window" not in h.explain["legs"] for h in plain)


def test_only_a_short_window_over_by_the_question_gets_the_leg() -> None:
    day = 86_400_000_000
    assert short_past((0, day), day) == (0, day)
    assert short_past((0, int(WINDOW_DAYS) * day), int(WINDOW_DAYS) * day) is not None
    assert short_past((0, (int(WINDOW_DAYS) + 1) * day), 100 * day) is None  # a month
    assert short_past((0, day), day - 1) is None  # "tonight": not over yet
    assert short_past(None, day) is None


@pytest.mark.parametrize("bad", [datetime(2023, 2, 4), "2023-02-04"])
def test_asked_at_is_checked_like_the_other_instants(memory: Memory, bad: object) -> None:
    error = NaiveDatetime if isinstance(bad, datetime) else InvalidType
    with pytest.raises(error, match="asked_at"):
        memory.search("store", asked_at=bad)  # type: ignore[arg-type]
    with pytest.raises(error, match="asked_at"):
        memory.recall("store", asked_at=bad)  # type: ignore[arg-type]


def test_recall_passes_asked_at_to_its_search(memory: Memory) -> None:
    memory.add_episode("Jon: I opened the clothing store", occurred_at=utc(2023, 2, 3, 12))
    memory.add_episode("Jon: I closed the clothing store", occurred_at=utc(2023, 1, 3, 12))
    block = memory.recall(Q, k=1, include_episodes=True, asked_at=utc(2023, 2, 4, 9))
    assert "opened" in block and "closed" not in block


def test_the_read_log_stores_asked_at_as_an_instant() -> None:
    at = datetime(2023, 2, 4, 9, tzinfo=timezone.utc)
    for query in (SearchQuery("store", asked_at=at), RecallQuery("store", asked_at=at)):
        stored = encode(query)
        assert isinstance(stored["asked_at"], int)
        assert decode(stored)["asked_at"] == at


EPISODE_DAYS = [utc(2023, 1, 1) + timedelta(days=d) for d in range(0, 60, 6)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.datetimes(
        min_value=datetime(2022, 12, 1),
        max_value=datetime(2023, 4, 1),
        timezones=st.just(timezone.utc),
    ),
    st.sampled_from(["yesterday", "a week ago", "last Friday", "10 days ago", "last month"]),
)
def test_asked_at_never_changes_which_hits_are_found(asked: datetime, phrase: str) -> None:
    """Whatever the question's instant, the same episodes are found (k above their
    number): asked_at reorders, never removes."""
    with Memory() as m:
        for i, when in enumerate(EPISODE_DAYS):
            m.add_episode(f"Jon: I went to the gym, visit {i}", occurred_at=when)
        q = f"when did Jon go to the gym {phrase}"
        plain = m.search(q, k=50, include_episodes=True)
        asked_hits = m.search(q, k=50, include_episodes=True, asked_at=asked)
        assert {h.episode.id for h in asked_hits} == {h.episode.id for h in plain}
        assert len(plain) == len(EPISODE_DAYS)


def _us(d: datetime) -> int:
    return (d - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)


@given(
    st.datetimes(
        min_value=datetime(1950, 3, 1),
        max_value=datetime(2090, 1, 1),
        timezones=st.just(timezone.utc),
    ),
    st.sampled_from([("month", 30), ("year", 365)]),
)
def test_the_past_month_is_the_last_thirty_days(now: datetime, unit: tuple[str, int]) -> None:
    today = datetime(now.year, now.month, now.day, tzinfo=timezone.utc)
    window = time_window(f"what did I buy in the past {unit[0]}?", _us(now))
    assert window == (_us(today - timedelta(days=unit[1])), _us(today + timedelta(days=1)))


@pytest.mark.parametrize("habit", ["on Saturday mornings", "on Sundays", "on Friday nights"])
def test_a_weekday_habit_names_no_date(habit: str) -> None:
    assert time_window(f"What time do I wake up {habit}?", _us(utc(2023, 6, 15))) is None
    assert time_window("What did I do on Saturday?", _us(utc(2023, 6, 15))) is not None


@pytest.mark.parametrize(
    ("phrase", "days"),
    [("in the past three months", 90), ("in the last two weeks", 14), ("past few days", 3)],
)
def test_the_last_n_units_reach_back_from_today(phrase: str, days: int) -> None:
    now = utc(2023, 5, 30, 20)
    window = time_window(f"How many times did I bake {phrase}?", _us(now))
    assert window == (_us(utc(2023, 5, 30) - timedelta(days=days)), _us(utc(2023, 5, 31)))


def test_a_search_within_a_prefix_counts_from_asked_at(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prefix-bounded search (``retrieval/within.py``) takes the same instant."""
    from chronomem.retrieval import within

    ran: list[bool] = []
    real = within.search

    def spy(*args: object, **kwargs: object) -> object:
        out = real(*args, **kwargs)  # type: ignore[arg-type]
        ran.append(out is not None)
        return out

    monkeypatch.setattr(within, "search", spy)
    for pred, obj, start in (("lives_in", "Porto", 2), ("works_at", "the tea shop", 6)):
        a = memory.assertion("ns.olga", pred, obj, exact=True, valid_from=utc(2023, start, 3))
        memory.apply([a])
    hits = memory.search("olga yesterday", subject_prefix="ns.", asked_at=utc(2023, 2, 4, 9))
    assert ran == [True]
    assert {h.fact.object: h.explain["in_time_window"] for h in hits if h.fact} == {
        "Porto": True,
        "the tea shop": False,
    }
    # without it, "yesterday" is the day before the store's now: both were valid then
    plain = memory.search("olga yesterday", subject_prefix="ns.")
    assert [h.explain["in_time_window"] for h in plain] == [True, True]
