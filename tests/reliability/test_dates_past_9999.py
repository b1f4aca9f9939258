"""Issue #14 D: dates past year 9999 never block a tenant.

``valid_for=timedelta(days=3_000_000)`` or a LangGraph ``put(..., ttl=1e10)``
used to be stored as a valid end after year 9999, and from then on every read
returning the row (``facts``, ``history``, ``search``, ``list_namespaces``)
raised ``OverflowError`` — tenant-wide. A clock reading of
9999-12-31T23:59:59.999999 once made every later write raise.

Now: a validity that ends after the calendar does is "never ends" (read back as
``valid_to=None``, live at every instant); conversion of stored microseconds to
datetimes is total (anything outside years 1-9999 is clamped, an end beyond
9999 is unbounded); a clock reading in the calendar's last year is refused
with ``InvalidInput`` before anything is stamped, so the tenant stays
writable."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import InvalidInput, Memory, State
from chronomem.timeutil import LAST_TX_US, MAX_US, MIN_US, end_dt, from_us, to_us
from langgraph.store.chronomem import ChronomemStore

UTC = timezone.utc
END = datetime.max.replace(tzinfo=UTC)  # 9999-12-31T23:59:59.999999Z
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALL = [s.value for s in State]


def _read_everything(m: Memory) -> list[Any]:
    """Every read path that turns stored times into datetimes."""
    out: list[Any] = [
        m.facts(states=ALL),
        m.facts(states=ALL, valid_at=END),
        m.facts(states=ALL, known_at=END),
        m.history("s", include_retracted=True),
        m.stats(),
        list(m.search("value", states=ALL)),
        m.recall("value", include_history=True),
    ]
    out += [m.why(f.id) for f in m.facts(states=ALL)]
    return out


def test_conversion_from_microseconds_is_total() -> None:
    for value in (MAX_US + 1, MAX_US * 2, 2**63 - 1, MIN_US - 1, -(2**63)):
        assert from_us(value) in (END, datetime.min.replace(tzinfo=UTC))
    assert from_us(MAX_US) == END and end_dt(MAX_US) == END
    assert end_dt(MAX_US + 1) is None and end_dt(2**63 - 1) is None and end_dt(None) is None
    assert from_us(to_us(T0)) == T0


def test_a_validity_past_9999_is_unbounded_and_reads_never_crash(memory: Memory) -> None:
    r = memory.apply([memory.assertion("s", "p", "value", valid_for=timedelta(days=3_000_000))])
    (fact,) = memory.facts(subject="s")
    assert fact.valid_to is None and fact.state is State.LIVE
    assert fact.valid_from == r.recorded_at
    assert [f.object for f in memory.facts(subject="s", valid_at=END)] == ["value"]
    _read_everything(memory)
    # a later value still supersedes it as usual
    memory.remember("s", "p", "other")
    assert {f.object for f in memory.facts(subject="s")} >= {"other"}
    _read_everything(memory)


def test_a_clock_at_the_end_of_time_is_refused_and_the_tenant_stays_writable(
    url: str | None,
) -> None:
    readings = iter([T0, END, T0 + timedelta(days=1), T0 + timedelta(days=2)])
    now = {"t": T0}

    def clock() -> datetime:
        return now["t"]

    m = Memory(url, clock=clock)
    try:
        m.remember("s", "p", "value")
        for reading in readings:
            now["t"] = reading
            if reading == END:
                with pytest.raises(InvalidInput, match="clock"):
                    m.remember("s", "p", "from the end of time")
                with pytest.raises(InvalidInput, match="clock"):
                    m.add_episode("from the end of time")
                with pytest.raises(InvalidInput, match="clock"):
                    m.register_predicate("p2")
                continue
            m.remember("s", "p", f"at {reading.isoformat()}")
        assert all(f.recorded_at < from_us(LAST_TX_US) for f in m.facts(states=ALL))
        assert "from the end of time" not in repr(_read_everything(m))
        assert m.episodes() == []
    finally:
        m.close()


def test_an_import_stamped_at_the_end_of_time_is_refused(memory: Memory) -> None:
    op = memory.assertion("s", "p", "value")
    with pytest.raises(InvalidInput, match="recorded_at"):
        memory.apply([op], recorded_at=END)
    assert memory.facts(states=ALL) == []
    assert memory.remember("s", "p", "value").recorded_at is not None


def test_the_last_accepted_clock_reading_still_leaves_room_for_writes() -> None:
    last = from_us(LAST_TX_US - 1)
    m = Memory(clock=lambda: last)
    for i in range(50):  # a frozen clock: every write takes the next microsecond
        m.remember("s", "p", f"v{i}")
    assert m.stats().last_recorded_at is not None
    _read_everything(m)


_lengths = st.one_of(
    st.integers(min_value=1, max_value=timedelta.max // timedelta(microseconds=1)).map(
        lambda us: timedelta(microseconds=us)
    ),
    st.sampled_from([timedelta.max, timedelta(days=3_000_000), timedelta(days=2_914_000)]),
)
_clocks = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9998, 12, 30), timezones=st.just(UTC)
)


class _Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


_shared: dict[str, Any] = {}


def _shared_memory() -> tuple[Memory, _Clock]:
    """One store for every example (opening one per example would dominate)."""
    if "memory" not in _shared:
        clock = _Clock()
        _shared["memory"], _shared["clock"] = Memory(clock=clock), clock
    return _shared["memory"], _shared["clock"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(length=_lengths, at=_clocks)
def test_any_valid_for_at_any_clock_reads_back(length: timedelta, at: datetime) -> None:
    m, clock = _shared_memory()
    clock.now = at
    subject = f"s{len(_shared)}"
    _shared[subject] = True
    r = m.apply([m.assertion(subject, "p", "value", valid_for=length)])
    assert r.recorded_at is not None
    (fact,) = m.facts(subject=subject, states=ALL, valid_at=r.recorded_at)
    ends = to_us(r.recorded_at) + length // timedelta(microseconds=1)
    assert fact.valid_to == (None if ends > MAX_US else from_us(ends))
    assert fact.recorded_at == r.recorded_at
    m.facts(states=ALL, valid_at=END)
    m.why(fact.id)
    m.stats()


_ttls = st.one_of(
    st.floats(min_value=1e-6, max_value=1e300, allow_nan=False, allow_infinity=False),
    st.sampled_from([1e10, 1e11, 1e12, 1e18, 5.2e9, 5.3e9]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ttl=_ttls)
def test_any_langgraph_ttl_reads_back(ttl: float) -> None:
    if "store" not in _shared:
        _shared["store"] = ChronomemStore(clock=lambda: T0)
    store: ChronomemStore = _shared["store"]
    ns = ("docs", f"n{len(_shared)}")
    _shared[ns] = True
    store.put(ns, "k", {"text": "value"}, ttl=ttl)
    store.put(ns, "other", {"text": "value"})
    item = store.get(ns, "k", refresh_ttl=True)
    assert item is not None and item.value == {"text": "value"}  # live at the put instant
    assert ns in store.list_namespaces(limit=1000)
    assert {i.key for i in store.search(ns)} >= {"other"}
    store.search(ns, query="value")
    store.history(ns, "k")
    store.put(ns, "k", {"text": "changed"}, ttl=ttl)
    store.history(ns, "k")
    store.as_of(valid_at=END).search(ns)
    store.memory.facts(states=ALL, valid_at=END)


def test_a_tenant_stamped_at_the_calendar_end_refuses_further_writes(memory: Memory) -> None:
    """A clock row an older version left at the end of the calendar: the next stamp
    would not fit a datetime, so the write is refused and nothing is stored."""
    from sqlalchemy import update

    from chronomem.schema import txclock

    memory.remember("ann", "likes", "tea")
    with memory._engine.backend.write() as conn:
        conn.execute(update(txclock).values(last_us=MAX_US))
    with pytest.raises(InvalidInput, match="end of the calendar"):
        memory.remember("ann", "likes", "coffee")
    assert [f.object for f in memory.facts(subject="ann")] == ["tea"]
