"""Ends with an unknown start and scheduled (future) facts, written through
``add_messages`` into a real store, read back with valid-time queries."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from chronomem import Memory, State
from chronomem.extraction import add_messages
from chronomem.extraction.ingest import UNKNOWN_START
from chronomem.timeutil import EPOCH

ALL = [State.LIVE, State.ENDED, State.SCHEDULED]


def utc(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, 12, tzinfo=timezone.utc)


def values(mem: Memory, predicate: str, at: datetime) -> list[str]:
    return sorted(f.object for f in mem.facts(subject="user", predicate=predicate, valid_at=at))


def test_quitting_with_no_earlier_fact_is_an_end_with_unknown_start(mem: Memory):
    add_messages(mem, "I quit my job at Deloitte last month.", occurred_at=utc(2024, 6, 12))
    (f,) = mem.facts(subject="user", predicate="works_at", states=ALL)
    assert f.object == "Deloitte"
    assert f.valid_to == datetime(2024, 5, 1, tzinfo=timezone.utc)  # "last month"
    assert f.valid_from == EPOCH and f.metadata["valid_from"] == UNKNOWN_START
    assert values(mem, "works_at", utc(2024, 4, 1)) == ["Deloitte"]
    assert values(mem, "works_at", utc(2024, 6, 12)) == []


def test_no_longer_then_joined(mem: Memory):
    add_messages(
        mem, "I no longer work at IBM; I joined Red Hat last week.", occurred_at=utc(2024, 6, 12)
    )
    assert values(mem, "works_at", utc(2024, 6, 12)) == ["Red Hat"]
    assert values(mem, "works_at", utc(2024, 5, 1)) == ["IBM"]


def test_used_to_now_im_in(mem: Memory):
    add_messages(mem, "I used to live in Madrid, now I'm in Rome.", occurred_at=utc(2024, 6, 12))
    assert values(mem, "lives_in", utc(2024, 6, 13)) == ["Rome"]
    assert values(mem, "lives_in", utc(2024, 1, 1)) == ["Madrid"]


def test_a_known_value_is_ended_not_duplicated(mem: Memory):
    add_messages(mem, "I work at IBM.", occurred_at=utc(2020, 3, 1))
    add_messages(mem, "I no longer work at IBM.", occurred_at=utc(2024, 6, 12))
    (f,) = mem.facts(subject="user", predicate="works_at", states=ALL)
    assert f.valid_from == utc(2020, 3, 1) and f.valid_to == utc(2024, 6, 12)
    assert "valid_from" not in f.metadata


def test_unknown_start_begins_after_the_last_known_value(mem: Memory):
    add_messages(mem, "I work at Acme until March.", occurred_at=utc(2024, 1, 10))
    add_messages(mem, "I quit my job at Globex.", occurred_at=utc(2024, 6, 12))
    history = mem.history("user", "works_at")
    assert [f.object for f in history] == ["Acme", "Globex"]
    assert history[1].valid_from == history[0].valid_to


def test_a_contradiction_writes_nothing(mem: Memory):
    add_messages(mem, "I work at Google.", occurred_at=utc(2023, 1, 1))
    add_messages(mem, "I no longer work at IBM.", occurred_at=utc(2024, 6, 12))
    assert values(mem, "works_at", utc(2024, 6, 12)) == ["Google"]
    assert [f.object for f in mem.history("user", "works_at")] == ["Google"]


def test_a_plain_denial_writes_nothing_new(mem: Memory):
    add_messages(mem, "I don't speak German.", occurred_at=utc(2024, 6, 12))
    assert mem.facts(subject="user", predicate="speaks", states=ALL) == []


def test_a_scheduled_move_is_a_future_fact(mem: Memory):
    add_messages(mem, "I live in Paris.", occurred_at=utc(2024, 1, 10))
    add_messages(mem, "I'll be moving to Berlin next month.", occurred_at=utc(2024, 6, 12))
    assert values(mem, "lives_in", utc(2024, 6, 20)) == ["Paris"]
    assert values(mem, "lives_in", utc(2024, 7, 2)) == ["Berlin"]
    (berlin,) = [f for f in mem.history("user", "lives_in") if f.object == "Berlin"]
    assert berlin.valid_from == datetime(2024, 7, 1, tzinfo=timezone.utc)


def test_starting_next_monday(mem: Memory):
    add_messages(mem, "I'm starting at Stripe next Monday.", occurred_at=utc(2024, 6, 12))
    assert values(mem, "works_at", utc(2024, 6, 14)) == []
    assert values(mem, "works_at", utc(2024, 6, 17) + timedelta(hours=1)) == ["Stripe"]


def test_leaving_a_bare_name_ends_only_a_known_employer(mem: Memory):
    add_messages(mem, "I quit Facebook last year.", occurred_at=utc(2024, 6, 12))
    assert mem.facts(subject="user", predicate="works_at", states=ALL) == []
    add_messages(mem, "I work at Initech.", occurred_at=utc(2024, 7, 1))
    add_messages(mem, "I left Initech.", occurred_at=utc(2024, 9, 1))
    (f,) = mem.history("user", "works_at")
    assert (f.object, f.valid_from, f.valid_to) == ("Initech", utc(2024, 7, 1), utc(2024, 9, 1))
