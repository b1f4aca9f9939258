"""Export/import (``chronomem.exchange``): a dump round-trips exactly on both
backends; the mem0 history and LangGraph store importers, on data made here."""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Iterator
from datetime import timedelta

import pytest

from chronomem import Memory
from chronomem.errors import ChronomemError, InvalidInput, ScopeError, TimeTravel
from chronomem.exchange import export_jsonl, import_jsonl, import_mem0_history
from chronomem.model import ALL_STATES
from tests.conftest import ManualClock, drop_pg_schema, make_pg_schema, require_pg, utc

TRICKY = "back\\slash \x00nul é 𝄞 \u202e"


@pytest.fixture
def empty_url(backend: str) -> Iterator[str | None]:
    """A second, empty store on the same backend (the import's destination)."""
    if backend == "sqlite":
        yield None
        return
    require_pg()
    url, schema = make_pg_schema()
    try:
        yield url
    finally:
        drop_pg_schema(schema)


def _history(m: Memory, clock: ManualClock) -> None:
    """A history with every kind of change, scopes, episodes and awkward text."""
    m.register_predicate("works_at", cardinality="one")
    ep = m.add_episode("I moved to Paris last summer", role="user", metadata={"chat": 1})
    m.remember("alice", "lives_in", "Paris", valid_from=utc(2025, 6, 1), source=ep,
               extractor="rules", metadata={"confidence": 0.9})  # fmt: skip
    clock.advance(days=30)
    wrong = m.remember("alice", "lives_in", "Lyon", valid_from=utc(2025, 9, 1))
    clock.advance(days=3)
    m.retract(wrong.fact_ids[0])
    clock.advance(days=3)
    m.remember("alice", "works_at", "Acme", valid_from=utc(2024, 1, 1))
    clock.advance(days=10)
    m.remember("alice", "works_at", "Globex", valid_from=utc(2026, 2, 1))
    m.end("alice", "works_at", at=utc(2026, 6, 1))
    bob = m.scoped(user="bob")
    e2 = bob.add_episode(TRICKY, role="assistant")
    r = bob.remember("bob", "likes", TRICKY, source=e2)
    clock.advance(days=1)
    bob.correct(r.fact_ids[0], "tea")
    m.remember("carol", "starts_at", "Initech", valid_from=utc(2027, 1, 1))  # scheduled
    m.remember("dave", "plays", "chess", valid_to=utc(2026, 3, 1))
    clock.advance(days=1)


def _instants(
    m: Memory, subjects: tuple[str, ...] = ("alice", "bob", "carol", "dave"), user: str = "bob"
) -> tuple[list, list]:
    """Every belief change (and the microsecond before it); every validity boundary."""
    known, valid = set(), set()
    for view in (m, m.scoped(user=user)):
        for sub in subjects:
            for f in view.timeline(sub).versions:
                known |= {f.recorded_at} | ({f.superseded_at} if f.superseded_at else set())
                valid |= {f.valid_from} | ({f.valid_to} if f.valid_to else set())
    known |= {t - timedelta(microseconds=1) for t in known}
    return sorted(known), sorted(valid)


def _reads(m: Memory, known: list, valid: list) -> list:
    seen: list = []
    last = known[-1]
    for view in (m, m.scoped(user="bob")):
        for k in known:
            seen.append(view.episodes(known_at=k))
            for v in valid:
                seen.append(view.facts(states=ALL_STATES, valid_at=v, known_at=k))
        seen.append(view.stats())
        for f in view.facts(states=ALL_STATES, valid_at=last, known_at=last):
            seen.append(view.why(f.id).versions)
        hits = view.search("where does alice live", k=5, as_of=last)
        seen.append([(h.fact.version_id if h.fact else None, h.score) for h in hits])
    return seen


