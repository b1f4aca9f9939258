"""Behaviour of the public ``Memory`` API on both backends.

Bad input raises the documented ``ChronomemError`` subclass and writes nothing
(checked on the raw tables, transaction clock included); text round-trips
exactly; identities and predicate aliases fold; scopes are isolated and their
names are literal; transaction time strictly increases whatever the clock
does; receipts say what a write did; imports refuse to go back in time; the
predicate registry persists; erase and purge report what they deleted and
touch nothing else."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from chronomem import (
    Cardinality,
    ChronomemError,
    InvalidInput,
    InvalidInterval,
    InvalidTimeSelector,
    InvalidType,
    Memory,
    NaiveDatetime,
    NotFound,
    State,
    StoreClosed,
    TimeTravel,
    UnknownPredicate,
)
from chronomem.schema import episodes, sources, txclock, versions

from .conftest import ManualClock, utc

JAN, MAR, JUN, SEP = utc(2026, 1, 1), utc(2026, 3, 1), utc(2026, 6, 1), utc(2026, 9, 1)
NAIVE = datetime(2026, 1, 1)
US = timedelta(microseconds=1)
ALL = ["live", "ended", "scheduled", "retracted"]


def raw(memory: Memory) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables a write can touch, whole database."""
    out = {}
    with memory.backend.read() as conn:
        for t in (versions, episodes, sources, txclock):
            cols = [c for c in t.c if c.name != "tsv"]
            rows = conn.execute(select(*cols)).all()
            out[t.name] = sorted((tuple(r) for r in rows), key=repr)
    return out


def rejected(
    memory: Memory,
    exc: type[Exception] | tuple[type[Exception], ...],
    call: Callable[[], object],
) -> pytest.ExceptionInfo:
    """``call`` raises ``exc`` (ChronomemErrors) and leaves every table as it was."""
    for e in exc if isinstance(exc, tuple) else (exc,):
        assert issubclass(e, ChronomemError)
    before = raw(memory)
    with pytest.raises(exc) as info:
        call()
    assert raw(memory) == before, "a rejected call wrote something"
    return info


