"""A LangChain turn costs the same whatever the session's length (issue #32):
the chat history's ``add_messages`` looks up the given ids, the middleware's
store after the agent walks the thread from its end (``Transcript.store_thread``),
never the whole transcript. Counted in statements and episode rows at 50 and 400
messages (1k and 10k for the middleware's whole turn), on every backend; on
SQLite every statement the connection runs is traced (``tracing``: prepared
reads skip SQLAlchemy's events) with what runs inside it (FTS5's shadow-table
writes) and the virtual machine's instructions, and each read's plan is checked.
``messages`` returns everything by contract: its statement count stays flat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from chronomem import Memory, reads
from langchain_chronomem import ChronomemChatMessageHistory, ChronomemMiddleware

from ..statements import Cost, counting, decoded_facts, scans_episodes
from .tracing import Trace, episode_plans, tracing


def _thread(n: int, tag: str) -> list[BaseMessage]:
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(f"message {i} " * 4, id=f"{tag}-{i}")
        for i in range(n)
    ]


def _history(root: Memory, session: str, n: int) -> ChronomemChatMessageHistory:
    history = ChronomemChatMessageHistory(root.scoped(user=session), session_id="s")
    history.add_messages(_thread(n, session))
    history.add_messages([HumanMessage("warm", id=f"{session}-w")])
    return history


def _add(history: ChronomemChatMessageHistory, tag: str) -> Trace:
    with tracing(history.memory) as cost:
        history.add_messages([HumanMessage("I like tea.", id=f"{tag}-new"), AIMessage("Noted.")])
    return cost


def test_add_messages_costs_the_same_at_50_and_400(root: Memory) -> None:
    short, long = _history(root, "short", 50), _history(root, "long", 400)
    a, b = _add(short, "short"), _add(long, "long")
    assert a.shape == b.shape, (a.shape, b.shape)
    assert b.episode_rows < 60
    # semantics kept: a stored id is not stored again, a new one is
    long.add_messages([HumanMessage("again", id="long-7"), HumanMessage("x", id="long-x")])
    ids = [m.id for m in long.messages]
    assert ids.count("long-7") == 1 and ids[-1] == "long-x" and len(ids) == 404


def test_add_messages_reads_rows_by_index_at_50_and_400(root: Memory) -> None:
    """Rows, not only statements: new ids cost one lookup of the given ids (schema
    v9's message-id index) and nothing else before the write; a stored id also
    reads the clear markers (their index), never a scan of the scope's episodes.
    On SQLite the virtual machine runs about as many instructions at either length."""
    short, long = _history(root, "short", 50), _history(root, "long", 400)
    long.clear()
    long.add_messages(_thread(30, "after"))
    short.clear()
    short.add_messages(_thread(30, "after"))
    a, b = _add(short, "short"), _add(long, "long")
    assert a.shape == b.shape, (a.shape, b.shape)
    # scanning the 350 extra episodes would run thousands more instructions
    assert abs(a.vm_steps - b.vm_steps) <= 50, (a.vm_steps, b.vm_steps)
    plans = episode_plans(long.memory, b)
    assert len(plans) == 1 and "cm_episodes_message" in plans[0], plans
    # re-sending stored ids (one cleared, one after the clear): the markers are read too
    with tracing(long.memory) as again:
        long.add_messages([HumanMessage("old", id="long-7"), HumanMessage("dup", id="after-3")])
    plans = episode_plans(long.memory, again)
    assert not any(scans_episodes(p) for p in plans), plans
    assert any("cm_episodes_message" in p for p in plans), plans
    assert any("cm_episodes_marker" in p for p in plans), plans
    ids = [m.id for m in long.messages]
    assert ids.count("long-7") == 1 and ids.count("after-3") == 1 and ids[-1] == "long-7"


def _adds(history: ChronomemChatMessageHistory, tag: str) -> list[Trace]:
    """Three ``add_messages`` of a new id and a message without one, each traced."""
    out = []
    for i in range(3):
        with tracing(history.memory) as cost:
            history.add_messages(
                [HumanMessage(f"I like tea {i}.", id=f"{tag}-q{i}"), AIMessage("Noted.")]
            )
        out.append(cost)
    return out


def test_add_messages_costs_the_same_in_a_store_ten_times_larger(root: Memory) -> None:
    """The peer benchmark's session grows with its store (one session per store):
    a session of 20 messages in a store of 20 against one of 2,000 in a store of
    2,020. Every statement ``add_messages`` runs, the id lookup included, and on
    SQLite what runs inside them (the text index's shadow-table writes) and the
    instructions they run, are the same; the lookup is a search of the message-id
    index. An FTS5 merge step may land in any one write (a bulk load leaves some
    to do), so on SQLite each side's cheapest of three calls is compared."""
    short = ChronomemChatMessageHistory(root.scoped(user="short"), session_id="s")
    short.add_messages(_thread(20, "short"))
    short.add_messages([HumanMessage("warm", id="short-w")])
    a = _adds(short, "short")
    long = ChronomemChatMessageHistory(root.scoped(user="long"), session_id="s")
    thread = _thread(2000, "long")
    for at in range(0, len(thread), 500):
        long.add_messages(thread[at : at + 500])
    long.add_messages([HumanMessage("warm", id="long-w")])
    b = _adds(long, "long")
    assert [len(c.statements) for c in a] == [len(c.statements) for c in b], (a, b)
    assert [c.episode_rows for c in a] == [c.episode_rows for c in b] == [2, 2, 2]
    if a[0].sqlite:
        nested = min(len(c.nested) for c in a), min(len(c.nested) for c in b)
        assert nested[0] == nested[1], nested
        steps = min(c.vm_steps for c in a), min(c.vm_steps for c in b)
        # a lookup or write reading the session's or the store's rows would run
        # thousands more instructions at 2,000 messages
        assert abs(steps[0] - steps[1]) <= 50, steps
    for cost in b:
        plans = episode_plans(long.memory, cost)
        assert len(plans) == 1 and "cm_episodes_message" in plans[0], plans
        assert not scans_episodes(plans[0]), plans
    assert [m.id for m in long.messages][-6:] == ["long-q0", None, "long-q1", None, "long-q2", None]


def test_add_messages_after_clear_stores_a_cleared_id_again(root: Memory) -> None:
    history = _history(root, "c", 50)
    history.clear()
    history.add_messages([HumanMessage("back", id="c-3")])
    assert [m.id for m in history.messages] == ["c-3"]


def test_reading_messages_runs_as_many_statements_at_50_and_400(root: Memory) -> None:
    short, long = _history(root, "short", 50), _history(root, "long", 400)
    with tracing(short.memory) as a:
        assert len(short.messages) == 51
    with tracing(long.memory) as b:
        assert len(long.messages) == 401
    assert len(a.statements) == len(b.statements)
    assert b.episode_rows == 401  # the transcript's rows, none of a sibling's
    if b.sqlite:  # PostgreSQL rightly scans a table when the read wants 401 of its 452 rows
        plans = episode_plans(long.memory, b)
        assert len(plans) == 2 and not any(scans_episodes(p) for p in plans), plans


def _agent_turn(mem: Memory, thread: str, n: int) -> Trace:
    mw = ChronomemMiddleware(mem, extract=False)
    stored = _thread(n, thread)
    mw.store_turn(stored, thread)
    turn = [
        *stored,
        HumanMessage("I like tea.", id=f"{thread}-q"),
        AIMessage("Noted.", id=f"{thread}-a"),
    ]
    with tracing(mem) as cost:
        mw.store_turn(turn, thread)
    stored_ids = [e.metadata["chronomem_transcript"]["message_id"] for e in mem.episodes()]
    assert stored_ids[-n - 2 :] == [m.id for m in turn]  # each stored once, in order
    return cost


def test_the_middleware_stores_a_turn_at_the_same_cost_at_50_and_400(root: Memory) -> None:
    a = _agent_turn(root.scoped(user="short"), "t1", 50)
    b = _agent_turn(root.scoped(user="long"), "t2", 400)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert b.episode_rows < 60


def _whole_turn(mem: Memory, n: int) -> tuple[Cost, Trace, Trace, int]:
    """The middleware's turn on a thread of ``n`` stored messages: recall for
    the new user message, then store the thread (extraction on); the costs of
    the two parts of the second turn (the first warms the search mirror): the
    recall counted through SQLAlchemy and traced (prepared reads too), and the
    fact rows the whole turn decodes."""
    mw = ChronomemMiddleware(mem)
    thread = _thread(n, "t")
    ChronomemMiddleware(mem, extract=False).store_turn(thread, "t")
    decode = reads.to_fact
    rows = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        rows[0] += 1
        return decode(*args, **kwargs)

    for i in range(2):
        rows[0] = 0
        reads.to_fact = counted  # type: ignore[assignment]
        try:
            thread.append(HumanMessage(f"I live in city {i} and like tea.", id=f"q{i}"))
            with counting(mem) as recall, tracing(mem) as recall_trace:
                mw.recall_for(thread)
            thread.append(AIMessage(f"Noted, city {i}.", id=f"a{i}"))
            with tracing(mem) as store:
                receipt = mw.store_turn(thread, "t")
        finally:
            reads.to_fact = decode  # type: ignore[assignment]
        assert len(receipt.episode_ids) == 2
    return recall, recall_trace, store, rows[0]


def test_the_middleware_turn_reads_as_much_at_1k_as_at_10k(root: Memory) -> None:
    """Statements and episode rows of a whole turn (recall + store) are the same
    whatever the thread's length: only the thread's newest messages are looked
    up and only the new ones converted. Storing also runs about as many SQLite
    instructions (looking up 9k more ids would run hundreds of thousands more);
    the recall's search-mirror sync is core retrieval's, not counted here."""
    recall_a, traced_a, a, facts_a = _whole_turn(root.scoped(user="short"), 1000)
    recall_b, traced_b, b, facts_b = _whole_turn(root.scoped(user="long"), 10_000)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert recall_a.shape == recall_b.shape, (recall_a.shape, recall_b.shape)
    assert len(traced_a.statements) == len(traced_b.statements), (traced_a, traced_b)
    assert facts_a == facts_b <= 16, (facts_a, facts_b)  # the turn's facts, not the store's
    assert b.episode_rows + recall_b.episode_rows <= 16, (b.episode_rows, recall_b.episode_rows)
    if root.backend.engine.dialect.name == "sqlite":
        assert b.vm_steps < a.vm_steps + 200, (a.vm_steps, b.vm_steps)
    plans = episode_plans(root, b)
    assert plans and not any(scans_episodes(p) for p in plans), plans


CITIES = ("Paris", "Lisbon", "Oslo", "Rome")  # a fact per turn, each ending the last


def _file_turns(path: str, n: int) -> list[tuple[Trace, Trace, int]]:
    """``benchmarks/peers.py``'s middleware row on a SQLite file store of its own
    holding a thread of ``n`` messages (stored without extraction, as there): four
    whole turns (recall for a new user message stating a new city, store the thread
    with extraction on); each turn's recall and store traced, and the fact rows it
    decodes. The first turn loads the search mirror (every row of the store, once
    per process)."""
    with Memory(path) as store:
        mem = store.scoped(user="u")
        thread = _thread(n, "t")
        ChronomemMiddleware(mem, extract=False).store_turn(thread, "t")
        mw = ChronomemMiddleware(mem)
        out = []
        with decoded_facts() as rows:
            for i in range(4):
                before = rows[0]
                city = CITIES[i]
                thread.append(HumanMessage(f"I live in {city} and like tea.", id=f"q{i}"))
                with tracing(mem) as recall:
                    mw.recall_for(thread)
                thread.append(AIMessage(f"Noted, {city}.", id=f"a{i}"))
                with tracing(mem) as store_cost:
                    receipt = mw.store_turn(thread, "t")
                assert len(receipt.episode_ids) == 2 and receipt.fact_ids
                out.append((recall, store_cost, rows[0] - before))
        assert CITIES[-1] in mw.recall_for([HumanMessage("where do I live?")])
    return out


def test_the_middleware_turn_costs_the_same_in_a_store_ten_times_larger(tmp_path: Path) -> None:
    """The peer benchmark's shape: each session in a SQLite file store of its own
    (WAL, pooled connections, the search mirror), 200 against 2,000 messages.
    After the first turn, every turn's recall and store run the same statements,
    decode the same episode and fact rows, and the recall the same SQLite
    instructions, at either size; storing runs about as many (an FTS5 merge step
    may land in any one write, so each side's cheapest store is compared)."""
    a = _file_turns(str(tmp_path / "short.db"), 200)[1:]
    b = _file_turns(str(tmp_path / "long.db"), 2000)[1:]
    for (ra, sa, fa), (rb, sb, fb) in zip(a, b, strict=True):
        assert ra.shape == rb.shape and sa.shape == sb.shape, (ra.shape, rb.shape, sa, sb)
        assert ra.vm_steps == rb.vm_steps, (ra.vm_steps, rb.vm_steps)
        assert fa == fb <= 16, (fa, fb)
        assert sb.episode_rows + rb.episode_rows <= 16, (sb.episode_rows, rb.episode_rows)
    steps = min(s.vm_steps for _, s, _ in a), min(s.vm_steps for _, s, _ in b)
    # reading the session's or the store's rows would run thousands more instructions
    assert abs(steps[0] - steps[1]) <= 50, steps
