"""The middleware stores a thread LangChain edits between turns exactly as a
full confirmation of every id would (issue #32): the thread is walked from its
end by a cursor (the newest stored message and the position it was stored
at), and only a thread whose tail no longer matches is confirmed whole.

The threads are edited with LangGraph's own ``add_messages`` reducer (what an
agent's state does): messages appended, removed (``RemoveMessage``), replaced
by id, the thread rewound to a prefix; and rewritten whole
(``REMOVE_ALL_MESSAGES``), which can insert before the newest stored message."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from chronomem import Memory
from langchain_chronomem import ChronomemMiddleware

from ..statements import Cost, counting
from .conftest import sqlite_only

KEY = "chronomem_transcript"
_examples = itertools.count()


def _msgs(tag: str, n: int, start: int = 0) -> list[BaseMessage]:
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(f"{tag} {i}", id=f"{tag}-{i}")
        for i in range(start, start + n)
    ]


def _stored(mem: Memory) -> list[str]:
    return [e.metadata[KEY]["message_id"] for e in mem.episodes() if KEY in e.metadata]


def _turn(mw: ChronomemMiddleware, thread: list[Any]) -> Cost:
    with counting(mw.memory) as cost:
        mw.store_turn(thread, "t")
    return cost


def test_removed_messages_are_not_stored_again_and_new_ones_are(mem: Memory) -> None:
    mw = ChronomemMiddleware(mem, extract=False)
    thread = add_messages([], _msgs("m", 20))
    mw.store_turn(thread, "t")
    plain = _turn(mw, thread := add_messages(thread, _msgs("m", 2, 20)))
    # remove two messages before the newest stored one, then the agent answers
    thread = add_messages(thread, [RemoveMessage(id="m-3"), RemoveMessage(id="m-15")])
    edited = _turn(mw, thread := add_messages(thread, _msgs("m", 2, 22)))
    assert _stored(mem) == [f"m-{i}" for i in range(24)]  # each once, in order
    # the newest stored message moved: every id was confirmed once (more statements
    # or rows than a plain turn) ...
    assert edited.shape != plain.shape
    # ... and the next turn is back on the cursor, at a plain turn's cost
    again = _turn(mw, add_messages(thread, _msgs("m", 2, 24)))
    assert again.shape == plain.shape, (again.shape, plain.shape)
    assert _stored(mem) == [f"m-{i}" for i in range(26)]


def test_a_rewound_thread_stores_only_what_follows(mem: Memory) -> None:
    mw = ChronomemMiddleware(mem, extract=False)
    thread = _msgs("r", 30)
    mw.store_turn(thread, "t")
    rewound = add_messages(thread, [RemoveMessage(id=f"r-{i}") for i in range(12, 30)])
    assert len(rewound) == 12
    assert mw.store_turn(rewound, "t").episode_ids == []  # a shorter thread: nothing new
    mw.store_turn([*rewound, *_msgs("x", 2)], "t")
    assert _stored(mem) == [*(f"r-{i}" for i in range(30)), "x-0", "x-1"]
    mw.store_turn([*rewound, *_msgs("x", 4)], "t")
    assert _stored(mem)[-4:] == ["x-0", "x-1", "x-2", "x-3"]


def test_a_message_replaced_by_id_is_not_stored_again(mem: Memory) -> None:
    """By id, as a full confirmation would: the replaced message's id is stored."""
    mw = ChronomemMiddleware(mem, extract=False)
    thread = _msgs("e", 10)
    mw.store_turn(thread, "t")
    thread = add_messages(thread, [HumanMessage("edited", id="e-4"), *_msgs("e", 2, 10)])
    assert [m.content for m in thread if m.id == "e-4"] == ["edited"]
    mw.store_turn(thread, "t")
    assert _stored(mem) == [f"e-{i}" for i in range(12)]


def test_a_message_inserted_before_the_newest_stored_one_is_stored(mem: Memory) -> None:
    """A rewrite that keeps the newest stored message at its position (one
    message removed, one inserted before it) leaves a gap in the tail: the
    inserted message is found and stored."""
    mw = ChronomemMiddleware(mem, extract=False)
    thread = _msgs("w", 12)
    mw.store_turn(thread, "t")
    rewritten = [*thread[:7], HumanMessage("inserted", id="ins"), *thread[8:]]
    assert rewritten[11].id == "w-11"  # the newest stored message has not moved
    state = add_messages(thread, [RemoveMessage(id=REMOVE_ALL_MESSAGES), *rewritten])
    mw.store_turn(state, "t")
    assert _stored(mem) == [*(f"w-{i}" for i in range(12)), "ins"]


def test_a_message_without_an_id_before_the_cursor_is_not_stored_again(mem: Memory) -> None:
    """Without an id a message cannot be looked up: it is stored when it follows
    the newest stored message that has one (LangGraph gives every message of an
    agent's state an id, so only direct callers of ``store_turn`` meet this)."""
    mw = ChronomemMiddleware(mem, extract=False)
    thread: list[BaseMessage] = [
        HumanMessage("a", id="a"),
        AIMessage("no id"),
        AIMessage("b", id="b"),
    ]
    mw.store_turn(thread, "t")
    mw.store_turn([*thread, HumanMessage("c", id="c")], "t")
    assert [e.text for e in mem.episodes()] == ["a", "no id", "b", "c"]


# a step: append k new messages, remove one (by index), replace one by id, rewind
_step = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 12)),
    st.tuples(st.just("remove"), st.integers(0, 10_000)),
    st.tuples(st.just("replace"), st.integers(0, 10_000)),
    st.tuples(st.just("rewind"), st.integers(0, 10_000)),
)


@sqlite_only
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(_step, min_size=1, max_size=14))
def test_the_cursor_stores_what_a_full_confirmation_would(
    root: Memory, steps: list[tuple[str, int]]
) -> None:
    """Model: after each turn the transcript holds every id the thread ever
    showed, each once, in order of first appearance (what looking up every id
    each turn stores), whatever reducer edits came between the turns."""
    mem = root.scoped(user=f"u{next(_examples)}")  # a fresh scope per example
    mw = ChronomemMiddleware(mem, extract=False)
    thread: list[BaseMessage] = []
    seen: list[str] = []
    made = 0
    for op, arg in steps:
        if op == "append":
            thread = add_messages(thread, _msgs("h", arg, made))
            made += arg
        elif thread and op == "remove":
            thread = add_messages(thread, [RemoveMessage(id=thread[arg % len(thread)].id)])
        elif thread and op == "replace":
            old = thread[arg % len(thread)]
            thread = add_messages(thread, [AIMessage("replaced", id=old.id)])
        elif thread and op == "rewind":
            cut = arg % len(thread)
            thread = add_messages(thread, [RemoveMessage(id=m.id) for m in thread[cut:]])
        mw.store_turn(thread, "t")
        seen += [m.id for m in thread if m.id not in seen]
        assert _stored(mem) == seen
