"""What one conversation turn costs as the session grows (issue #32).

LlamaIndex: a whole turn (``put`` the user message, ``get``, ``put`` the answer)
on ``ChronomemMemory`` (SQLite file, hashing embedder, extraction on) and on
LlamaIndex's own ``Memory`` (its default SQLite chat store), each session
seeded with ``--sizes`` messages; calls alternate between the two sides so both
see the same machine load. LangChain: ``add_messages`` (two messages) and
``.messages`` on ``ChronomemChatMessageHistory`` against
``SQLChatMessageHistory`` when langchain-community is installed, else
``InMemoryChatMessageHistory``. Prints one JSON line per size with medians (ms)
and the ratios (targets: turn at 10k ≤ 1.5× the peer and ≤ 1.2× the turn at 1k).

    nice .venv/bin/python benchmarks/turns.py --sizes 1000 10000 --rounds 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import make_embedder
from chronomem import Memory


def _ms(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def _texts(n: int) -> list[tuple[str, str]]:
    return [
        ("user" if i % 2 == 0 else "assistant", f"message {i}: we talked about topic {i % 97}")
        for i in range(n)
    ]


def llamaindex_pair(n: int, folder: str) -> tuple[Any, Any, Callable[[], None]]:
    """``ChronomemMemory`` (SQLite file, hashing embedder, extraction on) and LlamaIndex's
    ``Memory`` (its default SQLite chat store), each seeded with ``n`` messages; and a
    close function."""
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.memory import Memory as LlamaMemory

    from llama_index.memory.chronomem import ChronomemMemory

    seed = [ChatMessage(role=r, content=t) for r, t in _texts(n)]
    store = Memory(
        str(Path(folder) / f"li-{n}-{uuid.uuid4().hex[:6]}.db"), embedder=make_embedder("hashing")
    )
    ours = ChronomemMemory(store.scoped(user="u"), session_id="s", extract=False)
    for at in range(0, n, 1000):
        ours.put_messages(seed[at : at + 1000])
    ours = ChronomemMemory(store.scoped(user="u"), session_id="s")
    peer = LlamaMemory.from_defaults(session_id=f"s{uuid.uuid4().hex}", token_limit=3000)
    peer.put_messages(seed)
    return ours, peer, store.close


def llamaindex_turn(memory: Any, i: int) -> Callable[[], None]:
    """One whole turn: ``put`` the user message, ``get``, ``put`` the answer."""
    from llama_index.core.base.llms.types import ChatMessage

    def run() -> None:
        memory.put(ChatMessage(role="user", content=f"I live in city {i} and like tea."))
        memory.get()
        memory.put(ChatMessage(role="assistant", content=f"Noted, city {i}."))

    return run


def llamaindex_turns(n: int, rounds: int, folder: str) -> dict[str, Any]:
    ours, peer, close = llamaindex_pair(n, folder)
    times: dict[str, list[float]] = {"chronomem": [], "llamaindex": []}
    for i in range(rounds + 1):  # the first round warms both up
        a, b = _ms(llamaindex_turn(ours, i)), _ms(llamaindex_turn(peer, i))
        if i:
            times["chronomem"].append(a)
            times["llamaindex"].append(b)
    close()
    return {k: statistics.median(v) for k, v in times.items()}


def langchain_peers(n: int, folder: str) -> dict[str, Any]:
    """LangChain's own chat histories, empty: ``SQLChatMessageHistory`` on a SQLite file
    (when langchain-community is installed) and ``InMemoryChatMessageHistory``."""
    from langchain_core.chat_history import InMemoryChatMessageHistory

    peers: dict[str, Any] = {}
    try:
        from langchain_community.chat_message_histories import SQLChatMessageHistory

        db = Path(folder) / f"lc-peer-{n}-{uuid.uuid4().hex[:6]}.db"
        peers["SQLChatMessageHistory"] = SQLChatMessageHistory(
            session_id="s", connection=f"sqlite:///{db}"
        )
    except ImportError:
        pass
    peers["InMemoryChatMessageHistory"] = InMemoryChatMessageHistory()
    return peers


def langchain_seed(n: int) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage

    return [
        (HumanMessage if r == "user" else AIMessage)(t, id=f"m{i}")
        for i, (r, t) in enumerate(_texts(n))
    ]


def langchain_histories(n: int, folder: str) -> tuple[Any, dict[str, Any], Callable[[], None]]:
    """``ChronomemChatMessageHistory`` (SQLite file, hashing embedder) and LangChain's own
    histories (``langchain_peers``), each seeded with ``n`` messages; and a close function."""
    from langchain_chronomem import ChronomemChatMessageHistory

    store = Memory(
        str(Path(folder) / f"lc-{n}-{uuid.uuid4().hex[:6]}.db"), embedder=make_embedder("hashing")
    )
    ours = ChronomemChatMessageHistory(store.scoped(user="u"), session_id="s")
    seed = langchain_seed(n)
    for at in range(0, n, 1000):
        ours.add_messages(seed[at : at + 1000])
    peers = langchain_peers(n, folder)
    for peer in peers.values():
        peer.add_messages(seed)
    return ours, peers, store.close


def langchain_pair(i: int) -> list[Any]:
    """The two messages of turn ``i``."""
    from langchain_core.messages import AIMessage, HumanMessage

    return [HumanMessage(f"hi {i}", id=f"q{i}"), AIMessage(f"hello {i}", id=f"a{i}")]


def langchain_history(n: int, rounds: int, folder: str) -> dict[str, Any]:
    ours, peers, close = langchain_histories(n, folder)
    peer_name, peer = next(iter(peers.items()))  # SQLChatMessageHistory when installed
    add: dict[str, list[float]] = {"chronomem": [], "peer": []}
    read: dict[str, list[float]] = {"chronomem": [], "peer": []}
    for i in range(rounds + 1):
        pair = langchain_pair(i)
        a = _ms(lambda pair=pair: ours.add_messages(pair))
        b = _ms(lambda pair=pair: peer.add_messages(pair))
        c = _ms(lambda: ours.messages)
        d = _ms(lambda: peer.messages)
        if i:
            add["chronomem"].append(a)
            add["peer"].append(b)
            read["chronomem"].append(c)
            read["peer"].append(d)
    close()
    return {
        "peer": peer_name,
        "add_ms": {k: statistics.median(v) for k, v in add.items()},
        "messages_ms": {k: statistics.median(v) for k, v in read.items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--skip-langchain", action="store_true")
    args = ap.parse_args()
    turns: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for n in args.sizes:
            li = llamaindex_turns(n, args.rounds, folder)
            turns[n] = li
            row: dict[str, Any] = {
                "messages": n,
                "load_avg_1m": round(os.getloadavg()[0], 2),
                "llamaindex_turn_ms": li,
                "turn_vs_llamaindex": round(li["chronomem"] / li["llamaindex"], 2),
                "turn_vs_smallest": round(li["chronomem"] / turns[args.sizes[0]]["chronomem"], 2),
            }
            if not args.skip_langchain:
                lc = langchain_history(n, args.rounds, folder)
                row["langchain_history"] = lc
                row["add_vs_peer"] = round(lc["add_ms"]["chronomem"] / lc["add_ms"]["peer"], 2)
                row["messages_vs_peer"] = round(
                    lc["messages_ms"]["chronomem"] / lc["messages_ms"]["peer"], 2
                )
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
