"""Model-based tests: random write histories against the reference model, on both backends.

A hypothesis state machine drives remember (open-ended and bounded, with and
without an explicit start) / end / retract / correct / erase over a few slots
(2 subjects × {lives_in: ONE, likes: MANY} × 3 objects, valid times on a small
grid of dates) while a manual clock moves (forwards, standing still, and
backwards). After every step:

* the store's whole ``cm_versions`` table for the tenant equals the model's
  versions (content, both clocks, close reasons, fact identity);
* invariant I1 holds (queried from ``cm_versions`` directly);
* a read through ``Memory.facts`` equals the model's answer: alternately the
  latest belief with every state (recorded for the replay check), and a past
  belief instant (a transaction time, or just before one) with a random state
  set; valid instants are drawn from the grid, every interval boundary, and now;
* every write's receipt matches the model's (transaction time, added,
  unchanged, ended, retracted, superseded_count), and a retried ``remember``
  is ``unchanged``.

At the end of every history, each read made at step ``i`` is re-run with
``known_at`` = the transaction time of step ``i`` and must return exactly the
same answer (exact replay; only an erased fact may disappear).

PostgreSQL uses one schema per test and one tenant per history (tenants are
isolated, transaction clock included). 500 histories per backend by default
(``CHRONOMEM_HISTORIES`` overrides); ``CHRONOMEM_SLOW=1`` (``pytest --slow``)
runs ten times as many.
"""

from __future__ import annotations

import itertools
import os
import random
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import select

from chronomem import InvalidInterval, Memory, NotFound, State
from chronomem.schema import txclock, versions

from .conftest import ManualClock, drop_pg_schema, make_pg_schema, require_pg
from .reference_model import (
    ALL_STATES,
    ModelError,
    ReferenceModel,
    Result,
    i1_violations,
    row_key,
    store_table,
)

SLOW = os.environ.get("CHRONOMEM_SLOW") == "1"
SCALE = 10 if SLOW else 1
HISTORIES = int(os.environ.get("CHRONOMEM_HISTORIES", "500")) * SCALE  # per backend
ORDER_EXAMPLES = 150 * SCALE

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
US = timedelta(microseconds=1)


def us(dt: datetime) -> int:
    return (dt - EPOCH) // US


def dt(value: int | None) -> datetime | None:
    return None if value is None else EPOCH + value * US


# Valid times: 11 dates 30 days apart; the clock starts between the 2nd and the 3rd.
GRID = [datetime(2025, 1, 1, tzinfo=timezone.utc) + timedelta(days=30 * k) for k in range(11)]
GRID_US = [us(g) for g in GRID]
START = datetime(2025, 2, 15, 12, tzinfo=timezone.utc)
CLOCK_STEPS = [
    timedelta(0),  # standing still: the store must still move transaction time forward
    timedelta(microseconds=1),
    timedelta(days=1),
    timedelta(days=17),
    timedelta(days=45),
    timedelta(days=-3),  # a clock that goes backwards
]

SUBJECTS = ["Alice", "alice", "Bob"]  # "Alice" and "alice" are one subject
PREDICATES = ["lives_in", "resides_in", "likes", "loves"]  # resides_in/loves are aliases
OBJECTS = ["Paris", "PARIS", "London", "Tokyo"]  # "Paris" and "PARIS" are one object
MODEL_PREDICATES = {
    "lives_in": ("lives_in", True),
    "resides_in": ("lives_in", True),
    "likes": ("likes", False),
    "loves": ("likes", False),
}
STATE_SETS = [
    frozenset(c) for n in range(1, 5) for c in itertools.combinations(sorted(ALL_STATES), n)
]


# -- stores: one per module and backend; one tenant per history ----------------------
@pytest.fixture(scope="module")
def sqlite_store() -> Iterator[tuple[Memory, ManualClock]]:
    clock = ManualClock(start=START)
    m = Memory(None, clock=clock)
    yield m, clock
    m.close()


@pytest.fixture(scope="module")
def pg_store() -> Iterator[tuple[Memory, ManualClock]]:
    require_pg()
    url, schema = make_pg_schema()
    clock = ManualClock(start=START)
    m = Memory(url, clock=clock)
    try:
        yield m, clock
    finally:
        m.close()
        drop_pg_schema(schema)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> tuple[Memory, ManualClock]:
    name = "sqlite_store" if request.param == "sqlite" else "pg_store"
    value: tuple[Memory, ManualClock] = request.getfixturevalue(name)
    return value


