"""``ChronomemMemoryBlock``: chronomem inside LlamaIndex's own ``Memory``.

LlamaIndex's ``Memory`` keeps the recent chat itself and hands a block only
the messages that overflow its short-term queue (``_aput`` on flush), and
reads every block with ``_aget(messages, session_id=…, **kwargs)`` before
each model call. So this block:

- ``_aput``: stores the flushed messages' user and assistant text as episodes
  of the block's scope and extracts facts from them (the transcript itself
  stays in LlamaIndex's chat store);
- ``_aget``: returns ``Memory.recall`` for the last user message — live facts
  with their validity, framed as reference data; when the facts alone find
  none, the facts of the recall with the messages, without the messages: the
  live values that replaced what a matching message said ("where am I
  headed?" finds no fact, but finds "I plan to visit Japan.", superseded by
  "user plans visit Peru": ``recall.facts_recall``); ``valid_at``/``known_at``/
  ``as_of`` passed to ``Memory.get(...)`` reach it and read at that instant;
  when that message asks about the past ("where did I live before Berlin?",
  ``chronomem.render.asks_about_past``) the block adds the earlier values of the
  slots it shows, under their own header ("Earlier values (no longer true):",
  each with the dates it held and "since ended") — ``include_history=True``
  (the field, or ``Memory.get(include_history=...)``) always adds them, ``False``
  never;
- the served-read log: ``read_log=True`` turns the store's log on; each
  recall is tagged with the ``session_id`` LlamaIndex's ``Memory`` passes and
  the workflow run (``readtags``);
- ``atruncate``: drops whole fact lines, least relevant first, never a
  partial line (a priority of 0 means LlamaIndex never truncates it).

It keeps no declared semantics of its own: it is ``ChronomemMemory``'s recall
and extraction behind LlamaIndex's block protocol."""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.utils import get_tokenizer

from chronomem import InvalidType, Memory
from chronomem.extraction import Extractor
from chronomem.render import (
    CLOSE,
    HEADER_EPISODES,
    HEADER_HISTORY,
    HEADER_LIVE,
    OPEN,
    asks_about_past,
)
from chronomem_adapters.limits import MAX_K
from chronomem_adapters.readtags import switch_on, tagged
from chronomem_adapters.timeselect import pop_time

from . import messages as msgs
from ._handles import open_scope, scope_fields
from .readtags import llamaindex_tag
from .recall import facts_recall

_FRAME = frozenset({OPEN, CLOSE, HEADER_LIVE, HEADER_HISTORY, HEADER_EPISODES})


def drop_lines(block: str, tokens_to_drop: int, count: Any) -> str | None:
    """``block`` without its last fact lines, until about ``tokens_to_drop``
    tokens are gone; ``None`` when no fact line would remain."""
    lines = block.splitlines()
    dropped = 0
    while dropped < tokens_to_drop:
        idx = max((i for i, line in enumerate(lines) if line not in _FRAME), default=None)
        if idx is None:
            break
        dropped += len(count(lines[idx] + "\n"))
        del lines[idx]
    kept = [line for line in lines if line not in _FRAME]
    if not kept:
        return None
    out: list[str] = []
    for i, line in enumerate(lines):  # a header with nothing under it goes too
        nxt = lines[i + 1] if i + 1 < len(lines) else CLOSE
        if line in (HEADER_LIVE, HEADER_HISTORY, HEADER_EPISODES) and nxt in _FRAME:
            continue
        out.append(line)
    return "\n".join(out)


class ChronomemMemoryBlock(BaseMemoryBlock[str]):
    """Recall and extraction for LlamaIndex's ``Memory`` (see the module docstring)."""

    name: str = Field(default="chronomem", description="The block's name.")
    priority: int = Field(default=1, description="0 = never truncated.")
    url: str | None = Field(default=None)
    store_key: str | None = Field(default=None)
    tenant: str = Field(default="default")
    user: str | None = Field(default=None)
    agent: str | None = Field(default=None)
    session: str | None = Field(default=None)
    recall_k: int = Field(default=8, gt=0, le=MAX_K)
    include_history: bool | None = Field(
        default=None,
        description="Add the shown slots' earlier values: None = when the question "
        "asks about the past, True = always, False = never.",
    )
    extract: bool = Field(default=True)
    read_log: bool = Field(default=False, description="Log the store's served reads.")

    _memory: Memory = PrivateAttr()
    _extractor: Extractor | None = PrivateAttr(default=None)
    _tokenizer: Any = PrivateAttr(default=None)

    def __init__(
        self, memory: Memory | None = None, *, extractor: Extractor | None = None, **data: Any
    ) -> None:
        if memory is not None:
            data.update(scope_fields(memory))
        super().__init__(**data)
        if memory is None:
            memory = open_scope(
                self.url, self.tenant, self.user, self.agent, self.session, store_key=self.store_key
            )
        switch_on(memory, self.read_log)
        self._memory = memory
        self._extractor = extractor
        self._tokenizer = get_tokenizer()

    @property
    def memory(self) -> Memory:
        return self._memory

    def recall(
        self,
        messages: list[ChatMessage] | None = None,
        *,
        session_id: str | None = None,
        **kwargs: Any,
    ) -> str:
        sel = pop_time(kwargs)
        history = kwargs.pop("include_history", self.include_history)
        if history is not None and not isinstance(history, bool):
            raise InvalidType("include_history must be a bool or None")
        query = msgs.last_user_text(list(messages or []))
        if not query:
            return ""
        session = session_id or self._memory.scope.session
        with tagged(self._memory, lambda: llamaindex_tag(session)):
            return facts_recall(
                self._memory,
                query,
                k=self.recall_k,
                include_history=asks_about_past(query) if history is None else history,
                valid_at=sel.valid_at,
                known_at=sel.known_at,
                as_of=sel.as_of,
            )

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        return await asyncio.to_thread(self.recall, messages, **block_kwargs)

    def store(self, messages: list[ChatMessage]) -> None:
        checked = msgs.checked(messages)
        if not self.extract:
            return
        by_session: dict[str | None, list[ChatMessage]] = {}
        for m in checked:
            sid = m.additional_kwargs.get("session_id")
            by_session.setdefault(sid if isinstance(sid, str) else None, []).append(m)
        for sid, group in by_session.items():
            turns = msgs.to_turns(group, sid)
            if turns:
                self._memory.add(turns, extractor=self._extractor)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        await asyncio.to_thread(self.store, messages)

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        if not content:
            return None
        return drop_lines(content, tokens_to_truncate, self._tokenizer)
