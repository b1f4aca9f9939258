"""A CrewAI turn costs the same whatever the memory's size (issue #32): a
``remember`` and a ``recall`` on a memory of 150 or of 600 remembered texts run
as many statements and decode as many episode rows; ``forget`` by record ids
looks those ids up, and listing or resetting reads the facts' sources from one
listing (no statement per record). Counted, never timed, on every backend."""

from __future__ import annotations

from typing import Any

from crewai.memory.types import MemoryRecord

from chronomem import Memory, reads
from crewai_chronomem import ChronomemMemory, ChronomemStorage
from crewai_chronomem.conformance import kit_embedder
from crewai_chronomem.memory import FORGOTTEN, MARK

from ..langchain.tracing import tracing
from ..statements import Cost, counting


def _seeded(root: Memory, user: str, n: int) -> ChronomemMemory:
    cm = ChronomemMemory(memory=root.scoped(user=user))
    cm.remember_many([f"I like hobby{i} a lot." for i in range(n)], scope="/crew")
    return cm


def _turn(cm: ChronomemMemory, i: int) -> Cost:
    with counting(cm.chronomem) as cost:
        cm.remember(f"I live in city{i}.", scope="/crew")
        got = cm.recall("Where do I live?", limit=5)
    assert got
    return cost


def test_a_remember_and_recall_turn_costs_the_same_at_150_and_600(memory: Memory) -> None:
    """Both sizes past the search's own caps (candidates per leg, exact re-scores),
    below which a smaller memory has fewer candidates to re-score."""
    short, long = _seeded(memory, "short", 150), _seeded(memory, "long", 600)
    _turn(short, 0), _turn(long, 0)  # warm: the search mirror loaded, the registry read
    a, b = _turn(short, 1), _turn(long, 1)
    # the vector legs re-score their candidates from the stored vectors, and then
    # the rows whose error bound still reaches the top (data-dependent, at most one
    # more statement per leg): every other statement is the same
    assert _without_rescores(a) == _without_rescores(b)
    assert all(_rescores(c) <= 4 for c in (a, b)), (_rescores(a), _rescores(b))
    assert a.episode_rows == b.episode_rows < 60


def _rescores(cost: Cost) -> int:
    return sum("FROM cm_vectors" in s for s in cost.statements)


def _without_rescores(cost: Cost) -> list[str]:
    return [s for s in cost.statements if "FROM cm_vectors" not in s]


def _forget_one(cm: ChronomemMemory) -> tuple[Cost, int]:
    rid = cm.records("/crew")[-1].id
    with counting(cm.chronomem) as cost:
        n = cm.forget(record_ids=[rid])
    assert all(r.id != rid for r in cm.records("/crew"))
    return cost, n


def test_forget_by_id_costs_the_same_at_50_and_400(memory: Memory) -> None:
    short, long = _seeded(memory, "short", 50), _seeded(memory, "long", 400)
    (a, na), (b, nb) = _forget_one(short), _forget_one(long)
    assert na == nb == 1
    assert a.shape == b.shape, (a.shape, b.shape)


def test_listing_and_reset_run_as_many_statements_at_50_and_400(memory: Memory) -> None:
    short, long = _seeded(memory, "short", 50), _seeded(memory, "long", 400)
    counts = []
    for cm in (short, long):
        with counting(cm.chronomem) as listing:
            records = cm.list_records(scope="/crew", limit=10_000)
        assert len(records) >= 50
        cm.remember("Keep me.", scope="/other")
        with counting(cm.chronomem) as reset:
            cm.reset(scope="/other")
        assert not cm.list_records(scope="/other")
        counts.append((len(listing.statements), len(reset.statements)))
    assert counts[0] == counts[1], counts


def _storage_costs(storage: ChronomemStorage, n: int) -> tuple[int, int, int]:
    def record(i: int, scope: str) -> MemoryRecord:
        text = f"note {i} in {scope}"
        return MemoryRecord(
            id=f"r{n}-{scope}-{i}", content=text, scope=f"/s{n}/{scope}",
            embedding=kit_embedder([text])[0],
        )  # fmt: skip

    storage.save([record(i, "bulk") for i in range(n)] + [record(i, "few") for i in range(5)])
    store = storage.chronomem
    with counting(store) as by_id:
        assert storage.delete(record_ids=[f"r{n}-bulk-0", f"r{n}-bulk-1"]) == 2
    with counting(store) as listing:
        assert len(storage.list_records(scope_prefix=f"/s{n}/bulk", limit=10_000)) == n - 2
    with counting(store) as reset:  # retracting 5 records, whatever else is stored
        storage.reset(scope_prefix=f"/s{n}/few")
    assert storage.count(scope_prefix=f"/s{n}/few") == 0
    assert storage.count(scope_prefix=f"/s{n}/bulk") == n - 2
    return len(by_id.statements), len(listing.statements), len(reset.statements)


def test_the_storage_backend_runs_as_many_statements_at_50_and_400(url: str | None, clock) -> None:  # type: ignore[no-untyped-def]
    storage = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    try:
        _storage_costs(storage, 10)  # warm: one-time loads (the predicate registry) are not growth
        assert _storage_costs(storage, 50) == _storage_costs(storage, 400)
    finally:
        storage.close()


