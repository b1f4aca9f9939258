"""The served-read log (issue #16): what memory handed an agent, replayed exactly.

* ``Memory(read_log=True)`` logs every ``facts``/``search``/``recall`` (its
  scoped views too), with the caller tag in effect; off, nothing is logged.
* Model-based: in random histories of writes (remember, end, retract, correct,
  erase) interleaved with reads and a clock moving both ways, every logged read
  replays to exactly what the original call returned, on SQLite and PostgreSQL;
  a read that served something since erased refuses to replay.
* ``served(run=...)`` answers "what did the agent know in run R" after a later
  correction, end, retraction and erasure; erasure leaves no text in the log.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test
from sqlalchemy import select

from chronomem import Memory, StoreClosed, readlog
from chronomem.queries import FactQuery, RecallQuery, SearchQuery
from chronomem.readlog import ErasedRead
from chronomem.schema import read_items, read_log
from chronomem.timeutil import to_us

from .conftest import ManualClock, utc

SUBJECTS = ("alice", "bob")
PREDICATES = ("lives_in", "likes")
OBJECTS = ("paris", "berlin", "rome")


def _outcome(op: str, out: Any) -> Any:
    """What a read returned, compared field by field (a version's later
    ``superseded_at`` and the episodes citing it may grow; what was served may not)."""
    if op == "facts":
        return [
            (f.version_id, f.state, f.object, f.valid_from, f.valid_to, f.recorded_at) for f in out
        ]
    if op == "search":
        return [
            (
                h.fact.version_id if h.fact else h.episode.id,
                h.fact.state if h.fact else None,
                h.score,
            )
            for h in out
        ]
    return out


# -- the switch, the tag, scoped views ---------------------------------------------------------
def test_off_by_default_logs_nothing(memory: Memory) -> None:
    memory.remember("alice", "lives_in", "Paris")
    memory.facts(subject="alice")
    memory.search("alice")
    assert memory.read_log is False
    assert memory.reads() == []


def test_every_read_is_logged_with_tag_scope_and_resolved_arguments(
    url: str | None, clock: ManualClock
) -> None:
    m = Memory(url, clock=clock, read_log=True)
    try:
        m.remember("alice", "lives_in", "Paris")
        user = m.scoped(user="u1")  # a view inherits the switch
        with m.read_tag(run="r1", thread="t1"):
            f = m.facts(subject="alice")
            with m.read_tag(checkpoint="c1"):
                hits = user.search("where does alice live", k=3)
            block = m.recall("alice")
        m.facts(subject="alice")  # untagged
        logged = m.reads(run="r1")
        assert [r.op for r in logged] == ["facts", "search", "recall"]
        assert logged[0].tag == {"run": "r1", "thread": "t1"}
        assert logged[1].tag == {"run": "r1", "thread": "t1", "checkpoint": "c1"}
        assert logged[1].scope == {"tenant": "default", "user": "u1"}
        assert logged[0].args["subject"] == "alice"
        assert logged[0].args["valid_at"] is not None  # "now" resolved and kept
        assert logged[1].args["query"] == "where does alice live" and logged[1].args["k"] == 3
        assert [i.id for i in logged[0].items] == [x.version_id for x in f]
        assert [(i.id, i.score) for i in logged[1].items] == [
            (h.fact.version_id, h.score) for h in hits if h.fact
        ]
        assert [i.id for i in logged[2].items] == [f[0].version_id]  # recall: one read, its hits
        assert "Paris" in block
        assert len(m.reads()) == 4
        assert [r.op for r in m.reads(tag={"checkpoint": "c1"})] == ["search"]
        # the user's view sees its own reads, not the tenant's
        assert [r.op for r in user.reads()] == ["search"]
        assert [r.id for r in m.reads(since=logged[0].at, run="r1")] == [r.id for r in logged]
        m.read_log = False
        m.facts()
        assert len(m.reads()) == 4
    finally:
        m.close()


def test_read_instants_are_transaction_times(memory: Memory, clock: ManualClock) -> None:
    """A read ticks the tenant's transaction clock: writes after it are stamped
    after it, even when the wall clock went backwards."""
    memory.read_log = True
    memory.remember("alice", "lives_in", "Paris")
    memory.facts()
    clock.advance(seconds=-30)
    r = memory.remember("alice", "lives_in", "Rome")
    (read,) = memory.reads()
    assert r.recorded_at > read.at
    assert memory.replay(read.id)[0].object == "Paris"
    memory.facts()
    assert [x.at for x in memory.reads(since=r.recorded_at)] == [r.recorded_at]
    assert [x.id for x in memory.reads(until=read.at)] == [read.id]


# -- model-based replay --------------------------------------------------------------------------
class ReplayMachine(RuleBasedStateMachine):
    """Random writes and reads; at the end every logged read replays exactly."""

    mem: Memory
    clock: ManualClock

    def __init__(self) -> None:
        super().__init__()
        self.m = self.mem.scoped(tenant=f"t{uuid.uuid4().hex[:12]}")
        self.served: list[tuple[str, Any]] = []  # (op, outcome) in call order
        self.facts_seen: list[str] = []
        self.erased: set[str] = set()
        self.quiet_from = 0  # reads from this index on saw no later write

    @rule(
        s=st.sampled_from(SUBJECTS),
        p=st.sampled_from(PREDICATES),
        o=st.sampled_from(OBJECTS),
        day=st.none() | st.integers(0, 40),
    )
    def remember(self, s: str, p: str, o: str, day: int | None) -> None:
        self.quiet_from = len(self.served)
        vf = None if day is None else utc(2024, 1, 1) + timedelta(days=day)
        r = self.m.remember(s, p, o, valid_from=vf)
        self.facts_seen += r.fact_ids

    @rule(s=st.sampled_from(SUBJECTS), p=st.sampled_from(PREDICATES), day=st.integers(0, 60))
    def end(self, s: str, p: str, day: int) -> None:
        self.quiet_from = len(self.served)
        self.m.end(s, p, at=utc(2024, 1, 1) + timedelta(days=day))

    @rule(i=st.integers(0, 50))
    def retract(self, i: int) -> None:
        self.quiet_from = len(self.served)
        if self.facts_seen:
            fid = self.facts_seen[i % len(self.facts_seen)]
            if fid not in self.erased:
                self.m.retract(fid)

    @rule(i=st.integers(0, 50), o=st.sampled_from(OBJECTS))
    def correct(self, i: int, o: str) -> None:
        self.quiet_from = len(self.served)
        if self.facts_seen:
            fid = self.facts_seen[i % len(self.facts_seen)]
            try:
                r = self.m.correct(fid, o)
                self.facts_seen += r.fact_ids
            except Exception:  # nothing live to correct
                pass

    @rule(i=st.integers(0, 50))
    def erase(self, i: int) -> None:
        self.quiet_from = len(self.served)
        if self.facts_seen:
            fid = self.facts_seen[i % len(self.facts_seen)]
            if fid not in self.erased:
                self.m.erase(fid)
                self.erased.add(fid)

    @rule()
    def flush(self) -> None:  # pending entries written now, not at the next log call
        readlog.flush(self.m)

    @rule(seconds=st.integers(-20, 3600))
    def tick(self, seconds: int) -> None:
        self.clock.advance(seconds=seconds)

    @rule(
        s=st.none() | st.sampled_from(SUBJECTS),
        day=st.none() | st.integers(0, 60),
        states=st.none() | st.just(["live", "ended", "scheduled", "retracted"]),
    )
    def read_facts(self, s: str | None, day: int | None, states: list[str] | None) -> None:
        va = None if day is None else utc(2024, 1, 1) + timedelta(days=day)
        out = self.m.facts(subject=s, valid_at=va, states=states)
        self.served.append(("facts", _outcome("facts", out)))

    @rule(q=st.sampled_from(["alice", "where does bob live", "likes rome", "paris berlin"]))
    def read_search(self, q: str) -> None:
        out = self.m.search(q, k=4)
        self.served.append(("search", _outcome("search", out)))

    @rule(q=st.sampled_from(["alice", "bob lives"]), history=st.booleans())
    def read_recall(self, q: str, history: bool) -> None:
        self.served.append(("recall", self.m.recall(q, include_history=history)))

    def teardown(self) -> None:
        logged = self.m.reads()
        assert [r.op for r in logged] == [op for op, _ in self.served]
        gone = {i.id for r in logged for i in r.items if i.erased}
        for read, (op, original) in zip(logged, self.served, strict=True):
            if read.erased:
                assert any(i.erased for i in read.items)
                with pytest.raises(ErasedRead):
                    self.m.replay(read.id)
                continue
            assert not any(i.id in gone for i in read.items)
            assert _outcome(op, self.m.replay(read.id)) == original, (op, read.args)
        # a re-executed read equals the original when nothing was written since
        for n, (read, (op, original)) in enumerate(zip(logged, self.served, strict=True)):
            if n >= self.quiet_from and not read.erased:
                assert _outcome(op, self.m.replay(read.id, rerun=True)) == original, op


@pytest.fixture
def logged_memory(url: str | None, clock: ManualClock) -> Iterator[Memory]:
    m = Memory(url, clock=clock, read_log=True)
    yield m
    m.close()


def test_replay_equals_the_original_for_every_read(
    logged_memory: Memory, clock: ManualClock, backend: str
) -> None:
    ReplayMachine.mem = logged_memory
    ReplayMachine.clock = clock
    run_state_machine_as_test(
        ReplayMachine,
        settings=settings(
            max_examples=40 if backend == "sqlite" else 15,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )


# -- what the agent knew -------------------------------------------------------------------------
def test_what_did_the_agent_know_in_run_r(url: str | None, clock: ManualClock) -> None:
    m = Memory(url, clock=clock, read_log=True)
    try:
        home = m.remember("alice", "lives_in", "Paris").fact_ids[0]
        m.remember("alice", "works_at", "Acme")
        pet = m.remember("alice", "has_pet", "Rex").fact_ids[0]
        diet = m.remember("alice", "diet", "vegan").fact_ids[0]
        color = m.remember("alice", "likes_color", "green").fact_ids[0]
        with m.read_tag(run="R"):
            answer = m.facts(subject="alice")
        with m.read_tag(run="other"):
            m.facts(subject="alice")
        assert len(answer) == 5
        clock.advance(days=1)
        m.correct(home, "Berlin")
        m.end("alice", "works_at", at=clock() - timedelta(hours=1))
        m.retract(pet)
        m.erase(diet)

        knew = m.served(run="R")
        assert len(knew.reads) == 1
        by_change = {it.change: it for it in knew.items}
        assert set(by_change) == {"corrected", "ended", "retracted", "erased", "unchanged"}
        corrected = by_change["corrected"]
        assert corrected.then.object == "Paris" and corrected.state_then == "live"
        assert corrected.now is not None and corrected.now.object == "Berlin"
        assert by_change["ended"].then.predicate == "works_at"
        assert by_change["retracted"].then.object == "Rex"
        assert by_change["erased"].then is None
        assert by_change["unchanged"].then.id == color
        text = knew.text()
        assert "corrected to 'Berlin'" in text and "vegan" not in text
        assert {i.change for i in knew.changed()} == {"corrected", "ended", "retracted", "erased"}
        # run R was served the erased fact: its answer can no longer be replayed
        with pytest.raises(ErasedRead):
            m.replay(knew.reads[0].id)
    finally:
        m.close()


def _log_text(m: Memory) -> str:
    readlog.flush(m)  # what the database holds, pending entries written
    with m.backend.read() as conn:
        rows = [
            dict(r._mapping)
            for r in conn.execute(select(read_log).where(read_log.c.tenant == m.scope.tenant))
        ]
        items = [
            dict(r._mapping)
            for r in conn.execute(select(read_items).where(read_items.c.tenant == m.scope.tenant))
        ]
    return json.dumps([rows, items], default=str)


def test_erasure_leaves_no_text_in_the_log(url: str | None, clock: ManualClock) -> None:
    m = Memory(url, clock=clock, read_log=True)
    try:
        fid = m.remember("zanzibar-person", "lives_in", "Quux City").fact_ids[0]
        keep = m.remember("bob", "lives_in", "Rome").fact_ids[0]
        with m.read_tag(run="R"):
            m.search("zanzibar-person Quux City")
            m.facts(subject="zanzibar-person")
            m.recall("where does zanzibar-person live")
            m.facts(subject="bob")
        assert "zanzibar" in _log_text(m)
        m.erase_subject("zanzibar-person")
        dump = _log_text(m)
        assert "zanzibar" not in dump.lower() and "quux" not in dump.lower()
        logged = m.reads(run="R")
        assert [r.erased for r in logged] == [True, True, True, False]
        assert all(i.erased for i in logged[1].items)  # facts(subject=...) served only it
        for r in logged[:3]:  # search and recall may also have served bob's fact
            assert {i.id for i in r.items if not i.erased} <= {i.id for i in logged[3].items}
        assert logged[0].args["query"] is None and logged[1].args["subject"] is None
        assert m.replay(logged[3].id)[0].id == keep
        assert fid not in {it.then.id for it in m.served(run="R").items if it.then is not None}
    finally:
        m.close()


def test_purge_removes_the_scope_reads(memory: Memory) -> None:
    memory.read_log = True
    u = memory.scoped(user="u1")
    u.remember("alice", "lives_in", "Paris")
    memory.remember("bob", "lives_in", "Rome")
    u.facts()
    memory.facts()
    assert len(memory.reads()) == 2
    u.purge()
    assert u.reads() == []
    (left,) = memory.reads()
    assert not left.erased  # the tenant's read served only the tenant's fact


def test_episodes_served_by_search_reach_the_log_and_erasure(memory: Memory) -> None:
    memory.read_log = True
    ep = memory.add_episode("alice said she moved to Lisbon", role="user")
    fid = memory.remember("alice", "lives_in", "Lisbon", source=ep).fact_ids[0]
    hits = memory.search("Lisbon", include_episodes=True)
    (read,) = memory.reads()
    served = [(i.kind, i.id) for i in read.items]
    assert served == [
        ("v", h.fact.version_id) if h.fact else ("e", h.episode.id)
        for h in hits
        if h.fact or h.episode
    ]
    assert ("e", ep.id) in served
    memory.erase(fid)  # the episode is no longer cited by anything: erased with it
    (read,) = memory.reads()
    assert read.erased and all(i.erased for i in read.items)
    assert "lisbon" not in _log_text(memory).lower()


def test_the_benchmark_script_runs() -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "readlog.py"
    done = subprocess.run(
        [sys.executable, str(script), "--facts", "40", "--rounds", "1", "--calls", "2"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["backend"] for r in rows] == ["sqlite-memory", "sqlite"]
    for r in rows:
        assert r["logged_reads"] == 3 * 2 * 1  # every "on" call logged, no "off" call
        for op in ("facts", "search", "recall"):
            assert r[f"{op}_off_ms"] > 0 and r[f"{op}_ratio"] > 0


# -- batched log writes ----------------------------------------------------------------------------
def _stored_reads(m: Memory) -> int:
    """Reads the database holds, without flushing what is pending."""
    with m.backend.read() as conn:
        return len(conn.execute(select(read_log.c.id)).all())


def test_reads_are_written_in_batches_and_seen_by_every_log_call(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The clock the age flush reads stands still: on a loaded machine the loop
    # below can take longer than FLUSH_AFTER_S, and only the count may flush here.
    frozen = readlog.batch.time.monotonic()
    monkeypatch.setattr(readlog.batch.time, "monotonic", lambda: frozen)
    memory.read_log = True
    memory.remember("alice", "lives_in", "Paris")
    memory.facts()
    assert _stored_reads(memory) == 0  # pending: the read wrote nothing
    assert len(memory.reads()) == 1 and _stored_reads(memory) == 1
    for _ in range(readlog.FLUSH_EVERY):
        memory.facts(subject="alice")
    assert _stored_reads(memory) == 1 + readlog.FLUSH_EVERY  # a full batch is written
    memory.facts()
    read = memory.facts()
    assert _stored_reads(memory) == 1 + readlog.FLUSH_EVERY
    latest = memory.reads()[-1]
    assert memory.replay(latest.id) == read
    assert len(memory.served(read_ids=[latest.id]).items) == 1


def test_a_pending_read_reaches_the_log_after_an_age(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.read_log = True
    memory.facts()
    now = [readlog.batch.time.monotonic()]
    monkeypatch.setattr(readlog.batch.time, "monotonic", lambda: now[0])
    memory.facts()
    assert _stored_reads(memory) == 0
    now[0] += readlog.FLUSH_AFTER_S
    memory.facts()
    assert _stored_reads(memory) == 3


def test_close_writes_the_pending_reads(durable_url: str, clock: ManualClock) -> None:
    m = Memory(durable_url, clock=clock, read_log=True)
    m.remember("alice", "lives_in", "Paris")
    with m.read_tag(run="R"):
        served = m.facts()
    m.close()
    again = Memory(durable_url, clock=clock)
    try:
        (read,) = again.reads(run="R")
        assert [i.id for i in read.items] == [f.version_id for f in served]
        assert again.replay(read.id) == served
    finally:
        again.close()


def test_erasing_a_pending_read_leaves_no_text(memory: Memory) -> None:
    memory.read_log = True
    fid = memory.remember("zanzibar-person", "lives_in", "Quux City").fact_ids[0]
    memory.search("zanzibar-person Quux City")
    memory.facts(subject="zanzibar-person")
    assert _stored_reads(memory) == 0
    memory.erase(fid)  # the pending reads are written in the erasing transaction, then cleared
    dump = _log_text(memory).lower()
    assert "zanzibar" not in dump and "quux" not in dump
    assert [r.erased for r in memory.reads()] == [True, True]


def test_a_batch_written_after_another_store_erased_leaves_no_text(
    durable_url: str, clock: ManualClock
) -> None:
    """Another process erases while this one holds pending reads of the fact."""
    m = Memory(durable_url, clock=clock, read_log=True)
    other = Memory(durable_url, clock=clock)
    try:
        fid = m.remember("zanzibar-person", "lives_in", "Quux City").fact_ids[0]
        keep = m.remember("bob", "lives_in", "Rome")
        m.facts(subject="zanzibar-person")
        m.search("zanzibar-person Quux City")
        bob = m.facts(subject="bob")
        other.erase(fid)
        dump = _log_text(m).lower()
        assert "zanzibar" not in dump and "quux" not in dump
        logged = m.reads()
        assert [r.erased for r in logged] == [True, True, False]
        assert all(i.erased for i in logged[0].items) and logged[0].args["subject"] is None
        assert m.replay(logged[2].id) == bob and bob[0].version_id == keep.added[0]
    finally:
        other.close()
        m.close()


def test_reads_from_many_threads_are_all_logged(durable_url: str, clock: ManualClock) -> None:
    from concurrent.futures import ThreadPoolExecutor

    m = Memory(durable_url, clock=clock, read_log=True)
    try:
        m.remember("alice", "lives_in", "Paris")

        def read(i: int) -> str:
            with m.read_tag(run=f"r{i}"):
                return m.facts(subject="alice")[0].version_id

        with ThreadPoolExecutor(4) as pool:
            served = list(pool.map(read, range(150)))
        logged = m.reads()
        assert sorted(r.tag["run"] for r in logged) == sorted(f"r{i}" for i in range(150))
        assert {i.id for r in logged for i in r.items} == set(served)
    finally:
        m.close()


def test_an_erase_that_rolls_back_keeps_the_pending_reads(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.read_log = True
    fid = memory.remember("alice", "lives_in", "Paris").fact_ids[0]
    served = memory.facts(subject="alice")

    def fail(conn: Any) -> None:
        raise RuntimeError("the erase fails after the log was written in its transaction")

    monkeypatch.setattr(memory.backend, "after_erase", fail)
    with pytest.raises(RuntimeError):
        memory.erase(fid)
    monkeypatch.undo()
    (read,) = memory.reads()
    assert not read.erased and memory.replay(read.id) == served
    memory.erase(fid)
    (read,) = memory.reads()
    assert read.erased


def test_a_store_that_cannot_write_its_pending_reads_still_closes(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.read_log = True
    memory.facts()
    memory.facts()

    def down(p: Any) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(readlog.batch, "_flush", down)
    with pytest.warns(RuntimeWarning, match="2 served-read log entries were not written"):
        memory.close()
    with pytest.raises(StoreClosed):
        memory.facts()


# -- reads as values -------------------------------------------------------------------------------
def test_each_read_is_logged_as_its_frozen_query_value(memory: Memory, clock: ManualClock) -> None:
    memory.read_log = True
    memory.remember("alice", "lives_in", "Paris")
    now = clock()
    memory.facts(subject="alice", states=["live", "ended"], valid_at=now)
    memory.search("alice", k=3, predicates=("lives_in",), valid_at=now)
    memory.recall("alice", include_history=True, valid_at=now)
    facts, search, recall = memory.reads()
    assert facts.query == FactQuery(subject="alice", valid_at=now, states=["ended", "live"])
    assert search.query == SearchQuery("alice", k=3, valid_at=now, predicates=["lives_in"])
    assert recall.query == RecallQuery("alice", include_history=True, valid_at=now)
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.query.subject = "bob"  # type: ignore[misc]


def test_a_read_stored_in_the_log_format_replays(memory: Memory, clock: ManualClock) -> None:
    """The stored arguments are every parameter by name, instants in µs, states
    sorted by name: a row written in that format replays to the same answer."""
    memory.read_log = True
    memory.remember("alice", "lives_in", "Paris")
    now = clock()
    served = memory.facts(subject="alice", valid_at=now)
    (read,) = memory.reads()
    stored = {
        "subject": "alice",
        "predicate": None,
        "obj": None,
        "valid_at": to_us(now, "valid_at"),
        "known_at": None,
        "as_of": None,
        "states": None,
        "limit": None,
        "subject_prefix": None,
        "exact": False,
        "subjects": None,
    }
    with memory.backend.read() as conn:
        raw = conn.execute(select(read_log.c.args).where(read_log.c.id == read.id)).scalar_one()
    assert json.loads(raw) == stored
    with memory.backend.write() as conn:
        conn.execute(
            read_log.update()
            .where(read_log.c.id == read.id)
            .values(args=json.dumps(dict(reversed(stored.items()))))
        )
    clock.advance(days=1)
    memory.end("alice", "lives_in")
    assert _outcome("facts", memory.replay(read.id)) == _outcome("facts", served)
    assert memory.facts(subject="alice") == []


def test_no_read_binds_a_signature() -> None:
    """The log stores the query value the read built: no signature introspection."""
    package = Path(readlog.__file__).parent
    assert not [p.name for p in package.glob("*.py") if "inspect" in p.read_text()]