def test_dump_round_trips_every_read_at_every_past_instant(
    url: str | None, empty_url: str | None, clock: ManualClock
) -> None:
    src = Memory(url, clock=clock)
    dst = Memory(empty_url, clock=clock)
    try:
        _history(src, clock)
        buf = io.StringIO()
        counts = export_jsonl(src, buf)
        assert counts == {"predicate": 1, "episode": 2, "version": 11, "source": 2}
        lines = buf.getvalue().splitlines()
        header = json.loads(lines[0])
        assert header["type"] == "chronomem" and header["format"] == 1
        assert all(json.loads(x)["type"] != "chronomem" for x in lines[1:])

        imported = import_jsonl(dst, io.StringIO(buf.getvalue()))
        assert imported["versions"] == counts["version"]
        known, valid = _instants(src)
        assert len(known) >= 16 and len(valid) > 5
        assert _reads(dst, known, valid) == _reads(src, known, valid)

        again = io.StringIO()
        export_jsonl(dst, again)
        assert again.getvalue().splitlines()[1:] == lines[1:]  # byte-for-byte but the header

        # the copy keeps going: a new write stamps after every imported belief change
        latest = max(f.recorded_at for f in dst.facts(states=ALL_STATES))
        r = dst.remember("alice", "lives_in", "Berlin", valid_from=utc(2026, 1, 1))
        assert r.recorded_at is not None and r.recorded_at > latest
    finally:
        src.close()
        dst.close()


def test_import_refuses_a_tenant_that_holds_memory_and_writes_nothing(clock: ManualClock) -> None:
    src = Memory(clock=clock)
    src.remember("alice", "likes", "tea")
    buf = io.StringIO()
    export_jsonl(src, buf)
    dst = Memory(clock=clock)
    dst.remember("zed", "likes", "coffee")
    with pytest.raises(InvalidInput, match="already holds memory"):
        import_jsonl(dst, io.StringIO(buf.getvalue()))
    assert [f.subject for f in dst.facts(states=ALL_STATES)] == ["zed"]
    with pytest.raises(ScopeError):
        import_jsonl(Memory(clock=clock, user="u"), io.StringIO(buf.getvalue()))
    other = dst.scoped(tenant="copy")  # another tenant of the same database is empty
    assert import_jsonl(other, io.StringIO(buf.getvalue()))["versions"] == 1
    assert [f.object for f in other.facts()] == ["tea"]


def recount(recs: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    """An edited dump whose header counts what it holds (so the edit, not the
    count check, is what import meets)."""
    if recs and recs[0]["type"] == "chronomem":
        kinds = ("predicate", "episode", "version", "source")
        counts = {k + "s": sum(r["type"] == k for r in recs) for k in kinds}
        recs = [{**recs[0], "counts": counts}, *recs[1:]]
    return recs


_PRED = {"type": "predicate", "name": "likes", "canonical": "likes", "cardinality": "many",
         "volatility": "stable", "origin": "user"}  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda recs: recs[1:], "header"),
        (lambda recs: [*recs, {"type": "gossip"}], "unknown record type"),
        (lambda recs: [*recs, _PRED, _PRED], "twice"),
        (
            lambda recs: [*recs, *({**r, "id": "copy"} for r in recs if r["type"] == "version")],
            "invariant I1",
        ),
        (
            lambda recs: [
                *recs,
                {
                    "type": "source",
                    "fact_id": "nope",
                    "episode_id": "x",
                    "recorded_at": "2026-01-01T00:00:00+00:00",
                },
            ],
            "does not hold",
        ),
        (
            lambda recs: [
                {**r, "valid_from": "yesterday"} if r["type"] == "version" else r for r in recs
            ],
            "ISO 8601",
        ),
        (
            lambda recs: [{**r, "object": 7} if r["type"] == "version" else r for r in recs],
            "'object' must be a string",
        ),
    ],
)
def test_import_names_the_bad_line(edit, message, clock: ManualClock) -> None:  # type: ignore[no-untyped-def]
    src = Memory(clock=clock)
    src.remember("alice", "likes", "tea")
    buf = io.StringIO()
    export_jsonl(src, buf)
    recs = [json.loads(x) for x in buf.getvalue().splitlines()]
    text = "\n".join(json.dumps(r) for r in recount(edit(recs)))
    dst = Memory(clock=clock)
    with pytest.raises(InvalidInput, match=message):
        import_jsonl(dst, io.StringIO(text))
    assert dst.stats().versions == 0
    with pytest.raises(InvalidInput, match="line 1: not JSON"):
        import_jsonl(dst, io.StringIO("{not json"))


# -- mem0 ---------------------------------------------------------------------------------
MEM0_SCHEMA = """CREATE TABLE history (
    id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, new_memory TEXT, event TEXT,
    created_at DATETIME, updated_at DATETIME, is_deleted INTEGER, actor_id TEXT, role TEXT)"""