def fresh_tenant(base: Memory) -> Memory:
    return base.scoped(tenant=f"t{uuid.uuid4().hex}")


def store_rows(mem: Memory) -> list[dict[str, Any]]:
    with mem.backend.read() as conn:
        q = select(versions).where(versions.c.tenant == mem.scope.tenant)
        return [dict(r) for r in conn.execute(q).mappings()]


def fact_row(f: Any) -> tuple[Any, ...]:
    state = f.state.value if isinstance(f.state, State) else str(f.state)
    return (
        f.subject,
        f.predicate,
        f.object,
        us(f.valid_from),
        None if f.valid_to is None else us(f.valid_to),
        state,
    )


# -- the state machine ------------------------------------------------------------------
class BitemporalHistory(RuleBasedStateMachine):
    def __init__(self, base: Memory, clock: ManualClock):
        super().__init__()
        clock.now = START
        self.clock = clock
        self.mem = fresh_tenant(base)
        self.model = ReferenceModel(MODEL_PREDICATES)
        self.steps = 0
        self.txs: list[int] = []  # every transaction time, in order
        # (known_at, valid_at, states, [(store fact id, row)]) of reads made with known_at = latest
        self.replays: list[tuple[int, int, frozenset[str], list[tuple[str, Any]]]] = []
        self.erased: set[str] = set()
        # cm_versions rows fetched right after the last write (reused by check_all)
        self.rows: list[dict[str, Any]] | None = None

    # -- helpers ----------------------------------------------------------------------
    def now(self) -> int:
        return us(self.clock.now)

    def check_receipt(self, receipt: Any, res: Result, what: str) -> None:
        got = (
            us(receipt.recorded_at), len(receipt.added), len(receipt.unchanged),
            len(receipt.ended), len(receipt.retracted), receipt.superseded_count,
        )  # fmt: skip
        want = (
            res.recorded_at,
            res.added,
            res.unchanged,
            res.ended,
            res.retracted,
            res.superseded_count,
        )
        assert got == want, (
            f"{what}: receipt (tx, added, unchanged, ended, retracted, superseded) {got} != model {want}"
        )
        if self.txs:
            assert res.recorded_at > self.txs[-1], "transaction time must strictly increase"
        self.txs.append(res.recorded_at)
        self.rows = store_rows(self.mem)  # reused by the next check_all: nothing changes between
        problems = self.model.bind(res, self.rows)
        assert not problems, f"{what}: fact identity: {problems}"

    def expect_rejected(self, exc_type: type[Exception], call: Any) -> None:
        before = store_table(store_rows(self.mem))
        with pytest.raises(exc_type):
            call()
        assert store_table(store_rows(self.mem)) == before, "a rejected write changed the store"

    # -- rules --------------------------------------------------------------------------
    @rule(
        subject=st.sampled_from(SUBJECTS),
        predicate=st.sampled_from(PREDICATES),
        obj=st.sampled_from(OBJECTS),
        vf_idx=st.none() | st.integers(0, 7),
        span=st.none() | st.integers(1, 3),
        vt_default=st.integers(0, 10),
        retry=st.booleans(),
    )
    def remember(self, subject, predicate, obj, vf_idx, span, vt_default, retry):
        vf = None if vf_idx is None else GRID_US[vf_idx]
        if span is None:
            vt = None
        elif vf_idx is None:
            vt = GRID_US[vt_default]  # may fall before the transaction time: InvalidInterval
        else:
            vt = GRID_US[vf_idx + span]
        kwargs = {"valid_from": dt(vf), "valid_to": dt(vt)}
        what = f"remember({subject!r}, {predicate!r}, {obj!r}, vf={dt(vf)}, vt={dt(vt)})"
        try:
            res = self.model.remember(
                subject, predicate, obj, now=self.now(), valid_from=vf, valid_to=vt
            )
        except ModelError as exc:
            assert exc.kind == "InvalidInterval"
            self.expect_rejected(
                InvalidInterval, lambda: self.mem.remember(subject, predicate, obj, **kwargs)
            )
            return
        receipt = self.mem.remember(subject, predicate, obj, **kwargs)
        self.check_receipt(receipt, res, what)
        if retry:  # at-least-once delivery: the same write again changes nothing
            self.check_all()
            res2 = self.model.remember(
                subject, predicate, obj, now=self.now(), valid_from=vf, valid_to=vt
            )
            receipt2 = self.mem.remember(subject, predicate, obj, **kwargs)
            self.check_receipt(receipt2, res2, "retry of " + what)
            assert (len(receipt2.unchanged), receipt2.added, receipt2.superseded_count) == (
                1,
                [],
                0,
            ), f"retry of {what} was not idempotent: {receipt2}"

    @rule(
        subject=st.sampled_from(SUBJECTS),
        predicate=st.sampled_from(PREDICATES),
        obj=st.none() | st.sampled_from(OBJECTS),
        at_idx=st.none() | st.integers(0, 10),
    )
    def end(self, subject, predicate, obj, at_idx):
        at = self.now() if at_idx is None else GRID_US[at_idx]
        res = self.model.end(subject, predicate, obj, at=at, now=self.now())
        receipt = self.mem.end(subject, predicate, obj, at=None if at_idx is None else GRID[at_idx])
        self.check_receipt(receipt, res, f"end({subject!r}, {predicate!r}, {obj!r}, at={dt(at)})")

    @precondition(lambda self: self.model.fact_ids())
    @rule(data=st.data())
    def retract(self, data):
        fid = data.draw(st.sampled_from(self.model.fact_ids()), label="fact")
        res = self.model.retract(fid, now=self.now())
        receipt = self.mem.retract(self.model.fact_map[fid])
        self.check_receipt(receipt, res, f"retract({fid})")

    @precondition(lambda self: self.model.live_fact_ids())
    @rule(data=st.data(), obj=st.sampled_from(OBJECTS))
    def correct(self, data, obj):
        fid = data.draw(st.sampled_from(self.model.live_fact_ids()), label="fact")
        res = self.model.correct(fid, obj, now=self.now())
        receipt = self.mem.correct(self.model.fact_map[fid], obj)
        self.check_receipt(receipt, res, f"correct({fid}, {obj!r})")

    # One erase per history: it is a physical delete (and a VACUUM on PostgreSQL),
    # the costliest step, and later steps run against the erased state anyway.
    @precondition(lambda self: self.model.fact_ids() and not self.erased)
    @rule(data=st.data())
    def erase(self, data):
        fid = data.draw(st.sampled_from(self.model.fact_ids()), label="fact")
        n = self.model.erase(fid)
        sfid = self.model.fact_map[fid]
        counts = self.mem.erase(sfid)
        assert counts["versions"] == n, f"erase({fid}) deleted {counts} versions, model {n}"
        self.erased.add(sfid)
        with pytest.raises(NotFound):
            self.mem.erase(sfid)
        # An erase may take a transaction time of its own (it marks the tenant's
        # search mirrors stale); the design leaves that open, so follow the store's clock.
        with self.mem.backend.read() as conn:
            last = conn.execute(
                select(txclock.c.last_us).where(txclock.c.tenant == self.mem.scope.tenant)
            ).scalar_one()
        assert last >= self.model.last_tx
        self.model.last_tx = last

    @rule(delta=st.sampled_from(CLOCK_STEPS))
    def move_clock(self, delta):
        self.clock.now = self.clock.now + delta

    # -- checks after every step ------------------------------------------------------
    @invariant()
    def check_all(self) -> None:
        self.steps += 1
        rows = self.rows if self.rows is not None else store_rows(self.mem)
        self.rows = None
        bad = i1_violations(rows)
        assert not bad, f"I1 violated: {bad}"
        got, want = store_table(rows), self.model.table()
        if got != want:
            extra = [r for r in got if r not in want]
            missing = [r for r in want if r not in got]
            raise AssertionError(
                f"store versions differ from the model\n store only: {extra}\n model only: {missing}"
            )
        self.check_reads()

    def read(
        self, valid_at: int | None, known_at: int | None, states: frozenset[str]
    ) -> list[tuple[str, Any]]:
        facts = self.mem.facts(valid_at=dt(valid_at), known_at=dt(known_at), states=sorted(states))
        return sorted(((f.id, fact_row(f)) for f in facts), key=lambda x: (row_key(x[1]), x[0]))

    def check_reads(self) -> None:
        rng = random.Random(self.steps * 7919 + len(self.model.versions))
        bounds = {
            b for v in self.model.versions for b in (v.valid_from, v.valid_to) if b is not None
        }
        instants = sorted(bounds | set(GRID_US) | {self.now()})
        if self.steps % 2 and self.txs:
            # the latest belief, every state; kept for the exact-replay check
            valid_at = rng.choice(instants)
            got = self.read(valid_at, None, frozenset(ALL_STATES))
            want = self.model.facts(valid_at=valid_at, known_at=None, states=ALL_STATES)
            assert [r for _, r in got] == want, (
                f"facts(valid_at={dt(valid_at)}, all states) != model:\n store {got}\n model {want}"
            )
            self.replays.append((self.txs[-1], valid_at, frozenset(ALL_STATES), got))
            return
        # a past belief instant (a transaction time, or just before one), any state set
        states = rng.choice(STATE_SETS)
        known_at = None
        if self.txs and rng.random() < 0.8:
            known_at = rng.choice(self.txs) - rng.choice([0, 1])
        use_default_now = rng.random() < 0.2
        valid_at = self.now() if use_default_now else rng.choice(instants)
        facts = self.mem.facts(
            valid_at=None if use_default_now else dt(valid_at),
            known_at=dt(known_at),
            states=sorted(states),
        )
        got_rows = sorted((fact_row(f) for f in facts), key=row_key)
        want = self.model.facts(valid_at=valid_at, known_at=known_at, states=states)
        assert got_rows == want, (
            f"facts(valid_at={dt(valid_at)}, known_at={dt(known_at)}, states={sorted(states)}) "
            f"!= model:\n store {got_rows}\n model {want}"
        )

    def teardown(self) -> None:
        # Exact replay: a read at known_at = t returns what the same read returned at t.
        for known_at, valid_at, states, answer in self.replays:
            again = self.read(valid_at, known_at, states)
            before = [x for x in answer if x[0] not in self.erased]
            assert again == before, (
                f"replay at known_at={dt(known_at)}, valid_at={dt(valid_at)} drifted:\n"
                f" then {before}\n now  {again}"
            )


