"""Issue #13's query-side mechanism: the time a query names (``querytime.time_window``)
boosts the hits inside it."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from chronomem import Memory
from chronomem.retrieval.fusion import TIME_BOOST
from chronomem.retrieval.querytime import MONTHS, WEEKDAYS, time_window
from tests.conftest import utc

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
MONTH_NAMES = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def us(d: datetime) -> int:
    return (d - EPOCH) // timedelta(microseconds=1)


def day(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=timezone.utc)


days = st.dates(min_value=date(1900, 1, 1), max_value=date(2099, 12, 31))
instants = st.datetimes(
    min_value=datetime(1902, 1, 1),
    max_value=datetime(2098, 12, 31),
    timezones=st.just(timezone.utc),
)
casing = st.sampled_from([str, str.lower, str.upper])


@given(
    days, casing, st.sampled_from(["{M} {d}, {y}", "{d} {M} {y}", "{d} {M}, {y}", "{M} {d} {y}"])
)
def test_a_full_date_is_that_day(d: date, case: object, form: str) -> None:
    text = form.format(M=MONTH_NAMES[d.month - 1], d=d.day, y=d.year)
    q = f"What did Gina find on {case(text)}?"  # type: ignore[operator]
    assert time_window(q, us(utc(2030, 1, 1))) == (us(day(d)), us(day(d) + timedelta(days=1)))


@given(days, instants)
def test_a_month_and_year_is_that_whole_month(d: date, now: datetime) -> None:
    window = time_window(f"What happened in {MONTH_NAMES[d.month - 1]} {d.year}?", us(now))
    start = datetime(d.year, d.month, 1, tzinfo=timezone.utc)
    assert window is not None and window[0] == us(start)
    end = EPOCH + timedelta(microseconds=window[1])
    assert end.day == 1 and (end - start).days in (28, 29, 30, 31)
    assert window[0] <= us(day(d)) < window[1]


@given(st.integers(1900, 2099), instants)
def test_a_year_is_that_whole_year(year: int, now: datetime) -> None:
    window = time_window(f"How many times did she go to the beach in {year}?", us(now))
    assert window == (us(utc(year, 1, 1)), us(utc(year + 1, 1, 1)))


@given(instants)
def test_yesterday_is_the_day_before_the_reference(now: datetime) -> None:
    window = time_window("What did I cook yesterday?", us(now))
    today = datetime(now.year, now.month, now.day, tzinfo=timezone.utc)
    assert window == (us(today - timedelta(days=1)), us(today))


@given(instants, st.integers(1, 40), st.sampled_from(["day", "week", "month", "year"]))
def test_n_units_ago_covers_that_moment_and_not_now(now: datetime, n: int, unit: str) -> None:
    window = time_window(f"What did I buy {n} {unit}s ago?", us(now))
    length = {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
    then = now - timedelta(days=n * length)
    assert window is not None
    assert window[0] <= us(then) < window[1]
    assert window[1] <= us(now) + 86_400_000_000 * 2  # never far into the future


@given(instants, st.sampled_from(MONTH_NAMES))
def test_last_month_name_is_the_latest_such_month_before_this_one(now: datetime, m: str) -> None:
    window = time_window(f"Where did we travel last {m}?", us(now))
    assert window is not None
    start = EPOCH + timedelta(microseconds=window[0])
    assert start.month == MONTHS[m.lower()] and start.day == 1
    this_month = datetime(now.year, now.month, 1, tzinfo=timezone.utc)
    assert start < this_month  # before the current month ...
    assert start >= datetime(now.year - 1, now.month, 1, tzinfo=timezone.utc)  # ... within a year


@given(instants, st.sampled_from(WEEKDAYS))
def test_last_weekday_is_that_weekday_in_the_past_week(now: datetime, wd: str) -> None:
    window = time_window(f"Who called last {wd}?", us(now))
    assert window is not None
    start = EPOCH + timedelta(microseconds=window[0])
    assert start.weekday() == WEEKDAYS.index(wd)
    assert timedelta(0) < now - start <= timedelta(days=8)


PLAIN = (
    "what did caroline say about the pottery class she may join with her kids and "
    "melanie painted a lake sunrise adoption agency support group running hiking"
)
plain_words = st.lists(st.sampled_from(PLAIN.split()), min_size=1, max_size=20)


@given(plain_words, instants)
def test_a_query_naming_no_time_has_no_window(words: list[str], now: datetime) -> None:
    assert time_window(" ".join(words), us(now)) is None


@given(days, days, instants)
def test_two_dates_give_the_window_covering_both(a: date, b: date, now: datetime) -> None:
    fmt = "{M} {d}, {y}"
    q = (
        f"between {fmt.format(M=MONTH_NAMES[a.month - 1], d=a.day, y=a.year)} and "
        f"{fmt.format(M=MONTH_NAMES[b.month - 1], d=b.day, y=b.year)}"
    )
    lo, hi = min(a, b), max(a, b)
    assert time_window(q, us(now)) == (us(day(lo)), us(day(hi) + timedelta(days=1)))


# -- through Memory.search --------------------------------------------------------------


def test_an_episode_inside_the_named_time_ranks_first(memory: Memory) -> None:
    memory.add_episode("Maria: the shelter dinner went well", occurred_at=utc(2023, 3, 5))
    memory.add_episode("Maria: the shelter dinner went well", occurred_at=utc(2023, 7, 9))
    for month, expected in (("March", 3), ("July", 7)):
        hits = memory.search(f"shelter dinner in {month} 2023", k=2, include_episodes=True)
        assert [h.episode.occurred_at.month for h in hits] == [expected, 10 - expected]
        assert hits[0].explain["in_time_window"] is True
        assert hits[1].explain["in_time_window"] is False
        assert hits[0].score > hits[1].score
    plain = memory.search("shelter dinner", k=2, include_episodes=True)
    assert all("in_time_window" not in h.explain for h in plain)
    # no time named: the twins keep the order of their tie-break (earlier first), so
    # July's first place above came from the window
    assert [h.episode.occurred_at.month for h in plain] == [3, 7]


def test_relative_times_count_from_the_searchs_valid_time(memory: Memory) -> None:
    memory.add_episode("Jon: I opened the clothing store", occurred_at=utc(2023, 2, 1, 12))
    memory.add_episode("Jon: I opened the clothing store", occurred_at=utc(2023, 2, 3, 12))
    hits = memory.search(
        "when did Jon open the store yesterday",
        k=2,
        include_episodes=True,
        valid_at=utc(2023, 2, 4, 9),
    )
    assert hits[0].episode.occurred_at == utc(2023, 2, 3, 12)
    assert hits[0].explain["in_time_window"] is True
    # relative to the store's now (2026), "yesterday" holds neither
    now = memory.search("when did Jon open the store yesterday", k=2, include_episodes=True)
    assert [h.explain["in_time_window"] for h in now] == [False, False]


def test_a_fact_valid_during_the_named_time_is_boosted(memory: Memory) -> None:
    memory.remember(
        "olga", "lives_in", "Porto", valid_from=utc(2021, 1, 1), valid_to=utc(2022, 6, 1)
    )
    memory.remember("olga", "lives_in", "Lisbon", valid_from=utc(2022, 6, 1))
    hits = memory.search("where did olga live in 2021", k=5, states=["live", "ended"])
    by_text = {h.text: h for h in hits}
    assert by_text["olga lives in Porto"].explain["in_time_window"] is True
    assert by_text["olga lives in Lisbon"].explain["in_time_window"] is False
    assert hits[0].text == "olga lives in Porto"
    assert TIME_BOOST > 0