def _mem0_db(path: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute(MEM0_SCHEMA)
    rows = [
        ("h1", "m-food", None, "Likes pizza", "ADD", "2025-03-01T10:00:00-08:00", None, 0,
         "alice", "user"),
        ("h2", "m-home", None, "Lives in Paris", "ADD", "2025-03-01T10:00:00-08:00", None, 0,
         None, "user"),
        ("h3", "m-home", "Lives in Paris", "Lives in Berlin", "UPDATE",
         "2025-03-01T10:00:00-08:00", "2025-05-02T09:30:00-07:00", 0, None, "user"),
        ("h4", "m-food", "Likes pizza", None, "DELETE", "2025-03-01T10:00:00-08:00",
         "2025-06-01T12:00:00+00:00", 1, None, None),
        ("h5", "m-home", "Lives in Berlin", "Lives in Berlin", "NONE", "2025-07-01T00:00:00",
         None, 0, None, None),
    ]  # fmt: skip
    conn.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    conn.commit()
    conn.close()


def test_mem0_history_becomes_facts_on_both_clocks(tmp_path, url: str | None) -> None:  # type: ignore[no-untyped-def]
    db = str(tmp_path / "mem0_history.db")
    _mem0_db(db)
    m = Memory(url, user="alice")
    try:
        counts = import_mem0_history(m, db)
        assert counts == {"add": 2, "update": 1, "delete": 1}
        added, updated, deleted = utc(2025, 3, 1, 18), utc(2025, 5, 2, 16, 30), utc(2025, 6, 1, 12)

        def live(at):  # type: ignore[no-untyped-def]
            return sorted(f.object for f in m.facts(as_of=at))

        assert live(added - timedelta(microseconds=1)) == []
        assert live(added) == ["Likes pizza", "Lives in Paris"]
        assert live(updated) == ["Likes pizza", "Lives in Berlin"]
        assert live(deleted) == ["Lives in Berlin"]
        home = m.history("m-home", "mem0_memory")
        assert [(f.object, f.valid_from, f.valid_to) for f in home] == [
            ("Lives in Paris", added, updated),
            ("Lives in Berlin", updated, None),
        ]
        assert all(f.extractor == "mem0" and f.scope.get("user") == "alice" for f in home)
        assert home[0].metadata["mem0"]["history_id"] == "h2"
        # what we believed before the update was recorded is still answerable
        before = m.facts(subject="m-home", valid_at=updated, known_at=updated - timedelta(days=1))
        assert [f.object for f in before] == ["Lives in Paris"]
        hits = m.search("Berlin", k=3)
        assert hits and hits[0].fact is not None and hits[0].fact.object == "Lives in Berlin"
        with pytest.raises(TimeTravel):  # importing the same history twice goes back in time
            import_mem0_history(m, db)
    finally:
        m.close()


def test_mem0_legacy_history_layout(tmp_path) -> None:  # type: ignore[no-untyped-def]
    db = str(tmp_path / "old.db")
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, prev_value TEXT, "
                 "new_value TEXT, event TEXT, timestamp DATETIME, is_deleted INTEGER)")  # fmt: skip
    conn.execute("INSERT INTO history VALUES ('a', 'm1', NULL, 'Speaks Dutch', 'ADD', "
                 "'2024-01-02 03:04:05', 0)")  # fmt: skip
    conn.commit()
    conn.close()
    with Memory() as m:
        assert import_mem0_history(m, db) == {"add": 1, "update": 0, "delete": 0}
        (f,) = m.facts(subject="m1")
        assert f.object == "Speaks Dutch" and f.recorded_at == utc(2024, 1, 2, 3, 4, 5)
    with Memory() as m, pytest.raises(InvalidInput, match="no mem0 history table"):
        sqlite3.connect(str(tmp_path / "empty.db")).close()
        import_mem0_history(m, str(tmp_path / "empty.db"))