def _fact_rows(monkeypatch: Any) -> list[int]:
    """A counter of the fact rows reads decode (``reads.to_fact`` calls)."""
    count = [0]
    decode = reads.to_fact

    def counted(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return decode(*args, **kwargs)

    monkeypatch.setattr(reads, "to_fact", counted)
    return count


def _forget_a_message_and_update_a_fact(cm: ChronomemMemory, rows: list[int]) -> list[Any]:
    recs = cm.records("/crew")
    facts = [r for r in recs if r.metadata.get("kind") == "fact"]
    cited = facts[0].metadata["source_episode_ids"]
    out = []
    rows[0] = 0
    with tracing(cm.chronomem) as forget:
        assert cm.forget(record_ids=list(cited)) >= 1
    out.append((len(forget.statements), forget.episode_rows, rows[0]))
    rows[0] = 0
    with tracing(cm.chronomem) as update:
        new = cm.update(facts[1].id, content="kayaking")
    out.append((len(update.statements), update.episode_rows, rows[0]))
    live = {r.id: r for r in cm.records("/crew")}
    assert facts[0].id not in live  # read from the forgotten message only: forgotten too
    assert new.metadata["object"] == "kayaking" and new.id in live
    return out


def test_forgetting_a_message_and_updating_a_fact_read_as_much_at_50_and_400(
    memory: Memory, monkeypatch: Any
) -> None:
    """``forget`` of a message retracts the facts only it supports, looked up by
    source (``Memory.facts_citing``), and ``update`` of a fact reads back its new
    value by id: the same statements and fact rows at either size (both listed
    every live fact of the store before)."""
    rows = _fact_rows(monkeypatch)
    short, long = _seeded(memory, "short", 50), _seeded(memory, "long", 400)
    a = _forget_a_message_and_update_a_fact(short, rows)
    b = _forget_a_message_and_update_a_fact(long, rows)
    assert a == b, (a, b)
    assert all(fact_rows <= 4 for _, _, fact_rows in b), b


def _recall_after_forgets(root: Memory, n: int, rows: list[int]) -> tuple[Any, ...]:
    """A memory of 30 texts, one of them forgotten, beside ``n`` other forget markers."""
    cm = ChronomemMemory(memory=root.scoped(tenant=f"forgets{n}", user="u"))
    said = cm.remember_many([f"I like hobby{i} a lot." for i in range(30)], scope="/crew")
    store = cm.chronomem
    store.apply(
        [store.assertion(MARK, FORGOTTEN, f"gone{i}", exact=True, index_text="") for i in range(n)]
    )
    gone = said[3].id
    assert cm.forget(record_ids=[gone]) >= 1
    cm.recall("Which hobby3 do I like?", limit=5)  # warm: the search mirror, the registry
    rows[0] = 0
    with tracing(store) as cost:
        got = cm.recall("Which hobby3 do I like?", limit=5)
    assert got and gone not in {m.record.id for m in got}
    episodes = [m for m in got if m.record.metadata.get("kind") == "episode"]
    assert episodes  # the recall checked its messages against the forget markers
    return (len(_without_rescores(cost)), cost.episode_rows, rows[0], cost.vm_steps)


def test_a_recall_reads_the_forget_markers_of_its_messages_at_200_and_2000_forgets(
    url: str | None, clock: Any, monkeypatch: Any
) -> None:
    """Whether a message found was forgotten is looked up by its marker's slot
    (``Memory.facts_with_values``), not by reading every forget marker of the scope,
    and the facts citing the messages found are looked up through their sources (not
    by a walk of the tenant's versions): the same statements, episode rows and fact
    rows beside 200 or 2,000 markers, and on SQLite about as many instructions (a
    store each there, so the shared text index holds the same texts)."""
    rows = _fact_rows(monkeypatch)
    costs = []
    for n in (200, 2000):
        with Memory(url, clock=clock) as root:
            costs.append(_recall_after_forgets(root, n, rows))
    assert [c[:3] for c in costs[:1]] == [c[:3] for c in costs[1:]], costs
    # SQLite: a handful of instructions apart (a deeper btree), never a walk of the
    # markers (before: 68,277 and 514,840 instructions)
    assert costs[1][3] <= costs[0][3] * 1.02 + 10, costs


def test_the_storage_counts_its_records_in_sql_at_200_and_2000(
    url: str | None, clock: Any, monkeypatch: Any
) -> None:
    """``ChronomemStorage.count()`` (no prefix, or the root) is ``Memory.count_facts``:
    the number of records ``list_records`` lists, with no record read back."""
    rows = _fact_rows(monkeypatch)
    root = ChronomemStorage(url, embedder=kit_embedder, clock=clock)
    try:
        costs = []
        for n in (200, 2000):
            storage = root.scoped(tenant=f"count{n}")
            for at in range(0, n, 500):
                storage.save(
                    [
                        MemoryRecord(id=f"r{i}", content=f"note {i}", scope=f"/s{i % 3}")
                        for i in range(at, min(n, at + 500))
                    ]
                )
            saved = clock.advance(seconds=1)
            storage.delete(record_ids=["r0"])
            storage.count()  # warm: the registry
            rows[0] = 0
            with counting(storage.chronomem) as cost:
                got = [storage.count(), storage.count("/")]
            costs.append((len(cost.statements), rows[0]))
            assert got == [n - 1, n - 1] == [len(storage.list_records(limit=10_000))] * 2
            then = storage.as_of(saved)
            assert then.count() == n == len(then.list_records(limit=10_000))
            assert storage.count("/s1") == len(storage.list_records("/s1", limit=10_000))
        assert costs[0] == costs[1] and costs[0][1] == 0, costs
    finally:
        root.close()