@pytest.fixture
def durable_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A database that survives closing a Memory: a SQLite file or a PostgreSQL schema."""
    if backend == "sqlite":
        yield str(tmp_path / "store.db")
    else:
        yield request.getfixturevalue("pg_url")


# -- bad input ------------------------------------------------------------------------------
def test_naive_datetimes_are_rejected_everywhere(memory: Memory) -> None:
    r = memory.remember("alice", "lives_in", "Paris", valid_from=JAN)
    ep = memory.add_episode("hello")
    fid = r.fact_ids[0]
    calls: list[Callable[[], object]] = [
        lambda: memory.remember("alice", "lives_in", "Rome", valid_from=NAIVE),
        lambda: memory.remember(
            "alice", "lives_in", "Rome", valid_from=JAN, valid_to=datetime(2026, 5, 1)
        ),
        lambda: memory.end("alice", "lives_in", at=NAIVE),
        lambda: memory.import_fact("bob", "lives_in", "Rome", recorded_at=NAIVE),
        lambda: memory.add_episode("x", occurred_at=NAIVE),
        lambda: memory.facts(valid_at=NAIVE),
        lambda: memory.facts(known_at=NAIVE),
        lambda: memory.facts(as_of=NAIVE),
        lambda: memory.history("alice", known_at=NAIVE),
        lambda: memory.get(fid, known_at=NAIVE),
        lambda: memory.episodes(since=NAIVE),
    ]
    for call in calls:
        info = rejected(memory, NaiveDatetime, call)
        assert isinstance(info.value, ValueError)  # documented: a naive datetime is a ValueError
    assert memory.get_episode(ep.id).text == "hello"


def test_a_clock_returning_naive_datetimes_is_refused() -> None:
    m = Memory(clock=lambda: NAIVE)
    with pytest.raises(NaiveDatetime):
        m.remember("alice", "lives_in", "Paris")
    m.close()


@pytest.mark.parametrize("valid_to", [JAN, JAN - US, utc(2025, 1, 1)])
def test_valid_to_not_after_valid_from_is_an_invalid_interval(
    memory: Memory, valid_to: datetime
) -> None:
    rejected(
        memory,
        InvalidInterval,
        lambda: memory.remember("a", "likes", "b", valid_from=JAN, valid_to=valid_to),
    )
    assert memory.stats().versions == 0


def test_valid_to_before_the_default_start_is_an_invalid_interval(
    memory: Memory, clock: ManualClock
) -> None:
    memory.remember("alice", "likes", "tea", valid_from=JAN)
    clock.now = JUN
    # no valid_from: it defaults to the transaction time (June), after valid_to
    rejected(
        memory, InvalidInterval, lambda: memory.remember("alice", "likes", "jazz", valid_to=MAR)
    )
    rejected(memory, InvalidInterval, lambda: memory.remember_many([
        {"subject": "alice", "predicate": "likes", "obj": "rock", "valid_from": JAN},
        {"subject": "alice", "predicate": "likes", "obj": "jazz", "valid_to": MAR},
    ]))  # fmt: skip
    assert [f.object for f in memory.facts(valid_at=JUN)] == ["tea"]


@pytest.mark.parametrize(
    ("subject", "predicate", "obj", "exc"),
    [
        ("", "likes", "tea", InvalidInput),
        ("   ", "likes", "tea", InvalidInput),
        ("alice", "", "tea", InvalidInput),
        ("alice", "\t\n", "tea", InvalidInput),
        ("alice", "likes", "", InvalidInput),
        ("alice", "likes", " ", InvalidInput),
        (None, "likes", "tea", InvalidType),
        ("alice", None, "tea", InvalidType),
        ("alice", "likes", None, InvalidType),
        (42, "likes", "tea", InvalidType),
        ("alice", b"likes", "tea", InvalidType),
        ("alice", "likes", ["tea"], InvalidType),
    ],
)
def test_bad_triples_are_rejected(
    memory: Memory, subject: Any, predicate: Any, obj: Any, exc: type
) -> None:
    memory.remember("alice", "likes", "coffee")
    rejected(memory, exc, lambda: memory.remember(subject, predicate, obj))
    rejected(
        memory,
        exc,
        lambda: memory.remember_many([{"subject": subject, "predicate": predicate, "obj": obj}]),
    )
    if obj is not None and subject is not None and predicate is not None:
        rejected(memory, exc, lambda: memory.end(subject, predicate, obj))


def test_bad_fact_ids_and_references(memory: Memory) -> None:
    r = memory.remember("alice", "lives_in", "Paris", valid_from=JAN)
    fid = r.fact_ids[0]
    rejected(memory, NotFound, lambda: memory.retract("no-such-fact"))
    rejected(memory, NotFound, lambda: memory.correct("no-such-fact", "Rome"))
    rejected(memory, NotFound, lambda: memory.erase("no-such-fact"))
    rejected(memory, NotFound, lambda: memory.why("no-such-fact"))
    # an empty id: invalid input, or simply no such fact
    rejected(memory, (InvalidInput, NotFound), lambda: memory.retract(""))
    rejected(memory, InvalidType, lambda: memory.retract(None))  # type: ignore[arg-type]
    rejected(memory, InvalidInput, lambda: memory.correct(fid, ""))
    rejected(memory, InvalidType, lambda: memory.correct(fid, 3))  # type: ignore[arg-type]
    # a source episode that does not exist: the whole write is rolled back
    rejected(
        memory, NotFound, lambda: memory.remember("bob", "likes", "tea", source="no-such-episode")
    )
    rejected(memory, InvalidType, lambda: memory.remember("bob", "likes", "tea", source=[3]))  # type: ignore[list-item]
    rejected(
        memory,
        InvalidInput,
        lambda: memory.remember("bob", "likes", "tea", metadata={"x": float("nan")}),
    )
    rejected(memory, InvalidType, lambda: memory.remember("bob", "likes", "tea", metadata=["x"]))  # type: ignore[arg-type]
    rejected(memory, InvalidType, lambda: memory.add_episode(None))  # type: ignore[arg-type]
    with pytest.raises(NotFound) as info:
        memory.get_episode("nope")
    assert isinstance(info.value, KeyError)


def test_time_selectors(memory: Memory) -> None:
    memory.remember("alice", "lives_in", "Paris", valid_from=JAN)
    for kw in ({"as_of": JUN, "valid_at": JUN}, {"as_of": JUN, "known_at": JUN},
               {"as_of": JUN, "valid_at": JUN, "known_at": JUN}):  # fmt: skip
        with pytest.raises(InvalidTimeSelector):
            memory.facts(**kw)
    for states in ("alive", ["live", "dead"], ["LIVE"], [], [None]):
        with pytest.raises(InvalidTimeSelector):
            memory.facts(states=states)  # type: ignore[arg-type]
    # documented names and enum members are accepted, alone or in collections
    assert [f.state for f in memory.facts(states="live", valid_at=JUN)] == [State.LIVE]
    assert [f.state for f in memory.facts(states=[State.SCHEDULED], valid_at=utc(2025, 6, 1))] == [
        State.SCHEDULED
    ]


def test_closed_store_refuses_everything_and_keeps_its_data(
    durable_url: str, clock: ManualClock
) -> None:
    m = Memory(durable_url, clock=clock)
    r = m.remember("alice", "lives_in", "Paris", valid_from=JAN)
    before = raw(m)
    session = m.scoped(user="u1")
    m.close()
    m.close()  # idempotent
    fid = r.fact_ids[0]
    calls: list[Callable[[], object]] = [
        lambda: m.remember("alice", "lives_in", "Rome"),
        lambda: m.end("alice", "lives_in"),
        lambda: m.retract(fid),
        lambda: m.correct(fid, "Rome"),
        lambda: m.erase(fid),
        lambda: m.purge(),
        lambda: m.facts(),
        lambda: m.history("alice"),
        lambda: m.why(fid),
        lambda: m.stats(),
        lambda: m.add_episode("x"),
        lambda: m.episodes(),
        lambda: m.scoped(user="u2"),
        lambda: m.register_predicate("mentor_of"),
        lambda: session.remember("alice", "likes", "tea"),
        lambda: session.facts(),
    ]
    for call in calls:
        with pytest.raises(StoreClosed):
            call()
    again = Memory(durable_url, clock=clock)
    try:
        assert raw(again) == before
    finally:
        again.close()


# -- text round-trips ---------------------------------------------------------------------
def _long_text(n: int) -> str:
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzäöüßéèçñ日本語中文한국어ДЖЯאבגابت "
    return "".join(rng.choice(alphabet) for _ in range(n))


TEXTS = {
    "quotes": 'O\'Brien said "hi" `x` ‘y’ “z”; DROP TABLE cm_versions; --',
    "nul": "before\x00after",
    "emoji": "👩‍👩‍👧‍👦 🇫🇷 🏳️‍🌈 ❤️",
    "rtl": "שלום עולם مرحبا بالعالم \u202eevil\u202c",
    "combining": "e\u0301 vs \u00e9, a\u0308\u0323, Z\u0351\u0327\u0361",
    "control": "tab\there\nnewline\r\n\x1f\x1e\x7f",
    "long": _long_text(100_000),
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_text_round_trips_exactly(memory: Memory, name: str) -> None:
    text = TEXTS[name]
    r = memory.remember(text, "likes", text, valid_from=JAN, metadata={"note": text})
    ep = memory.add_episode(text, role=name)
    got = memory.facts(valid_at=JUN)
    assert len(got) == 1
    f = got[0]
    assert f.subject == text and f.object == text and f.metadata == {"note": text}
    assert f.id == r.fact_ids[0]
    assert memory.get_episode(ep.id).text == text
    assert [e.text for e in memory.episodes()] == [text]
    # retrieval by the very same text finds it again (keys fold the same way on write and read)
    assert [x.id for x in memory.facts(subject=text, obj=text, valid_at=JUN)] == [f.id]
    # and a retry is recognised as the same fact
    assert memory.remember(text, "likes", text, valid_from=JAN).unchanged


# -- identity folding and predicate aliases -------------------------------------------------
def test_entity_names_fold_to_one_identity(memory: Memory) -> None:
    r1 = memory.remember("alice", "works_at", "Acme Corp.", valid_from=JAN)
    fid = r1.fact_ids[0]
    for spelling in ("ACME, Inc.", "acme", "  Acme  ", "ACME CORPORATION"):
        r = memory.remember("Alice", "works_at", spelling, valid_from=JAN)
        assert r.unchanged and not r.added and r.fact_ids == [fid], spelling
    for spelling in ("acme", "ACME, Inc.", "Acme Corp."):
        assert [f.id for f in memory.facts(subject="ALICE", obj=spelling)] == [fid]
    assert memory.facts(obj="acme labs") == []
    # fold is not over-eager: different names stay different
    r2 = memory.remember("alice", "works_at", "Acme Labs", valid_from=MAR)
    assert r2.added and r2.superseded_count == 1
    assert [f.object for f in memory.facts(valid_at=JUN)] == ["Acme Labs"]


def test_predicate_aliases_resolve_to_the_canonical_predicate(memory: Memory) -> None:
    r1 = memory.remember("alice", "resides_in", "Paris", valid_from=JAN)
    f = memory.facts(valid_at=MAR)[0]
    assert f.predicate == "lives_in"
    for name in ("lives_in", "resides_in", "based_in", "Lives In", "livesIn"):
        assert [x.id for x in memory.facts(predicate=name, valid_at=MAR)] == r1.fact_ids, name
    # ONE cardinality applies through the alias: a new value ends the old one
    r2 = memory.remember("alice", "based_in", "Berlin", valid_from=JUN)
    assert r2.superseded_count == 1
    assert [(x.object, x.valid_to) for x in memory.history("alice", "lives_in")] == [
        ("Paris", JUN),
        ("Berlin", None),
    ]
    # MANY through an alias: values accumulate
    memory.remember("alice", "loves", "tea", valid_from=JAN)
    memory.remember("alice", "likes", "jazz", valid_from=JAN)
    assert sorted(x.object for x in memory.facts(predicate="enjoys", valid_at=MAR)) == [
        "jazz",
        "tea",
    ]
    # unknown predicates are MANY
    memory.remember("alice", "collects", "stamps", valid_from=JAN)
    memory.remember("alice", "collects", "coins", valid_from=MAR)
    assert memory.predicate("collects").cardinality is Cardinality.MANY
    assert sorted(x.object for x in memory.facts(predicate="collects", valid_at=JUN)) == [
        "coins",
        "stamps",
    ]


# -- scopes ------------------------------------------------------------------------------------
def objects(m: Memory, **kw: Any) -> list[str]:
    return sorted(f.object for f in m.facts(valid_at=JUN, **kw))


def test_scope_isolation(memory: Memory) -> None:
    u1, u2 = memory.scoped(user="u1"), memory.scoped(user="u2")
    s1, s2 = memory.scoped(user="u1", session="s1"), memory.scoped(user="u1", session="s2")
    other_tenant = memory.scoped(tenant="other")
    memory.remember("root", "likes", "tenant-wide", valid_from=JAN)
    u1.remember("alice", "likes", "u1-durable", valid_from=JAN)
    s1.remember("alice", "likes", "s1-only", valid_from=JAN)
    s2.remember("alice", "likes", "s2-only", valid_from=JAN)
    u2.remember("alice", "likes", "u2-durable", valid_from=JAN)
    other_tenant.remember("alice", "likes", "other-tenant", valid_from=JAN)

    assert objects(s1) == ["s1-only", "tenant-wide", "u1-durable"]  # sees its user and tenant
    assert objects(s2) == ["s2-only", "tenant-wide", "u1-durable"]  # never a sibling session
    assert objects(u1) == ["tenant-wide", "u1-durable"]  # a user does not see its sessions
    assert objects(u2) == ["tenant-wide", "u2-durable"]  # nor another user
    assert objects(memory) == ["tenant-wide"]
    assert objects(other_tenant) == ["other-tenant"]
    assert objects(memory.scoped(user="u3", session="s1")) == [
        "tenant-wide"
    ]  # same session name, other user

    # writes aimed at another scope's facts fail closed
    s2_fact = s2.facts(obj="s2-only", valid_at=JUN)[0].id
    for m in (s1, u2, other_tenant):
        rejected(m, NotFound, lambda m=m: m.retract(s2_fact))
        rejected(m, NotFound, lambda m=m: m.erase(s2_fact))
        rejected(m, NotFound, lambda m=m: m.correct(s2_fact, "x"))
        with pytest.raises(NotFound):
            m.why(s2_fact)
        assert m.get(s2_fact) == []
    # a ONE slot is per scope: the session's value does not end the user's
    u1.remember("alice", "lives_in", "Paris", valid_from=JAN)
    s1.remember("alice", "lives_in", "Rome", valid_from=MAR)
    assert objects(u1, predicate="lives_in") == ["Paris"]
    assert [(f.object, f.valid_to) for f in u1.history("alice", "lives_in")] == [("Paris", None)]


@pytest.mark.parametrize(
    ("name", "other"),
    [("a%", "ab"), ("%", "x"), ("a_c", "abc"), ("_", "z"), ("*", "q"), ("a*", "abc"),
     ("a/b", "a"), ("a/", "a"), ("o'brien", "obrien"), ('"x"', "x"), ("a\\b", "ab"),
     ("ü", "u"), ("A", "a")],
)  # fmt: skip
def test_scope_names_are_literal(memory: Memory, name: str, other: str) -> None:
    for level in ("user", "session", "tenant"):
        kw = {level: name} if level != "session" else {"user": "u", "session": name}
        kw_other = {level: other} if level != "session" else {"user": "u", "session": other}
        mine, theirs = memory.scoped(**kw), memory.scoped(**kw_other)
        mine.remember(f"{level}-subject", "likes", f"mine-{level}", valid_from=JAN)
        theirs.remember(f"{level}-subject", "likes", f"theirs-{level}", valid_from=JAN)
        assert objects(mine, subject=f"{level}-subject") == [f"mine-{level}"], (level, name)
        assert objects(theirs, subject=f"{level}-subject") == [f"theirs-{level}"], (level, other)
        assert mine.scope.as_dict()[level] == name
    # a purge of the pattern-like user removes only that user
    memory.scoped(user=name).purge()
    assert objects(memory.scoped(user=other), subject="user-subject") == ["theirs-user"]


@pytest.mark.parametrize("bad", ["", " u", "u ", "a\x00b"])
def test_bad_scope_names(memory: Memory, bad: str) -> None:
    with pytest.raises(InvalidInput):
        memory.scoped(user=bad)
    with pytest.raises(InvalidType):
        memory.scoped(user=3)  # type: ignore[arg-type]


# -- transaction time ----------------------------------------------------------------------------
def test_transaction_time_strictly_increases_with_a_stuck_or_backward_clock(
    memory: Memory, clock: ManualClock
) -> None:
    clock.tick = timedelta(0)
    clock.now = JUN
    stamps = []
    for i in range(4):  # the clock stands still
        stamps.append(memory.remember("alice", "likes", f"x{i}", valid_from=JAN).recorded_at)
    clock.now = MAR  # the clock goes backwards
    stamps.append(memory.remember("alice", "likes", "x4", valid_from=JAN).recorded_at)
    stamps.append(memory.add_episode("still moving forward").recorded_at)
    stamps.append(memory.end("alice", "likes", "x0", at=SEP).recorded_at)
    stamps.append(memory.remember("alice", "likes", "x4", valid_from=JAN).recorded_at)  # unchanged
    assert stamps == [JUN + i * US for i in range(len(stamps))]
    # each write is its own belief instant: exact replay across them
    for i, t in enumerate(stamps[:5]):
        assert objects(memory, known_at=t) == sorted(f"x{j}" for j in range(i + 1))
    assert memory.facts(known_at=JUN - US, valid_at=JUN) == []
    clock.now = SEP
    assert memory.remember("alice", "likes", "x5", valid_from=JAN).recorded_at == SEP


def test_defaults_for_valid_and_known_time(memory: Memory, clock: ManualClock) -> None:
    clock.tick = timedelta(0)
    clock.now = MAR
    r = memory.remember("alice", "lives_in", "Paris")
    f = memory.facts()[0]
    assert f.valid_from == r.recorded_at == MAR  # valid_from defaults to the write instant
    assert f.valid_to is None and f.state is State.LIVE
    clock.now = MAR - timedelta(days=1)  # the clock runs behind the last transaction time
    assert memory.facts() == []  # valid_at = the clock's now: not yet valid
    assert [x.state for x in memory.facts(states="scheduled")] == [State.SCHEDULED]
    # known_at defaults to "everything recorded", not the clock's now
    assert [x.object for x in memory.facts(valid_at=MAR)] == ["Paris"]
    assert memory.facts(valid_at=MAR, known_at=clock.now) == []
    assert [x.object for x in memory.facts(as_of=MAR)] == ["Paris"]


# -- receipts ----------------------------------------------------------------------------------
def test_receipts_say_what_happened(memory: Memory, clock: ManualClock) -> None:
    r = memory.remember("alice", "lives_in", "Paris", valid_from=JAN)
    assert (len(r.added), r.unchanged, r.ended, r.retracted, r.superseded_count) == (
        1,
        [],
        [],
        [],
        0,
    )
    assert r.changed and len(r.fact_ids) == 1
    paris = r.fact_ids[0]

    r = memory.remember("alice", "lives_in", "paris", valid_from=MAR, valid_to=JUN)  # covered
    assert (r.added, len(r.unchanged), r.superseded_count, r.changed) == ([], 1, 0, False)
    assert r.fact_ids == [paris]
    r = memory.remember("alice", "lives_in", "Paris")  # default start (now), covered
    assert (r.added, len(r.unchanged), r.fact_ids) == ([], 1, [paris])

    r = memory.remember("alice", "lives_in", "Berlin", valid_from=JUN)  # supersedes Paris from June
    assert (len(r.added), r.unchanged, r.superseded_count) == (1, [], 1)
    berlin = r.fact_ids[0]
    assert berlin != paris
    assert [(f.object, f.valid_to) for f in memory.history("alice", "lives_in")] == [
        ("Paris", JUN),
        ("Berlin", None),
    ]

    r = memory.end("alice", "lives_in", at=SEP)
    assert (r.added, len(r.ended), r.retracted, r.superseded_count) == ([], 1, [], 1)
    assert r.fact_ids == [berlin]
    assert memory.end("alice", "lives_in", at=SEP).changed is False  # nothing runs across SEP now

    r = memory.retract(paris)
    assert (r.added, r.ended, len(r.retracted), r.superseded_count) == ([], [], 1, 1)
    assert memory.retract(paris).changed is False  # already retracted: a no-op

    r = memory.correct(berlin, "Munich")
    assert (len(r.added), len(r.retracted), r.superseded_count) == (1, 1, 1)
    munich = [fid for fid in r.fact_ids if fid != berlin]
    assert len(munich) == 1
    hist = memory.history("alice", "lives_in", include_retracted=True)
    assert sorted((f.object, f.valid_from, f.valid_to, f.state) for f in hist) == sorted([
        ("Paris", JAN, JUN, State.RETRACTED),
        ("Berlin", JUN, SEP, State.RETRACTED),
        ("Munich", JUN, SEP, State.SCHEDULED),  # valid_at defaults to the clock's now (January)
    ])  # fmt: skip
    assert all(f.state is not State.RETRACTED for f in memory.history("alice", "lives_in"))

    # a bounded assert inside another value's interval: cuts it in two
    r = memory.remember("bob", "lives_in", "Oslo", valid_from=JAN)
    r = memory.remember("bob", "lives_in", "Rome", valid_from=MAR, valid_to=JUN)
    assert (len(r.added), r.superseded_count) == (1, 1)
    assert [(f.object, f.valid_from, f.valid_to) for f in memory.history("bob", "lives_in")] == [
        ("Oslo", JAN, MAR),
        ("Rome", MAR, JUN),
        ("Oslo", JUN, None),
    ]


def test_correct_of_a_fact_with_no_current_version(memory: Memory) -> None:
    """Correcting a fact that was already retracted (or merged away) must be a
    clean ChronomemError or a no-op receipt, never a crash, and must write nothing."""
    r = memory.remember("alice", "lives_in", "Paris", valid_from=JAN)
    fid = r.fact_ids[0]
    memory.retract(fid)
    before = raw(memory)
    try:
        receipt = memory.correct(fid, "London")
    except ChronomemError:
        pass
    else:
        assert not receipt.changed and receipt.added == []
    after = raw(memory)
    assert after["cm_versions"] == before["cm_versions"]
    assert memory.facts(valid_at=JUN) == []


# -- imports -------------------------------------------------------------------------------------
def test_import_fact_refuses_to_go_back_in_time(memory: Memory, clock: ManualClock) -> None:
    t1, t2 = utc(2025, 1, 10), utc(2025, 2, 10)
    r = memory.import_fact("alice", "lives_in", "Paris", recorded_at=t1)
    assert r.recorded_at == t1
    f = memory.facts(valid_at=t2)[0]
    assert (f.object, f.valid_from, f.recorded_at) == (
        "Paris",
        t1,
        t1,
    )  # valid_from defaults to recorded_at
    r = memory.import_fact("alice", "lives_in", "London", recorded_at=t2, valid_from=t2)
    assert r.recorded_at == t2 and r.superseded_count == 1
    # going back in time for this slot: before, or at, its last belief change
    for when in (t1, t2, t2 - US, utc(2024, 1, 1)):
        rejected(
            memory,
            TimeTravel,
            lambda w=when: memory.import_fact("alice", "resides_in", "Rome", recorded_at=w),
        )
    # and what was believed at t1 is still exactly what was imported
    assert [x.object for x in memory.facts(valid_at=t2, known_at=t1)] == ["Paris"]
    # another slot has its own history: an import there may be older
    assert memory.import_fact("bob", "lives_in", "Oslo", recorded_at=t1).recorded_at == t1
    # a later import is fine
    assert (
        memory.import_fact("alice", "lives_in", "Rome", recorded_at=t2 + US).recorded_at == t2 + US
    )


def test_a_back_dated_import_wins_over_exact_replay(memory: Memory, clock: ManualClock) -> None:
    """Issue #14, documented in ``import_fact``: an import into a new slot may stamp
    an instant before later native writes, and then changes what an earlier read at
    a ``known_at`` after that instant returned; reads at a ``known_at`` before it
    keep their answer."""
    t0 = memory.remember("alice", "likes", "tea", valid_from=JAN).recorded_at
    assert t0 is not None
    before = [f.object for f in memory.facts(known_at=t0, valid_at=JUN)]
    assert before == ["tea"]
    clock.advance(days=1)
    earlier = t0 - timedelta(hours=1)
    r = memory.import_fact("alice", "likes", "jazz", recorded_at=earlier, valid_from=JAN)
    assert r.recorded_at == earlier < t0
    after = sorted(f.object for f in memory.facts(known_at=t0, valid_at=JUN))
    assert after == ["jazz", "tea"]  # the import wins: the answer at t0 changed
    # before the import's instant the answer is what it was
    assert memory.facts(known_at=earlier - US, valid_at=JUN) == []


def test_import_ahead_of_the_clock_keeps_transaction_time_increasing(
    memory: Memory, clock: ManualClock
) -> None:
    """An import stamped after the clock's now is either refused (TimeTravel,
    nothing written) or, if accepted, every later write is stamped after it."""
    clock.tick = timedelta(0)
    clock.now = MAR
    future = SEP
    try:
        before = raw(memory)
        memory.import_fact("alice", "likes", "tea", recorded_at=future, valid_from=JAN)
    except TimeTravel:
        assert raw(memory) == before
        r = memory.remember("alice", "likes", "jazz", valid_from=JAN)
        assert r.recorded_at == MAR
    else:
        r = memory.remember("alice", "likes", "jazz", valid_from=JAN)
        assert r.recorded_at > future
        assert [f.object for f in memory.facts(valid_at=MAR, known_at=future)] == ["tea"]


# -- registry ------------------------------------------------------------------------------------
def test_registered_predicates_persist_across_reopen(tmp_path: Path, clock: ManualClock) -> None:
    path = str(tmp_path / "registry.db")
    with Memory(path, clock=clock) as m:
        spec = m.register_predicate(
            "Mentor Of", cardinality="one", volatility="stable", aliases=["mentored_by"]
        )
        assert spec.name == "mentor_of" and spec.cardinality is Cardinality.ONE
        m.scoped(tenant="elsewhere").register_predicate("mentor_of", cardinality="many")
    with Memory(path, clock=clock) as m:
        spec = m.predicate("mentored_by")
        assert (spec.name, spec.cardinality) == ("mentor_of", Cardinality.ONE)
        m.remember("carol", "mentor_of", "dave", valid_from=JAN)
        r = m.remember("carol", "mentored_by", "erin", valid_from=JUN)  # ONE: ends dave
        assert r.superseded_count == 1
        assert [(f.object, f.valid_to) for f in m.history("carol", "mentor_of")] == [
            ("dave", JUN),
            ("erin", None),
        ]
        # the registry is per tenant
        other = m.scoped(tenant="elsewhere")
        assert other.predicate("mentor_of").cardinality is Cardinality.MANY
        assert other.predicate("mentored_by").name == "mentored_by"


def test_register_predicate_rejects_bad_input(memory: Memory) -> None:
    with pytest.raises(InvalidInput):
        memory.register_predicate("x", cardinality="several")
    with pytest.raises(InvalidInput):
        memory.register_predicate("")
    memory.remember("alice", "lives_in", "Paris", valid_from=JAN)
    # an alias that is already another predicate's own name would hijack that
    # predicate: its facts unreachable by name, its ONE slot split in two
    with pytest.raises(UnknownPredicate):
        memory.register_predicate("habitat", cardinality="many", aliases=["lives_in"])
    assert memory.predicate("lives_in").name == "lives_in"
    assert memory.predicate("lives_in").cardinality is Cardinality.ONE
    assert [f.object for f in memory.facts(predicate="lives_in", valid_at=MAR)] == ["Paris"]


# -- erasure -------------------------------------------------------------------------------------
def test_erase_counts_and_orphaned_episodes(memory: Memory, clock: ManualClock) -> None:
    shared = memory.add_episode("I live in Paris and I like tea")
    own = memory.add_episode("Actually, Berlin since June")
    r1 = memory.remember("alice", "lives_in", "Paris", valid_from=JAN, source=shared)
    memory.remember("alice", "likes", "tea", valid_from=JAN, source=shared)
    r3 = memory.remember("alice", "lives_in", "Berlin", valid_from=JUN, source=own)
    paris, berlin = r1.fact_ids[0], r3.fact_ids[0]
    # Paris now has two versions: the open-ended one (closed) and the one ended in June
    counts = memory.erase(paris)
    assert counts["versions"] == 2 and counts["sources"] == 1
    assert counts["episodes"] == 0  # the shared episode is still cited by "likes tea"
    assert memory.get_episode(shared.id).text.startswith("I live")
    assert memory.get(paris) == [] and sorted(f.object for f in memory.history("alice")) == [
        "Berlin",
        "tea",
    ]
    with pytest.raises(NotFound):
        memory.why(paris)
    counts = memory.erase(berlin)
    assert (counts["versions"], counts["sources"], counts["episodes"]) == (1, 1, 1)
    with pytest.raises(NotFound):
        memory.get_episode(own.id)
    rejected(memory, NotFound, lambda: memory.erase(berlin))
    # nothing of Paris survives in any belief instant either
    assert all(
        f.object != "Paris" for f in memory.facts(known_at=r1.recorded_at, states=ALL, valid_at=MAR)
    )


def test_purge_of_one_user_leaves_others_untouched(memory: Memory) -> None:
    u1, u2 = memory.scoped(user="u1"), memory.scoped(user="u2")
    s1 = memory.scoped(user="u1", session="s1")
    tenant_fact = memory.remember("team", "likes", "standups", valid_from=JAN).fact_ids[0]
    e1 = u1.add_episode("u1 says hi")
    u1.remember("alice", "likes", "tea", valid_from=JAN, source=e1)
    u1.remember("alice", "lives_in", "Paris", valid_from=JAN)
    u1.remember("alice", "lives_in", "Rome", valid_from=JUN)  # 3 versions in the ONE slot
    s1.remember("alice", "likes", "jazz", valid_from=JAN)
    s1.add_episode("session chatter")
    e2 = u2.add_episode("u2 says hi")
    u2.remember("bob", "likes", "coffee", valid_from=JAN, source=e2)
    u2_before = (u2.facts(states=ALL, valid_at=JUN), u2.episodes())

    counts = u1.purge()
    assert counts["versions"] == 5  # tea, Paris×2, Rome, jazz (session included)
    assert counts["episodes"] == 2 and counts["sources"] == 1
    # only the tenant-wide fact (an ancestor's) is left in their view
    assert [f.id for f in u1.facts(states=ALL)] == [tenant_fact]
    assert [f.id for f in s1.facts(states=ALL)] == [tenant_fact]
    assert u1.episodes() == [] and s1.episodes() == []
    assert (u2.facts(states=ALL, valid_at=JUN), u2.episodes()) == u2_before
    assert [f.id for f in memory.facts(valid_at=JUN)] == [tenant_fact]
    assert u1.purge() == {"versions": 0, "episodes": 0, "vectors": 0, "sources": 0}
    stats = u2.stats()
    assert (stats.facts, stats.episodes) == (2, 1)  # its own fact and the tenant's