# -- LangGraph ------------------------------------------------------------------------------
def test_langgraph_store_items_become_chronomem_items(url: str | None) -> None:
    from langgraph.store.memory import InMemoryStore

    from langgraph.store.chronomem import ChronomemStore
    from langgraph.store.chronomem.importer import import_store

    source = InMemoryStore()
    source.put(("users", "alice"), "profile", {"city": "Paris", "langs": ["fr", "en"]})
    source.put(("users", "alice"), "profile", {"city": "Berlin", "langs": ["fr", "en"]})
    source.put(("users", "bob"), "profile", {"city": "Rome"})
    source.put(("users",), "index", {"count": 2})
    for i in range(105):  # more than a page
        source.put(("notes",), f"n{i:03d}", {"text": f"note {i}"})
    originals = {
        (tuple(i.namespace), i.key): i
        for ns in source.list_namespaces(limit=100)
        for i in source.search(ns, limit=200)
    }
    target = ChronomemStore(url)
    try:
        assert import_store(source, target) == 108
        for (ns, key), item in originals.items():
            got = target.get(ns, key)
            assert got is not None, (ns, key)
            assert got.value == item.value
            assert got.updated_at == item.updated_at
            assert got.created_at == item.created_at
        alice = target.get(("users", "alice"), "profile")
        assert alice is not None and alice.value["city"] == "Berlin"
        # before the last put was made, the imported store did not know the item
        before = target.as_of(originals[(("users", "alice"), "profile")].updated_at
                              - timedelta(microseconds=1))  # fmt: skip
        assert before.get(("users", "alice"), "profile") is None
        hits = target.search(("users",), query="Rome")
        assert hits and hits[0].key == "profile" and hits[0].namespace == ("users", "bob")
    finally:
        target.close()


# -- model-based: any history round-trips ---------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_op = st.one_of(
    st.tuples(st.just("remember"), st.sampled_from(["ann", "ben"]),
              st.sampled_from(["lives_in", "works_at"]), st.sampled_from(["x", "y", "z"]),
              st.integers(-400, 400)),
    st.tuples(st.just("end"), st.sampled_from(["ann", "ben"]),
              st.sampled_from(["lives_in", "works_at"]), st.integers(-100, 400)),
    st.tuples(st.just("retract"), st.integers(0, 50)),
    st.tuples(st.just("correct"), st.integers(0, 50), st.sampled_from(["x", "w"])),
    st.tuples(st.just("episode"), st.sampled_from(["hi", "moved\\n"])),
)  # fmt: skip


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_op, min_size=1, max_size=14), st.booleans())
def test_any_history_round_trips(ops: list, scoped: bool) -> None:
    clock = ManualClock(utc(2026, 1, 1), tick=timedelta(seconds=1))
    src = Memory(clock=clock)
    view = src.scoped(user="u") if scoped else src
    fids: list[str] = []
    for op in ops:
        clock.advance(hours=1)
        try:
            if op[0] == "remember":
                _, s, p, v, days = op
                r = view.remember(s, p, v, valid_from=utc(2026, 1, 1) + timedelta(days=days))
                fids += r.fact_ids
            elif op[0] == "end":
                view.end(op[1], op[2], at=utc(2026, 1, 1) + timedelta(days=op[3]))
            elif op[0] == "episode":
                view.add_episode(op[1], role="user")
            elif fids:
                fid = fids[op[1] % len(fids)]
                if op[0] == "retract":
                    view.retract(fid)
                else:
                    fids += view.correct(fid, op[2]).fact_ids
        except ChronomemError:
            pass  # a write the state machine refuses (stale, time travel) changes nothing
    buf = io.StringIO()
    export_jsonl(src, buf)
    dst = Memory(clock=clock)
    import_jsonl(dst, io.StringIO(buf.getvalue()))
    known, valid = _instants(src, ("ann", "ben"), "u")
    known += [e.recorded_at for e in src.scoped(user="u").episodes()] + [clock.now]
    for a, b in ((src, dst), (src.scoped(user="u"), dst.scoped(user="u"))):
        for k in known:
            assert a.episodes(known_at=k) == b.episodes(known_at=k)
            for v in [*valid, utc(2026, 1, 1)]:
                assert a.facts(states=ALL_STATES, valid_at=v, known_at=k) == b.facts(
                    states=ALL_STATES, valid_at=v, known_at=k
                )
    src.close()
    dst.close()


def test_progress_bars_on_long_exports_and_imports(capsys) -> None:  # type: ignore[no-untyped-def]
    with Memory() as m:
        m.remember_many([{"subject": f"s{i}", "predicate": "likes", "obj": "tea"}
                         for i in range(300)])  # fmt: skip
        buf = io.StringIO()
        export_jsonl(m, buf, progress=True)
        assert "export" in capsys.readouterr().err
        with Memory() as dst:
            assert import_jsonl(dst, io.StringIO(buf.getvalue()), progress=True)["versions"] == 300
            assert "import" in capsys.readouterr().err
