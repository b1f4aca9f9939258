"""The facts a block shows for a question, and the present of what its messages said.

A facts-only block (``ChronomemMemoryBlock``) reads ``Memory.recall`` without
episodes: the live facts the question's words find. A question can share no word
with the fact that answers it and still name what an earlier message said: "Where
am I headed?" finds no fact "user plans visit Peru instead", but its words find "I
plan to visit Japan." (a message whose fact was since superseded). Core search
already ranks the live fact that replaced a stale message's fact at least as high
as the message (docs/design.md §6, "Stale episodes"), so when the facts alone find
nothing, the block asks the same recall with the messages and keeps its facts
(and earlier values), never the messages: the present answers the question its
past matched. The second read runs only when the first found no fact and the scope holds a
live fact at all (``Memory.holds_live_fact``, one statement that stops at the
first): a store without facts, a transcript alone, pays for no message search;
both reads are ``Memory.recall``, bounded as any recall is."""

from __future__ import annotations

from datetime import datetime

from chronomem import Memory
from chronomem.render import CLOSE, HEADER_EPISODES, HEADER_HISTORY, HEADER_LIVE, OPEN


def facts_only(block: str) -> str:
    """``block`` (a rendered recall) without its messages; ``""`` when it has no
    fact line (live or earlier value)."""
    lines: list[str] = []
    in_messages = False
    for line in block.splitlines():
        if line == HEADER_EPISODES:
            in_messages = True
            continue
        if line in (HEADER_LIVE, HEADER_HISTORY, CLOSE):
            in_messages = False
        if not in_messages:
            lines.append(line)
    if not any(line not in (OPEN, CLOSE, HEADER_LIVE, HEADER_HISTORY) for line in lines):
        return ""
    return "\n".join(lines)


def facts_recall(
    memory: Memory,
    query: str,
    *,
    k: int,
    include_history: bool,
    valid_at: datetime | None,
    known_at: datetime | None,
    as_of: datetime | None,
) -> str:
    """``memory.recall(query)`` of the facts; when it finds none, the facts of the
    same recall with the messages (the live facts that replaced what a matching
    message said), without the messages."""

    def read(include_episodes: bool) -> str:
        return memory.recall(
            query,
            k=k,
            include_history=include_history,
            include_episodes=include_episodes,
            valid_at=valid_at,
            known_at=known_at,
            as_of=as_of,
        )

    found = read(False)
    if found or not memory.holds_live_fact(valid_at=valid_at, known_at=known_at, as_of=as_of):
        return found  # no live fact at all: the messages could bring in none
    return facts_only(read(True))
