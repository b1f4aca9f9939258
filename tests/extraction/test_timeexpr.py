"""Relative and absolute time expressions, resolved against the turn's time."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from chronomem.extraction import RuleExtractor, find_times, resolve
from chronomem.extraction.timeexpr import is_future, strip_times

from .conftest import REF  # Wednesday 2024-06-12 15:30 UTC


def d(y: int, m: int, day: int, h: int = 0, mi: int = 0) -> datetime:
    return datetime(y, m, day, h, mi, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("yesterday", d(2024, 6, 11)),
        ("today", d(2024, 6, 12)),
        ("tomorrow", d(2024, 6, 13)),
        ("the day before yesterday", d(2024, 6, 10)),
        ("last month", d(2024, 5, 1)),
        ("this month", d(2024, 6, 1)),
        ("next month", d(2024, 7, 1)),
        ("last year", d(2023, 1, 1)),
        ("last week", d(2024, 6, 3)),  # Monday of the previous week
        ("this week", d(2024, 6, 10)),
        ("next week", d(2024, 6, 17)),
        ("last weekend", d(2024, 6, 8)),
        ("two weeks ago", d(2024, 5, 29)),
        ("a week ago", d(2024, 6, 5)),
        ("a couple of days ago", d(2024, 6, 10)),
        ("a few months ago", d(2024, 3, 12)),
        ("3 years ago", d(2021, 6, 12)),
        ("3 hours ago", d(2024, 6, 12, 12, 30)),
        ("in two weeks", d(2024, 6, 26)),
        ("since 2019", d(2019, 1, 1)),
        ("since March 2019", d(2019, 3, 1)),
        ("in March", d(2024, 3, 1)),  # past reading: the most recent March
        ("in September", d(2023, 9, 1)),  # not yet this year: last September
        ("last March", d(2024, 3, 1)),
        ("next March", d(2025, 3, 1)),
        ("in late March", d(2024, 3, 21)),
        ("early 2020", d(2020, 1, 1)),
        ("Oct 2019", d(2019, 10, 1)),
        ("on 2024-05-01", d(2024, 5, 1)),
        ("on May 1st, 2023", d(2023, 5, 1)),
        ("on the 3rd of March", d(2024, 3, 3)),
        ("last Friday", d(2024, 6, 7)),
        ("next Friday", d(2024, 6, 14)),
        ("last Wednesday", d(2024, 6, 5)),  # today is Wednesday: a week back
        ("next Wednesday", d(2024, 6, 19)),
        ("this Friday", d(2024, 6, 14)),
        ("since last Friday", d(2024, 6, 7)),
        ("for three years", d(2021, 6, 12)),
        ("over the past year", d(2023, 6, 12)),
        ("at the end of the month", d(2024, 6, 30)),
        ("by the end of next month", d(2024, 7, 31)),
        ("at the start of next year", d(2025, 1, 1)),
        ("last summer", d(2023, 6, 1)),  # June 12: this summer began June 1, last one 2023
        ("this summer", d(2024, 6, 1)),
        ("next winter", d(2024, 12, 1)),
        ("in the new year", d(2025, 1, 1)),
    ],
)
def test_resolution(expr: str, expected: datetime):
    assert resolve(expr, REF) == expected


def test_tense_decides_ambiguous_months_and_weekdays():
    assert resolve("I moved in March", REF) == d(2024, 3, 1)
    assert resolve("I'm moving in March", REF) == d(2025, 3, 1)
    assert resolve("I moved in September", REF) == d(2023, 9, 1)
    assert resolve("I will move in September", REF) == d(2024, 9, 1)
    assert resolve("I started on Monday", REF) == d(2024, 6, 10)
    assert resolve("I start on Monday", REF) == d(2024, 6, 17)
    assert is_future("I'm moving to Berlin") and not is_future("I moved to Berlin")
    assert resolve("We're moving in the fall", REF) == d(2024, 9, 1)
    assert resolve("We moved in the spring", REF) == d(2024, 3, 1)


def test_vague_past_times_are_cut_out_but_date_nothing():
    (m,) = find_times("I stopped liking football years ago", REF)
    assert m.text == "years ago" and m.value is None


def test_roles_since_until_and_plain():
    (m,) = find_times("since 2019", REF)
    assert m.role == "from"
    (m,) = find_times("until next month", REF)
    assert m.role == "until" and m.value == d(2024, 7, 1)
    (m,) = find_times("last month", REF)
    assert m.role == "at"


def test_non_dates_are_left_alone():
    assert find_times("I may move", REF) == []
    assert find_times("I was born on February 30th", REF) == []
    assert find_times("I have 2024 reasons", REF) == []
    assert find_times("I live on 5th avenue", REF) == []


def test_strip_times_cuts_the_expressions_out():
    text = "I moved to Berlin last month"
    assert strip_times(text, find_times(text, REF)) == "I moved to Berlin"


def test_reference_in_another_timezone_is_converted_to_utc():
    ref = datetime(2024, 6, 13, 1, 0, tzinfo=timezone(timedelta(hours=5)))  # 2024-06-12 20:00Z
    assert resolve("yesterday", ref) == d(2024, 6, 11)


@pytest.mark.parametrize(
    ("text", "predicate", "valid_from", "valid_to", "op"),
    [
        ("I moved to Berlin last month.", "lives_in", d(2024, 5, 1), None, "assert"),
        ("I've lived in Berlin since 2019.", "lives_in", d(2019, 1, 1), None, "assert"),
        ("I joined Stripe two weeks ago.", "works_at", d(2024, 5, 29), None, "assert"),
        ("I'm moving to Lisbon next month.", "lives_in", d(2024, 7, 1), None, "assert"),
        ("I started at Meta on 2024-05-01.", "works_at", d(2024, 5, 1), None, "assert"),
        ("I left Google yesterday.", "works_at", None, d(2024, 6, 11), "end"),
        ("I moved out of Paris in March.", "lives_in", None, d(2024, 3, 1), "end"),
        ("I haven't lived in Rome since 2019.", "lives_in", None, d(2019, 1, 1), "end"),
        ("I lived in Oslo until 2020.", "lives_in", None, d(2020, 1, 1), "end"),
        ("I'll live in Oslo until next year.", "lives_in", None, d(2025, 1, 1), "assert"),
        ("I start at Shopify next Friday.", "works_at", d(2024, 6, 14), None, "assert"),
        ("I live in Paris.", "lives_in", None, None, "assert"),
    ],
)
def test_rule_facts_carry_resolved_validity(text, predicate, valid_from, valid_to, op):
    facts = RuleExtractor().extract_text(text, occurred_at=REF)
    (fact,) = [f for f in facts if f.predicate == predicate]
    assert (fact.op, fact.valid_from, fact.valid_to) == (op, valid_from, valid_to)


def test_dates_of_birth_are_the_object_not_the_validity():
    facts = RuleExtractor().extract_text("I was born in Lyon on May 3, 1990.", occurred_at=REF)
    by = {f.predicate: f for f in facts}
    assert by["born_in"].obj == "Lyon" and by["birthday"].obj == "1990-05-03"
    assert by["birthday"].valid_from is None
    (f,) = RuleExtractor().extract_text("My birthday is tomorrow", occurred_at=REF)
    assert f.obj == "June 13"


def test_a_simple_past_state_ends_at_its_until_and_not_at_its_duration():
    """ "I lived in Oslo until 2020" ended in 2020; "for five years" says how
    long, not when it ended (no end time: the message's time)."""
    ex = RuleExtractor()
    (until,) = ex.extract_text("I lived in Oslo until 2020.", occurred_at=REF)
    assert (until.predicate, until.obj, until.op, until.held) == ("lives_in", "Oslo", "end", True)
    assert until.valid_to is not None and until.valid_to.year == 2020
    (spell,) = ex.extract_text("I lived in Madrid for five years.", occurred_at=REF)
    assert (spell.op, spell.held, spell.valid_from, spell.valid_to) == ("end", True, None, None)
    (tenure,) = ex.extract_text("I was at McKinsey for six years.", occurred_at=REF)
    assert (tenure.op, tenure.held, tenure.valid_from, tenure.valid_to) == ("end", True, None, None)
