"""``ChronomemRetriever``: a LangChain retriever over chronomem's bitemporal search."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, ValidationError, field_validator, model_validator

from chronomem import ChronomemError, InvalidType, Memory
from chronomem.reserved import without_internal
from chronomem_adapters.declaration import declare
from chronomem_adapters.documents import hit_document
from chronomem_adapters.readtags import switch_on, tagged
from chronomem_adapters.semantics import VERSIONED, Semantic, TimeKeeping
from chronomem_adapters.timeselect import parse_instant, select_time

from .options import ReadOptions, check_bool, check_k, check_score, check_states
from .readtags import manager_tag


@declare(
    VERSIONED | {Semantic.PROVENANCE, Semantic.TIME_IN_OUTPUT},
    as_of=TimeKeeping.PER_CALL,
    notes={
        Semantic.ERASURE: "a retriever only reads; erase through Memory.erase or the forget tool",
        Semantic.TRANSCRIPT: "use ChronomemChatMessageHistory or ChronomemMiddleware",
        Semantic.PROVENANCE: "metadata['source_episode_ids'] names the source episodes",
    },
)
class ChronomemRetriever(BaseRetriever):
    """Facts (and optionally episodes) relevant to a query, at any instant.

    Each ``Document`` is one fact version: ``id`` is the version id,
    ``page_content`` one line a model can read with the validity interval and,
    unless live, the state (``"ada lives in Paris (2025-09-01 → 2026-06-01,
    ended)"``: ``create_retriever_tool`` shows a model nothing else), and
    ``metadata`` JSON-safe (ISO-8601 strings): subject, predicate, object, both
    clocks, state, fact id, source episode ids, score and a short explain.
    With ``include_episodes`` matching raw messages come too, as
    ``[2026-01-02] user: …`` documents whose ``id`` is the episode id
    (``metadata["kind"]`` says which is which).

    Fields (each also a per-call keyword of ``invoke``/``ainvoke``/``batch``/
    ``abatch``, a ``.bind(...)`` argument and a ``configurable_fields`` target):

    - ``memory``: a chronomem ``Memory``, already scoped by the caller;
    - ``k`` (default 4, like LangChain's vector-store retrievers);
    - ``valid_at`` / ``known_at`` / ``as_of``: the instant to read at (aware
      datetimes or ISO-8601 strings; ``as_of`` is both clocks at once). A call
      that names any instant replaces the retriever's instant as a whole;
    - ``states``: which states to return (default live only; ``["live",
      "ended"]`` adds history, ``"retracted"`` the audit view);
    - ``include_episodes``: also return matching raw messages;
    - ``min_score``: drop weaker hits;
    - ``read_log``: ``True`` turns the store's served-read log on (a
      ``Memory(read_log=True)`` is honoured either way); each read is tagged
      with the call's LangChain run (``langchain_chronomem.readtags``), so
      ``memory.reads(run=R)`` lists what a run was handed.

    An unknown keyword is a ``TypeError``; a bad value is a chronomem
    ``InvalidInput``/``InvalidType`` before anything is read."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    memory: Memory
    k: int = 4
    valid_at: datetime | None = None
    known_at: datetime | None = None
    as_of: datetime | None = None
    states: tuple[str, ...] | None = None
    include_episodes: bool = False
    min_score: float = 0.0
    read_log: bool = False

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _chronomem_error(exc) from None

    @model_validator(mode="before")
    @classmethod
    def _needs_memory(cls, data: Any) -> Any:
        if isinstance(data, dict) and not isinstance(data.get("memory"), Memory):
            got = type(data.get("memory")).__name__ if "memory" in data else "nothing"
            raise InvalidType(f"ChronomemRetriever needs memory= a chronomem Memory, got {got}")
        return data

    @field_validator("valid_at", "known_at", "as_of", mode="before")
    @classmethod
    def _instant(cls, value: object, info: Any) -> datetime | None:
        return parse_instant(value, info.field_name)

    @field_validator("k", mode="before")
    @classmethod
    def _k(cls, value: object) -> int:
        return check_k(value)

    @field_validator("states", mode="before")
    @classmethod
    def _states(cls, value: object) -> tuple[str, ...] | None:
        return check_states(value)

    @field_validator("include_episodes", mode="before")
    @classmethod
    def _episodes(cls, value: object) -> bool:
        return check_bool(value, "include_episodes")

    @field_validator("min_score", mode="before")
    @classmethod
    def _score(cls, value: object) -> float:
        return check_score(value)

    @field_validator("read_log", mode="before")
    @classmethod
    def _read_log(cls, value: object) -> bool:
        return check_bool(value, "read_log")

    @model_validator(mode="after")
    def _one_instant(self) -> ChronomemRetriever:
        select_time(self.valid_at, self.known_at, self.as_of)  # as_of excludes the others
        switch_on(self.memory, self.read_log)
        return self

    # -- reading --------------------------------------------------------------------------
    def read_options(self, **call: Any) -> ReadOptions:
        """The options a call with these keywords reads with (validated)."""
        base = ReadOptions(
            k=self.k,
            time=select_time(self.valid_at, self.known_at, self.as_of),
            states=self.states,
            include_episodes=self.include_episodes,
            min_score=self.min_score,
        )
        return base.override(type(self).__name__, call)

    def _search(self, query: str, options: ReadOptions, manager: Any = None) -> list[Document]:
        with tagged(self.memory, lambda: manager_tag(manager)):
            hits = self.memory.search(query, **options.search_kwargs())
        docs = []
        for hit in without_internal(hits):  # an adapter's @-rows are never documents
            d = hit_document(hit)
            docs.append(Document(id=d.id, page_content=d.text, metadata=d.metadata))
        return docs

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return self._search(query, self.read_options(**kwargs), run_manager)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        options = self.read_options(**kwargs)  # refuse bad keywords before any thread hop
        result: list[Document] = await run_in_executor(
            None, self._search, query, options, run_manager
        )
        return result


def _chronomem_error(exc: ValidationError) -> Exception:
    """The chronomem error a field validator raised (pydantic wraps ``ValueError``
    subclasses such as ``InvalidInput``), else pydantic's own error."""
    for err in exc.errors():
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, ChronomemError):
            return cause
    return exc
