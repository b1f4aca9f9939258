"""``ChronomemRetriever``: chronomem's hybrid search as a LlamaIndex ``BaseRetriever``.

One ``NodeWithScore`` per fact version (node id = the version id): the node's
text is one line with the validity interval in it ("Alice lives in Paris
(2025-09-01 → 2026-06-01, ended)"), so a model that sees only text still sees
when it held; metadata is JSON-safe (ISO-8601 strings), and the ids and
bookkeeping keys are in ``excluded_llm_metadata_keys`` /
``excluded_embed_metadata_keys`` so they never reach a model.

Time: ``valid_at``/``known_at``/``as_of``/``states`` at construction, and per
query as keywords of ``retrieve``/``aretrieve`` (a per-query instant replaces
the construction-time one as a whole). ``states`` selects fact states
(default live; ``["live", "ended"]`` for history, add ``"retracted"`` for the
audit view).

``read_log=True`` turns the store's served-read log on; each search is tagged
with the workflow run and the scope's session (``readtags``)."""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, QueryType, TextNode

from chronomem import InvalidInput, InvalidType, Memory, State
from chronomem.model import parse_states
from chronomem.reserved import without_internal
from chronomem_adapters.declaration import declare
from chronomem_adapters.documents import hit_document
from chronomem_adapters.limits import MAX_K
from chronomem_adapters.readtags import switch_on, tagged
from chronomem_adapters.semantics import VERSIONED, Semantic, TimeKeeping
from chronomem_adapters.timeselect import TimeSelection, select_time

from .readtags import llamaindex_tag

HIDDEN_KEYS = [
    "kind",
    "fact_id",
    "version_id",
    "episode_id",
    "source_episode_ids",
    "recorded_at",
    "superseded_at",
    "score",
    "explain",
]


@dataclass(frozen=True)
class _Call:
    time: TimeSelection
    states: frozenset[State] | None


_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "chronomem_retriever_call", default=None
)


def _states(states: Iterable[State | str] | State | str | None) -> frozenset[State] | None:
    return None if states is None else frozenset(parse_states(states))


@declare(
    VERSIONED | {Semantic.PROVENANCE, Semantic.TIME_IN_OUTPUT},
    as_of=TimeKeeping.PER_CALL,
    name="ChronomemRetriever",
    notes={
        Semantic.PROVENANCE: "metadata['source_episode_ids'] names the source episodes",
        Semantic.ERASURE: "a retriever only reads; erase through Memory or ChronomemMemory",
        Semantic.TRANSCRIPT: "a retriever returns facts, not a message log",
    },
)
class ChronomemRetriever(BaseRetriever):
    """Facts (and, with ``include_episodes``, messages) relevant to a query."""

    def __init__(
        self,
        memory: Memory,
        *,
        k: int = 8,
        valid_at: Any = None,
        known_at: Any = None,
        as_of: Any = None,
        states: Iterable[State | str] | State | str | None = None,
        include_episodes: bool = False,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        read_log: bool = False,
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidType(f"memory must be a chronomem Memory, not {type(memory).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise InvalidInput(f"k must be an int in 1..{MAX_K}, not {k!r}")
        self.memory = memory
        self.k = k
        self.time = select_time(valid_at, known_at, as_of)
        self.states = _states(states)
        self.include_episodes = bool(include_episodes)
        switch_on(memory, read_log)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    # -- per-query time ----------------------------------------------------------------
    def _call(
        self, valid_at: Any, known_at: Any, as_of: Any, states: Any
    ) -> contextvars.Token[_Call | None]:
        return _CALL.set(_Call(select_time(valid_at, known_at, as_of), _states(states)))

    def retrieve(
        self,
        str_or_query_bundle: QueryType,
        *,
        valid_at: Any = None,
        known_at: Any = None,
        as_of: Any = None,
        states: Iterable[State | str] | State | str | None = None,
    ) -> list[NodeWithScore]:
        token = self._call(valid_at, known_at, as_of, states)
        try:
            return super().retrieve(str_or_query_bundle)
        finally:
            _CALL.reset(token)

    async def aretrieve(
        self,
        str_or_query_bundle: QueryType,
        *,
        valid_at: Any = None,
        known_at: Any = None,
        as_of: Any = None,
        states: Iterable[State | str] | State | str | None = None,
    ) -> list[NodeWithScore]:
        token = self._call(valid_at, known_at, as_of, states)
        try:
            return await super().aretrieve(str_or_query_bundle)
        finally:
            _CALL.reset(token)

    # -- retrieval -----------------------------------------------------------------------
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        call = _CALL.get()
        time = self.time if call is None else self.time.override(call.time)
        states = self.states if call is None or call.states is None else call.states
        with tagged(self.memory, lambda: llamaindex_tag(self.memory.scope.session)):
            hits = self.memory.search(
                query_bundle.query_str,
                k=self.k,
                states=states,
                include_episodes=self.include_episodes,
                valid_at=time.valid_at,
                known_at=time.known_at,
                as_of=time.as_of,
            )
        return [self._node(hit) for hit in without_internal(hits)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._retrieve(query_bundle)

    @staticmethod
    def _node(hit: Any) -> NodeWithScore:
        doc = hit_document(hit)
        keys = [k for k in HIDDEN_KEYS if k in doc.metadata]
        node = TextNode(
            id_=doc.id,
            text=doc.text,
            metadata=doc.metadata,
            excluded_llm_metadata_keys=keys,
            excluded_embed_metadata_keys=keys,
        )
        return NodeWithScore(node=node, score=doc.score)