def machine_settings() -> settings:
    return settings(
        max_examples=HISTORIES,
        stateful_step_count=15,
        deadline=None,
        derandomize=False,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        report_multiple_bugs=False,
    )


def test_histories_sqlite(sqlite_store: tuple[Memory, ManualClock]) -> None:
    base, clock = sqlite_store
    run_state_machine_as_test(lambda: BitemporalHistory(base, clock), settings=machine_settings())


@pytest.mark.postgres
def test_histories_postgres(pg_store: tuple[Memory, ManualClock]) -> None:
    base, clock = pg_store
    run_state_machine_as_test(lambda: BitemporalHistory(base, clock), settings=machine_settings())


# -- order independence -------------------------------------------------------------------
def timeline(mem: Memory) -> list[tuple[str, str, int, int | None]]:
    facts = mem.facts(valid_at=GRID[0], states=["live", "ended", "scheduled"])
    return sorted(
        (f.predicate, f.object, us(f.valid_from), None if f.valid_to is None else us(f.valid_to))
        for f in facts
    )


@settings(
    max_examples=ORDER_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    entries=st.lists(
        st.tuples(
            st.sampled_from(["lives_in", "likes"]), st.sampled_from(OBJECTS), st.integers(0, 10)
        ),
        min_size=2,
        max_size=7,
        unique_by=lambda e: (e[0], e[2]),
    ),
    data=st.data(),
)
def test_open_ended_asserts_commute(store: tuple[Memory, ManualClock], entries, data) -> None:
    """Open-ended asserts with distinct valid_from give one timeline in any order."""
    base, clock = store
    clock.now = START
    other = data.draw(st.permutations(entries), label="other order")
    a, b = fresh_tenant(base), fresh_tenant(base)
    for mem, order in ((a, entries), (b, other)):
        for pred, obj, k in order:
            mem.remember("alice", pred, obj, valid_from=GRID[k])
    ta, tb = timeline(a), timeline(b)
    assert ta == tb, f"order {entries} gave {ta}\norder {other} gave {tb}"
    # and the timeline is the one the model gives
    model = ReferenceModel(MODEL_PREDICATES)
    for pred, obj, k in entries:
        model.remember("alice", pred, obj, now=us(START), valid_from=GRID_US[k])
    want = sorted((v.predicate, v.object, v.valid_from, v.valid_to) for v in model.current())
    assert ta == want
