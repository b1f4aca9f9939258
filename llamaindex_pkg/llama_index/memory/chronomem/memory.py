"""``ChronomemMemory``: the ``BaseMemory`` a LlamaIndex agent is given.

How an agent uses it (``FunctionAgent``/``AgentWorkflow``, see
``llama_index/core/agent/workflow/base_agent.py``): ``aset(chat_history)``
when a history is passed, ``aput(user_msg)``, ``aget()``, later
``aget(input=…)``, ``aput(response)`` and ``aput_messages(scratchpad)``.

- **Writes** (``put``/``put_messages``/``set``) store the messages at once as
  episodes of the session transcript (``chronomem_adapters.transcript``) and
  run extraction on the user and assistant text (on by default: the offline
  rule extractor, or the LlamaIndex ``LLM`` given as ``llm=``). Facts land in
  the memory's *durable* scope (the ``memory=`` you pass, e.g. a user), so the
  next session of that user recalls them; the transcript lands in
  ``session_id`` under it. ``set`` never overwrites: it appends only the
  messages the stored transcript does not already end with (compared with
  the transcript's tail only: the given messages and 32 more).
- **Reads** (``get``/``aget``) return one system message with
  ``Memory.recall`` of the input (or the last user message) — live facts with
  their validity, framed as reference data, never instructions; when no fact
  is found, the live values that replaced what a matching message said
  (``recall.facts_recall``) — followed by the most recent transcript messages
  that fit ``token_limit`` (whole oldest messages are dropped).
- **Time travel**: ``get(..., valid_at=, known_at=, as_of=)`` per call, and
  ``as_of(t)`` returns a read-only view (writes raise ``UnsupportedSemantics``).
- **Served-read log**: ``read_log=True`` turns the store's log on (a
  ``Memory(read_log=True)`` passed in is honoured); each recall is tagged
  with the ``session_id`` and the workflow run (``readtags``), so
  ``memory.memory.reads(run=handler.run_id)`` lists what an agent run was handed.
- **Forgetting**: ``reset`` hides the session transcript from current reads
  (the audit view keeps it); ``erase()`` physically deletes the session
  transcript, ``erase(subject=…)`` every fact about a subject.

URL, scope, session and settings are pydantic fields, so ``to_dict``/
``from_dict`` (and a workflow ``Context.to_dict``/``from_dict`` holding the
memory) round-trip; the open ``Memory`` is a private attribute (see
``_handles``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import islice
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.types import BaseMemory
from llama_index.core.utils import get_tokenizer

from chronomem import InvalidInput, InvalidType, Memory
from chronomem.extraction import Extractor
from chronomem_adapters.declaration import declare
from chronomem_adapters.limits import MAX_K
from chronomem_adapters.readtags import switch_on, tagged
from chronomem_adapters.semantics import (
    BITEMPORAL,
    Semantic,
    TimeKeeping,
    UnsupportedSemantics,
)
from chronomem_adapters.timeselect import TimeSelection, pop_time, select_time
from chronomem_adapters.transcript import PAGE, Transcript

from . import messages as msgs
from ._handles import open_scope, scope_fields
from .readtags import llamaindex_tag
from .recall import facts_recall

DEFAULT_TOKEN_LIMIT = 3000
TRANSCRIPT_KIND = "llamaindex"


SET_SLACK = 32  # ``set`` compares the given messages with this many more stored ones
TAIL_SLACK = 8  # ``get`` reads its last window's length and this many more in one page


def overlap(stored: Sequence[dict[str, Any]], given: Sequence[dict[str, Any]]) -> int:
    """How many leading ``given`` messages are already stored: ``len(given)`` when
    ``given`` occurs in ``stored`` as a run, else the longest prefix of ``given``
    that ends the stored transcript (an agent re-sending its whole history)."""
    n = len(given)
    if n == 0:
        return 0
    for start in range(len(stored) - n + 1):
        if list(stored[start : start + n]) == list(given):
            return n
    for k in range(min(len(stored), n), 0, -1):
        if list(stored[len(stored) - k :]) == list(given[:k]):
            return k
    return 0


@declare(
    BITEMPORAL | {Semantic.HISTORY, Semantic.ERASURE, Semantic.TRANSCRIPT},
    as_of=TimeKeeping.PER_CALL,
    name="ChronomemMemory",
    notes={
        Semantic.RETRACTION: "BaseMemory has no per-fact delete; reset() hides the transcript",
        Semantic.PROVENANCE: "the recall block carries no sources; use the retriever",
        Semantic.TIME_IN_OUTPUT: "recall shows validity to the day only",
    },
)
class ChronomemMemory(BaseMemory):
    """Bitemporal agent memory for LlamaIndex (see the module docstring)."""

    url: str | None = Field(default=None, description="The chronomem store's URL.")
    store_key: str | None = Field(
        default=None, description="In-process key of an in-memory store (no URL names it)."
    )
    tenant: str = Field(default="default", description="Durable scope: tenant.")
    user: str | None = Field(default=None, description="Durable scope: user.")
    agent: str | None = Field(default=None, description="Durable scope: agent.")
    session: str | None = Field(default=None, description="Durable scope: session.")
    session_id: str | None = Field(
        default=None, description="The conversation's session under the durable scope."
    )
    token_limit: int = Field(default=DEFAULT_TOKEN_LIMIT, gt=0)
    recall_k: int = Field(default=8, gt=0, le=MAX_K)
    extract: bool = Field(default=True, description="Extract facts from stored messages.")
    include_history: bool = Field(
        default=False, description="Recall also shows the ended values of recalled slots."
    )
    valid_at: str | None = Field(default=None, description="A view's valid instant (ISO).")
    known_at: str | None = Field(default=None, description="A view's belief instant (ISO).")
    as_of_instant: str | None = Field(default=None, description="A view's as_of (ISO).")
    read_log: bool = Field(
        default=False, description="Log the store's served reads (chronomem.readlog)."
    )

    _memory: Memory = PrivateAttr()
    _session_memory: Memory = PrivateAttr()
    _transcript: Transcript = PrivateAttr()
    _extractor: Extractor | None = PrivateAttr(default=None)
    _count: Any = PrivateAttr(default=None)
    _tail_read: int = PrivateAttr(default=PAGE)  # the first page ``_tail`` reads

    def __init__(
        self,
        memory: Memory | None = None,
        *,
        extractor: Extractor | None = None,
        **data: Any,
    ) -> None:
        if memory is not None:
            fields = scope_fields(memory)
            clash = [k for k in fields if data.get(k) not in (None, fields[k]) and k != "store_key"]
            if clash:
                raise InvalidInput(f"memory= and {clash} name different stores or scopes")
            data.update(fields)
        unknown = sorted(set(data) - set(type(self).model_fields))
        if unknown:
            raise InvalidInput(f"ChronomemMemory got unknown arguments {unknown}")
        super().__init__(**data)
        if self.session_id is not None and self.session not in (None, self.session_id):
            raise InvalidInput(
                f"memory= is already scoped to session {self.session!r}; give session_id= "
                "with a user- or agent-level memory (facts go there, the transcript under it)"
            )
        self._time()  # validate the view's instants now, not at the first read
        if memory is None:
            memory = open_scope(
                self.url,
                self.tenant,
                self.user,
                self.agent,
                self.session,
                store_key=self.store_key,
            )
        switch_on(memory, self.read_log)
        self._memory = memory
        self._session_memory = (
            memory.scoped(session=self.session_id) if self.session_id is not None else memory
        )
        self._transcript = Transcript(self._session_memory, TRANSCRIPT_KIND)
        self._extractor = extractor
        self._count = msgs.token_counter(get_tokenizer())

    @classmethod
    def class_name(cls) -> str:
        return "ChronomemMemory"

    @classmethod
    def from_defaults(
        cls,
        memory: Memory | None = None,
        *,
        url: str | None = None,
        session_id: str | None = None,
        llm: Any = None,
        extractor: Extractor | None = None,
        extract: bool = True,
        token_limit: int = DEFAULT_TOKEN_LIMIT,
        recall_k: int = 8,
        embed_model: Any = None,
        **kwargs: Any,
    ) -> ChronomemMemory:
        """``memory=``: an open, already scoped chronomem ``Memory`` (facts are
        written there); or ``url=`` (plus ``tenant``/``user``/``agent``/``session``
        keywords) to open one, with ``embed_model=`` a LlamaIndex ``BaseEmbedding``
        as its embedder. ``session_id``: the conversation under that scope.
        ``llm``: a LlamaIndex ``LLM`` that extracts facts (default: the offline
        rule extractor); ``extractor``: any chronomem extractor."""
        if kwargs.pop("chat_history", None):
            raise InvalidInput("pass the history to set() or the agent's chat_history")
        if llm is not None and extractor is not None:
            raise InvalidInput("pass llm= or extractor=, not both")
        if llm is not None:
            from .extraction import LlamaIndexExtractor

            extractor = LlamaIndexExtractor(llm)
        if memory is None:
            if url is None:
                raise InvalidInput("pass memory= (a chronomem Memory) or url=")
            scope = {k: kwargs.pop(k, None) for k in ("tenant", "user", "agent", "session")}
            embedder = None
            if embed_model is not None:
                from .embeddings import embedder_from

                embedder = embedder_from(embed_model)
            memory = Memory(url, embedder=embedder).scoped(
                tenant=scope["tenant"],
                user=scope["user"],
                agent=scope["agent"],
                session=scope["session"],
            )
        elif url is not None or embed_model is not None:
            raise InvalidInput("url= and embed_model= open a store; memory= is one already")
        return cls(
            memory,
            extractor=extractor,
            session_id=session_id,
            extract=extract,
            token_limit=token_limit,
            recall_k=recall_k,
            **kwargs,
        )

    # -- time ------------------------------------------------------------------------
    def _time(self) -> TimeSelection:
        return select_time(self.valid_at, self.known_at, self.as_of_instant)

    @property
    def is_view(self) -> bool:
        return not self._time().is_present

    def as_of(
        self,
        as_of: datetime | str | None = None,
        *,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
    ) -> ChronomemMemory:
        """A read-only view of this memory at a past instant (``as_of`` for both
        clocks, or ``valid_at``/``known_at``); an agent can read through it,
        writes raise ``UnsupportedSemantics``."""
        sel = select_time(valid_at, known_at, as_of)
        if sel.is_present:
            raise InvalidInput("as_of() needs an instant (as_of, valid_at or known_at)")
        iso = sel.to_json()
        view = self.model_copy(
            update={
                "valid_at": iso["valid_at"],
                "known_at": iso["known_at"],
                "as_of_instant": iso["as_of"],
            }
        )
        return view

    def _writable(self) -> None:
        if self.is_view:
            raise UnsupportedSemantics(
                Semantic.TRANSACTION_TIME,
                "ChronomemMemory view",
                "a view at a past instant is read-only: the past is not rewritten",
            )

    # -- reading ---------------------------------------------------------------------
    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        """A system message recalling what is relevant to ``input`` (default: the
        last user message), then the recent transcript within ``token_limit``.
        ``valid_at``/``known_at``/``as_of`` read at a past instant;
        ``include_history=True`` adds the ended values of the recalled slots under
        their own header ("Earlier values (no longer true)");
        ``initial_token_count`` is taken from the budget (as ``ChatMemoryBuffer``);
        any other keyword is refused, never ignored."""
        sel = self._time().override(pop_time(kwargs))
        initial = kwargs.pop("initial_token_count", 0)  # as ChatMemoryBuffer.get takes it
        with_history = kwargs.pop("include_history", self.include_history)
        if not isinstance(with_history, bool):
            raise InvalidType("include_history must be a bool")
        if kwargs:
            raise InvalidInput(f"get() got unknown keywords {sorted(kwargs)}")
        if isinstance(initial, bool) or not isinstance(initial, int) or initial < 0:
            raise InvalidInput("initial_token_count must be a non-negative int")
        if input is not None and not isinstance(input, str):
            raise InvalidType(f"input must be a str, not {type(input).__name__}")
        asked = input.strip() if input and input.strip() else None
        budget = self.token_limit - initial
        history, costs = self._tail(sel, max(budget, 0), need_user=asked is None)
        query = asked or msgs.last_user_text(history)
        out: list[ChatMessage] = []
        if query:
            with tagged(self._session_memory, lambda: llamaindex_tag(self._session())):
                block = facts_recall(
                    self._session_memory,
                    query,
                    k=self.recall_k,
                    include_history=with_history,
                    valid_at=sel.valid_at,
                    known_at=sel.known_at,
                    as_of=sel.as_of,
                )
            if block:
                system = ChatMessage(role="system", content=block)
                out.append(system)
                budget -= self._count(system)
        return out + msgs.fit(history, max(budget, 0), lambda m: costs[id(m)])

    def _session(self) -> str | None:
        return self.session_id or self._memory.scope.session

    def get_all(self) -> list[ChatMessage]:
        """The session transcript, exactly as stored, in order."""
        return self._messages(self._time())

    def _tail(
        self, sel: TimeSelection, tokens: int, *, need_user: bool
    ) -> tuple[list[ChatMessage], dict[int, int]]:
        """The newest transcript messages, in order, until they hold more than
        ``tokens`` (so ``fit`` finds where its window ends), a user message
        before the newest one (where ``fit`` may open the turn) and, with
        ``need_user``, a user message with text (the recall query): a turn reads
        the transcript's tail, never the whole session. With them, each
        message's token count by ``id(message)`` (``fit`` counts nothing twice)."""
        tail: list[ChatMessage] = []
        costs: dict[int, int] = {}
        used = 0
        query_seen = not need_user
        opener_seen = False
        page = self._tail_read
        for m in self._transcript.recent(known_at=sel.as_of or sel.known_at, page=page):
            message = msgs.from_transcript(m)
            opener_seen = opener_seen or (bool(tail) and msgs.role_of(message) == "user")
            tail.append(message)
            cost = costs[id(message)] = self._count(message)
            used += cost
            query_seen = query_seen or msgs.last_user_text([message]) is not None
            if used > tokens and query_seen and opener_seen:
                break
        # the next turn's window is about this one's: read it in one page, with slack,
        # in whole ``PAGE``s (a window a few tokens longer or shorter reads as many rows)
        self._tail_read = -(-(len(tail) + TAIL_SLACK) // PAGE) * PAGE
        tail.reverse()
        return tail, costs

    def _messages(self, sel: TimeSelection) -> list[ChatMessage]:
        known = sel.as_of or sel.known_at
        return [msgs.from_transcript(m) for m in self._transcript.messages(known_at=known)]

    def history(self, *, known_at: datetime | str | None = None) -> list[ChatMessage]:
        """The audit view: every message of the session, cleared ones included."""
        at = select_time(known_at=known_at).known_at
        return [
            msgs.from_transcript(m)
            for m in self._transcript.messages(known_at=at, include_cleared=True)
        ]

    # -- writing ---------------------------------------------------------------------
    def put(self, message: ChatMessage) -> None:
        self.put_messages([msgs.checked_one(message)])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        """Store the messages at once and extract facts from them."""
        self._writable()
        self._store(msgs.checked(messages))

    def set(self, messages: list[ChatMessage]) -> None:
        """Append the messages the transcript does not already hold. Agents call
        this with a whole history: nothing is duplicated, nothing deleted.

        Only the transcript's tail is compared (its newest ``len(messages) +
        SET_SLACK`` messages, read newest first): a re-sent history is
        recognised where it overlaps the end of the transcript or lies inside
        that window, so ``set`` costs the length of what it is given, never the
        session's."""
        self._writable()
        given = msgs.checked(messages)
        if not given:
            return
        newest = islice(self._transcript.recent(), len(given) + SET_SLACK)
        stored = [m.payload for m in newest][::-1]
        payloads = [msgs.payload_of(m) for m in given]
        self._store(given[overlap(stored, payloads) :])

    def _store(self, messages: list[ChatMessage]) -> None:
        if not messages:
            return
        self._transcript.append([msgs.to_transcript(m) for m in messages])
        if self.extract:
            turns = msgs.to_turns(messages, self.session_id)
            if turns:
                self._memory.add(turns, extractor=self._extractor)

    def reset(self) -> None:
        """Hide the session transcript from current reads (``history()`` keeps it).
        Facts already learnt stay: forget them with ``erase(subject=…)``."""
        self._writable()
        self._transcript.clear()

    def erase(self, subject: str | None = None) -> dict[str, int]:
        """Physically delete: the session transcript (``subject=None``; the whole
        scope when the memory has no ``session_id``), or every fact about
        ``subject`` in the durable scope with its evidence. Irreversible."""
        self._writable()
        if subject is None:
            return self._transcript.erase()
        return self._memory.erase_subject(subject)

    @property
    def memory(self) -> Memory:
        """The chronomem ``Memory`` facts are written to."""
        return self._memory
