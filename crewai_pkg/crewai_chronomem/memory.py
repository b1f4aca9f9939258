"""``ChronomemMemory``: CrewAI's unified ``Memory`` whose work chronomem does.

CrewAI's ``Memory`` asks an LLM to analyse every save and to plan deep recalls,
and hands its storage backend only a query *embedding*. This subclass keeps
CrewAI's public API (``remember``/``remember_many``/``recall``/``forget``/
``update``/``reset``/``extract_memories`` and the scope/list/info helpers) and
works at the text level instead:

- ``remember`` stores the text as a chronomem episode (with its CrewAI scope,
  categories, importance, source and privacy in the episode's metadata) and
  extracts facts from it (the offline rule extractor by default, any chronomem
  extractor, or the crew's own LLM with ``extractor="llm"``); facts go through
  chronomem's state machine, so "I moved to Berlin" ends "lives in Paris".
- ``recall`` is chronomem's hybrid temporal search; each ``MemoryMatch`` carries
  a fact with its validity interval in the text, or a dated episode. Reads are
  "now" by default; ``recall(..., as_of=…)`` (or ``valid_at``/``known_at``) and
  ``memory.as_of(t)`` read the past. No LLM is called to save or recall.
- ``forget`` retracts (the audit view keeps what was forgotten), ``update`` writes
  a new version, ``reset`` hides a scope from current reads; ``erase`` and
  ``purge`` are the separate, explicit, irreversible deletions.

CrewAI scope paths (``/crew/x/agent/y``) are kept on each episode and matched
path-aware (``/a`` never matches ``/ab``). The chronomem store itself is the
handle you pass (``ChronomemMemory(memory=mem.scoped(user="dana"))``): users and
tenants are chronomem scopes, isolated from each other."""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from crewai.memory.types import MemoryConfig, MemoryMatch, MemoryRecord, ScopeInfo
from crewai.memory.unified_memory import Memory, _non_streaming_analysis_llm
from pydantic import PrivateAttr

from chronomem import (
    EndOp,
    Episode,
    Fact,
    InvalidInput,
    InvalidType,
    NotFound,
    State,
)
from chronomem import (
    Memory as Store,
)
from chronomem.errors import ScopeError
from chronomem.extraction import default_extractor
from chronomem.identity import fold
from chronomem.ops import WriteOp
from chronomem.reserved import without_internal
from chronomem.timeutil import to_us
from chronomem_adapters.declaration import declare
from chronomem_adapters.limits import MAX_K
from chronomem_adapters.readtags import switch_on, tagged
from chronomem_adapters.semantics import VERSIONED, Semantic, TimeKeeping
from chronomem_adapters.timeselect import TimeSelection, select_time

from . import paths, scopes
from .errors import ReadOnlyView
from .handle import Handle
from .location import default_path, path_for_storage
from .readtags import crewai_tag
from .records import CREW_KEY, crew_info, episode_record, fact_record, naive_utc, unit_score

# Marker facts (not indexed for search) that make forgets and resets bitemporal.
MARK = "crewai-memory"
FORGOTTEN = "crewai_forgotten"  # object: an episode id
RESET = "crewai_reset"  # metadata: {"path": ...}
MAX_LIMIT = MAX_K  # chronomem_adapters.limits: one bound for every adapter read
log = logging.getLogger("crewai_chronomem")
MAX_TEXT = 100_000
FINAL = "Final Answer:"  # CrewAI's ReAct marker, left in an agent's saved output


def _limit(value: object, name: str = "limit") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidType(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise InvalidInput(f"{name} must not be negative")
    return min(value, MAX_LIMIT)


def _text(value: object, name: str = "content") -> str:
    if not isinstance(value, str):
        raise InvalidType(f"{name} must be a str, not {type(value).__name__}")
    if not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    if len(value) > MAX_TEXT:
        raise InvalidInput(f"{name} is longer than {MAX_TEXT} characters")
    return value


def _names(value: object, name: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InvalidType(f"{name} must be a list of str")
    out = list(value)
    if not all(isinstance(v, str) for v in out):
        raise InvalidType(f"{name} must be a list of str")
    return out


def _json_meta(value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidType(f"metadata must be a dict, not {type(value).__name__}")
    try:
        return dict(json.loads(json.dumps(value, allow_nan=False)))
    except (TypeError, ValueError) as exc:
        raise InvalidType(f"metadata must be JSON-serialisable: {exc}") from None


def _distinct(texts: list[str]) -> list[str]:
    """The batch without near-identical repeats (CrewAI's intra-batch dedup drops
    an item whose embedding is >= 0.98 cosine to an earlier one; here: texts
    equal once folded (case, Unicode form, punctuation and spacing), first kept)."""
    seen: set[str] = set()
    out: list[str] = []
    for t in texts:
        key = fold(t) or t
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


class _Reader:
    """One read at one time selection, with the episode lookups it needs cached."""

    def __init__(self, store: Store, sel: TimeSelection):
        self.store = store
        self.sel = sel
        self.known = sel.as_of or sel.known_at  # None: as currently believed
        self._eps: dict[str, Episode | None] = {}
        # which episodes were forgotten: those asked so far, or (``_all``) every one
        self._forgotten: dict[str, bool] = {}
        self._all = False
        self._resets: list[tuple[str, datetime]] | None = None

    def episode(self, episode_id: str) -> Episode | None:
        if episode_id not in self._eps:
            try:
                self._eps[episode_id] = self.store.get_episode(episode_id)
            except NotFound:
                self._eps[episode_id] = None
        return self._eps[episode_id]

    def prime(self) -> list[Episode]:
        """Every episode this read may see, listed in one statement and cached, so
        the facts' sources are found without a lookup per fact (no N+1)."""
        eps = self.store.episodes(known_at=self.known)
        for e in eps:
            self._eps[e.id] = e
        return eps

    def sources(self, fact: Fact) -> list[Episode]:
        return [e for i in fact.source_episode_ids if (e := self.episode(i)) is not None]

    def _markers(self, predicate: str) -> list[Fact]:
        return self.store.facts(
            subject=MARK,
            predicate=predicate,
            exact=True,
            valid_at=self.sel.valid_at,
            known_at=self.sel.known_at,
            as_of=self.sel.as_of,
        )

    def note(self, episode_ids: Iterable[str]) -> None:
        """Look up which of these episodes were forgotten, in one statement: their
        forget markers by slot (``Memory.facts_with_values``), not every marker."""
        asked = [i for i in dict.fromkeys(episode_ids) if i not in self._forgotten]
        if not asked or self._all:
            return
        gone = {
            f.object
            for f in self.store.facts_with_values(
                MARK,
                FORGOTTEN,
                asked,
                valid_at=self.sel.valid_at,
                known_at=self.sel.known_at,
                as_of=self.sel.as_of,
            )
        }
        self._forgotten.update((i, i in gone) for i in asked)

    def note_all(self) -> None:
        """Every forget marker in one statement: for a listing of every episode."""
        if not self._all:
            gone = {f.object for f in self._markers(FORGOTTEN)}
            self._forgotten = dict.fromkeys(gone, True)
            self._all = True

    def _was_forgotten(self, episode_id: str) -> bool:
        if not self._all:
            self.note([episode_id])
        return self._forgotten.get(episode_id, False)

    def visible(self, episode: Episode) -> bool:
        if self.known is not None and episode.recorded_at > self.known:
            return False
        if self._was_forgotten(episode.id):
            return False
        if self._resets is None:
            self._resets = [
                (paths.normalize(f.metadata.get("path")), f.valid_from)
                for f in self._markers(RESET)
            ]
        path = paths.normalize(crew_info(episode).get("scope"))
        return not any(
            paths.within(path, p) and episode.recorded_at <= at for p, at in self._resets
        )

    def fact_record(self, fact: Fact) -> MemoryRecord:
        return fact_record(fact, self.sources(fact))


def _is_marker(fact: Fact) -> bool:
    return fact.predicate.startswith("crewai_") and fact.subject == MARK


@declare(
    VERSIONED | {Semantic.ERASURE, Semantic.PROVENANCE, Semantic.TIME_IN_OUTPUT},
    as_of=TimeKeeping.PER_CALL,
    name="CrewAI memory",
    notes={
        Semantic.TRANSCRIPT: "remembered texts are episodes, but CrewAI's Memory API has no "
        "ordered transcript read",
    },
)
class ChronomemMemory(Memory):
    """CrewAI ``Memory`` backed by chronomem (see the module docstring).

    ``ChronomemMemory(memory=chronomem.Memory(...))`` or ``ChronomemMemory(url=...)``;
    with neither, the memory persists in CrewAI's storage folder
    (``crewai_chronomem.location``: ``$CREWAI_STORAGE_DIR`` or CrewAI's
    ``db_storage_path()``, file ``chronomem.db``; ``memory.location`` says where,
    and it is logged), or in the folder a ``storage="path"`` names (as CrewAI's own
    ``Memory`` does); an in-memory store is ``memory=chronomem.Memory()``.
    ``extractor``: ``None`` (the offline rule extractor), ``"llm"`` (the ``llm``
    field's CrewAI LLM, through ``CrewAIExtractor``) or any chronomem extractor.
    ``read_log=True`` turns the store's served-read log on (a
    ``Memory(read_log=True)`` is honoured either way); each recall is tagged with
    the kickoff's execution id and the task's id (``crewai_chronomem.readtags``)."""

    _handle: Handle = PrivateAttr()
    _extractor: Any = PrivateAttr(default=None)
    _time: TimeSelection = PrivateAttr(default_factory=TimeSelection)

    def __init__(
        self,
        memory: Store | None = None,
        *,
        url: str | None = None,
        extractor: Any = None,
        read_log: bool = False,
        **data: Any,
    ):
        if memory is not None and url is not None:
            raise InvalidInput("pass memory= or url=, not both")
        if memory is not None and not isinstance(memory, Store):
            raise InvalidType(f"memory must be a chronomem.Memory, not {type(memory).__name__}")
        if url is not None and not isinstance(url, str):
            raise InvalidType("url must be a str")
        if not isinstance(read_log, bool):
            raise InvalidType(f"read_log must be a bool, not {type(read_log).__name__}")
        if memory is None and url is None:
            # storage="some/folder" keeps the memory there, as CrewAI's Memory does;
            # else persist where CrewAI keeps its memory, never silently in RAM
            url = path_for_storage(data.get("storage")) or str(default_path())
            log.info("chronomem: ChronomemMemory() keeps this crew's memory in %s", url)
        store = memory if memory is not None else Store(url)
        switch_on(store, read_log)
        data.setdefault("storage", f"chronomem:{store.url}")
        super().__init__(**data)
        self._handle = Handle(store, owned=memory is None)
        self._extractor = extractor
        if (
            extractor is not None
            and extractor != "llm"
            and not callable(getattr(extractor, "extract", None))
        ):
            raise InvalidType('extractor must be None, "llm" or a chronomem extractor')

    def model_post_init(self, __context: Any) -> None:
        # CrewAI's own post-init would build a LanceDB store for the ``storage`` string;
        # this memory's storage is its chronomem store, seen through ``_RecordsView``.
        self._config = MemoryConfig(
            recency_weight=self.recency_weight,
            semantic_weight=self.semantic_weight,
            importance_weight=self.importance_weight,
            recency_half_life_days=self.recency_half_life_days,
            consolidation_threshold=self.consolidation_threshold,
            consolidation_limit=self.consolidation_limit,
            default_importance=self.default_importance,
            confidence_threshold_high=self.confidence_threshold_high,
            confidence_threshold_low=self.confidence_threshold_low,
            complex_query_threshold=self.complex_query_threshold,
            exploration_budget=self.exploration_budget,
            query_analysis_threshold=self.query_analysis_threshold,
        )
        self._llm_instance = (
            None if isinstance(self.llm, str) else _non_streaming_analysis_llm(self.llm)
        )
        self._embedder_instance = None
        self._storage = _RecordsView(self)  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> ChronomemMemory:
        """A copy working on the SAME chronomem store (the handle is shared, never
        copied), with its own save pool and locks."""
        memo = {} if memo is None else memo
        new = self.model_copy()
        memo[id(self)] = new
        object.__setattr__(new, "__dict__", copy.deepcopy(self.__dict__, memo))
        private = dict(self.__pydantic_private__ or {})
        for name in ("_save_pool", "_pending_saves", "_pending_lock", "_reset_lock"):
            private[name] = self.__private_attributes__[name].get_default()
        private["_config"] = self._config.model_copy()
        object.__setattr__(new, "__pydantic_private__", private)
        new._storage = _RecordsView(new)  # type: ignore[assignment]
        return new

    # -- the store ---------------------------------------------------------------------
    @property
    def chronomem(self) -> Store:
        """The chronomem store this memory works on."""
        return self._handle.memory

    @property
    def location(self) -> str:
        """Where this memory's facts live: the store's URL (a file path for SQLite)."""
        return self._handle.memory.url

    def as_of(
        self, t: object = None, *, valid_at: object = None, known_at: object = None
    ) -> ChronomemMemory:
        """A read-only view reading at a past instant (``as_of`` = both clocks, or
        ``valid_at``/``known_at``). Give it to a crew to replay what it knew then:
        it is ``read_only`` (CrewAI saves nothing to it) and every write raises
        ``ReadOnlyView``. Per-call time arguments to ``recall`` override it."""
        sel = select_time(valid_at, known_at, t)
        if sel.is_present:
            raise InvalidInput("as_of() needs an instant (as_of, valid_at or known_at)")
        view = self.model_copy(update={"read_only": True})
        view._time = sel
        view._storage = _RecordsView(view)  # type: ignore[assignment]
        return view

    @property
    def is_view(self) -> bool:
        return not self._time.is_present

    def _writable(self, what: str) -> None:
        if self.is_view:
            raise ReadOnlyView(f"{what} on an as_of view: write through the live memory")

    def _extractor_obj(self) -> Any:
        if self._extractor is None:
            return default_extractor()
        if self._extractor == "llm":
            from .extractor import CrewAIExtractor

            self._extractor = CrewAIExtractor(self._llm)
        return self._extractor

    def close(self) -> None:
        """CrewAI's ``close``: drain (saves here are synchronous) and release the
        store's connections. Reads and writes still work afterwards, as with
        CrewAI's own backends; a store passed in as ``memory=`` is the caller's."""
        self._save_pool.shutdown(wait=True)
        self._handle.close()

    # -- writing -----------------------------------------------------------------------
    def _ingest(
        self,
        contents: list[str],
        scope: str | None,
        categories: list[str] | None,
        metadata: dict[str, Any] | None,
        importance: float | None,
        source: str | None,
        private: bool,
        agent_role: str | None,
        root_scope: str | None,
    ) -> list[MemoryRecord]:
        self._writable("remember")
        texts = _distinct([_text(c) for c in contents])
        cats = _names(categories, "categories")
        meta = _json_meta(metadata)
        if importance is not None and (
            isinstance(importance, bool)
            or not isinstance(importance, int | float)
            or not 0 <= importance <= 1
        ):
            raise InvalidInput("importance must be a number in [0, 1]")
        if source is not None and not isinstance(source, str):
            raise InvalidType("source must be a str")
        if agent_role is not None and not isinstance(agent_role, str):
            raise InvalidType("agent_role must be a str")
        root = root_scope if root_scope is not None else self.root_scope
        path = paths.join(root, scope)
        info: dict[str, Any] = {"scope": path, "private": bool(private)}
        if cats:
            info["categories"] = cats
        if meta:
            info["metadata"] = meta
        info["importance"] = float(
            importance if importance is not None else self.default_importance
        )
        if source is not None:
            info["source"] = source
        if agent_role:
            info["agent_role"] = agent_role
        # An agent's own output is the agent speaking, not the user: the default
        # extractors read facts from user turns only.
        role = "assistant" if agent_role else "user"
        speaker = agent_role or source
        messages = [
            {
                "role": role,
                "content": t,
                **({"name": speaker} if speaker and speaker.strip() else {}),
                "metadata": {CREW_KEY: info},
            }
            for t in texts
        ]
        with self._handle.lock:
            receipt = self.chronomem.add(messages, extractor=self._extractor_obj())
            eps = [self.chronomem.get_episode(i) for i in receipt.episode_ids]
        return [episode_record(e) for e in eps]

    def remember(
        self,
        content: str,
        scope: str | None = None,
        categories: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
        source: str | None = None,
        private: bool = False,
        agent_role: str | None = None,
        root_scope: str | None = None,
    ) -> MemoryRecord | None:
        """Store ``content`` (an episode) and the facts read from it; returns the
        episode's record. No LLM is called unless ``extractor="llm"``."""
        if self.read_only and not self.is_view:
            return None
        records = self._ingest(
            [content], scope, categories, metadata, importance, source, private, agent_role,
            root_scope,
        )  # fmt: skip
        return records[0] if records else None

    def remember_many(
        self,
        contents: list[str],
        scope: str | None = None,
        categories: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
        source: str | None = None,
        private: bool = False,
        agent_role: str | None = None,
        root_scope: str | None = None,
    ) -> list[MemoryRecord]:
        """Store many texts in one transaction (synchronously: they are readable as
        soon as this returns, and the records are returned)."""
        if (not contents or self.read_only) and not self.is_view:
            return []
        items = _names(contents, "contents") or []
        return self._ingest(
            items, scope, categories, metadata, importance, source, private, agent_role,
            root_scope,
        )  # fmt: skip

    def extract_memories(self, content: str) -> list[str]:
        """The statements worth remembering in a raw blob, without an LLM.

        For CrewAI's agent saves (``Task: …\\nAgent: …\\nExpected result: …\\nResult:
        …``) that is the result; otherwise the non-empty lines. Facts are read
        from them later, by ``remember``'s extractor."""
        if isinstance(content, str) and not content.strip():
            return []  # as CrewAI's: nothing to extract from an empty blob
        text = _text(content)
        if "\nResult:" in text:
            text = text.split("\nResult:", 1)[1]
        elif text.startswith("Result:"):
            text = text[len("Result:") :]
        lines = [line.strip() for line in text.splitlines()]
        lines = [line[len(FINAL) :].strip() if line.startswith(FINAL) else line for line in lines]
        return [line for line in lines if line][:50]

    def update(
        self,
        record_id: str,
        content: str | None = None,
        scope: str | None = None,
        categories: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
    ) -> MemoryRecord:
        """A new version: for a fact, ``content`` is its new value (the old version
        stays in history); for an episode, the new text is remembered and the old
        episode is forgotten (retracted, kept in the audit view)."""
        self._writable("update")
        existing = self._storage.get_record(record_id)
        if existing is None:
            raise ValueError(f"Record not found: {record_id}")
        if self.read_only:
            return existing
        if existing.metadata.get("kind") == "fact":
            return self._update_fact(existing, content)
        old = crew_info(self.chronomem.get_episode(record_id))
        new = self._ingest(
            [content if content is not None else str(existing.metadata.get("text", ""))],
            scope if scope is not None else old.get("scope"),
            categories if categories is not None else old.get("categories"),
            metadata if metadata is not None else old.get("metadata"),
            importance if importance is not None else old.get("importance"),
            old.get("source"),
            bool(old.get("private", False)),
            old.get("agent_role"),
            "/",
        )
        self._storage.delete(record_ids=[record_id])
        return new[0]

    def _update_fact(self, existing: MemoryRecord, content: str | None) -> MemoryRecord:
        """End the fact's current value and assert the new one (same subject and
        predicate, same sources) in one transaction: the old value stays in history."""
        if content is None or content == existing.metadata.get("object"):
            return existing
        value = _text(content)
        meta = existing.metadata
        with self._handle.lock:
            store = self.chronomem
            now = store.now()
            ops: list[WriteOp] = [
                EndOp(meta["subject"], meta["predicate"], meta["object"], to_us(now, "now")),
                store.assertion(
                    meta["subject"], meta["predicate"], value, valid_from=now,
                    source=list(meta.get("source_episode_ids") or []), extractor="crewai-update",
                ),
            ]  # fmt: skip
            receipt = store.apply(ops)
            # the new value's live version, looked up by the write's fact ids (the
            # ended fact's and the new one's, in no set order): not a listing of the store
            found = [
                v
                for fid in reversed(receipt.fact_ids)
                for v in store.get(fid)
                if v.state is State.LIVE and v.object == value
            ]
            if not found:
                raise NotFound(f"the updated fact {receipt.fact_ids!r} is not current")
            return _Reader(store, TimeSelection()).fact_record(found[0])

    def erase(self, record_ids: list[str]) -> int:
        """Irreversibly delete facts (every version, and source episodes no other
        fact cites). Not undoable, not visible in any past read."""
        self._writable("erase")
        ids = _names(record_ids, "record_ids") or []
        n = 0
        with self._handle.lock:
            for rid in ids:
                self.chronomem.erase(rid)
                n += 1
        return n

    def purge(self) -> dict[str, int]:
        """Irreversibly delete everything in this memory's chronomem scope."""
        self._writable("purge")
        with self._handle.lock:
            return self.chronomem.purge()

    # -- reading -----------------------------------------------------------------------
    def recall(
        self,
        query: str,
        scope: str | None = None,
        categories: list[str] | None = None,
        limit: int = 10,
        depth: Literal["shallow", "deep"] = "deep",
        source: str | None = None,
        include_private: bool = False,
        *,
        as_of: object = None,
        valid_at: object = None,
        known_at: object = None,
        include_history: bool = False,
        include_retracted: bool = False,
    ) -> list[MemoryMatch]:
        """chronomem's hybrid search (``depth`` is accepted and ignored: no LLM plans
        the recall). Facts carry their validity interval in the text and metadata;
        ``include_history`` adds ended values, ``include_retracted`` forgotten ones
        (the audit view). ``as_of``/``valid_at``/``known_at`` read the past."""
        if not isinstance(query, str):
            raise InvalidType(f"query must be a str, not {type(query).__name__}")
        n = _limit(limit)
        if isinstance(limit, int) and limit > MAX_K:
            raise InvalidInput(f"limit must be <= {MAX_K} (chronomem_adapters.limits), not {limit}")
        cats = _names(categories, "categories")
        sel = self._time.override(select_time(valid_at, known_at, as_of))
        prefix = paths.join(self.root_scope, scope) if (scope or self.root_scope) else None
        states = {State.LIVE}
        if include_history:
            states.add(State.ENDED)
        if include_retracted:
            states.add(State.RETRACTED)
        if n == 0 or not query.strip():
            return []
        k = min(MAX_LIMIT, n * 4 + 20)
        with self._handle.lock, tagged(self.chronomem, lambda: crewai_tag(source)):
            store = self.chronomem
            hits = store.search(
                query,
                k=k,
                include_episodes=True,
                states=states,
                valid_at=sel.valid_at,
                known_at=sel.known_at,
                as_of=sel.as_of,
            )
            reader = _Reader(store, sel)
            reader.note(h.episode.id for h in hits if h.episode is not None)
            out: list[MemoryMatch] = []
            shown: dict[str, float] = {}  # the facts' scores, by version id
            for hit in without_internal(hits):
                if hit.fact is not None:
                    if _is_marker(hit.fact):
                        continue
                    record = reader.fact_record(hit.fact)
                    kind = "fact"
                elif hit.episode is not None:
                    if not reader.visible(hit.episode):
                        continue
                    record = episode_record(hit.episode, hit)
                    kind = "episode"
                else:
                    continue
                if not self._admits(record, prefix, cats, source, include_private):
                    continue
                legs = sorted((hit.explain or {}).get("legs", {}) or {})
                score = unit_score(hit.score, kind)
                if hit.fact is not None:
                    shown[hit.fact.version_id] = score
                # a stale episode never scores above the live fact that replaced it
                score = min(
                    [
                        score,
                        *(shown[f.version_id] for f in hit.superseded_by if f.version_id in shown),
                    ]
                )
                # best first, scores never rising: a fact's and an episode's unit scores
                # are scaled by their kind's legs, so the order is core's, the score capped
                if out:
                    score = min(score, out[-1].score)
                out.append(
                    MemoryMatch(
                        record=record,
                        score=score,
                        match_reasons=legs or ["chronomem"],
                    )
                )
                if len(out) >= n:
                    break
        return out

    @staticmethod
    def _admits(
        record: MemoryRecord,
        prefix: str | None,
        categories: list[str] | None,
        source: str | None,
        include_private: bool,
    ) -> bool:
        if prefix is not None and not paths.within(record.scope, prefix):
            return False
        if categories and not set(categories) & set(record.categories):
            return False
        hidden = record.private and not include_private
        return not (hidden and (source is None or record.source != source))

    def records(
        self, scope: str | None = None, *, as_of: object = None, known_at: object = None
    ) -> list[MemoryRecord]:
        """Every current fact and visible episode under ``scope`` (path-aware), newest first."""
        sel = self._time.override(select_time(None, known_at, as_of))
        return self._records(paths.normalize(scope) if scope else None, sel)

    def _records(self, prefix: str | None, sel: TimeSelection) -> list[MemoryRecord]:
        with self._handle.lock:
            store = self.chronomem
            reader = _Reader(store, sel)
            eps = reader.prime()  # the facts' sources, in the same statement
            out = [
                reader.fact_record(f)
                for f in store.facts(valid_at=sel.valid_at, known_at=sel.known_at, as_of=sel.as_of)
                if not _is_marker(f)
            ]
            if eps:
                reader.note_all()  # every episode's visibility: every forget marker, once
            out += [episode_record(e) for e in eps if reader.visible(e)]
        if prefix is not None:
            out = [r for r in out if paths.within(r.scope, prefix)]
        out.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return out

    # -- forgetting --------------------------------------------------------------------
    def _forget(self, records: list[MemoryRecord]) -> int:
        self._writable("forget")
        n = 0
        with self._handle.lock:
            store = self.chronomem
            forgotten_eps = [r.id for r in records if r.metadata.get("kind") == "episode"]
            for r in records:
                if r.metadata.get("kind") == "fact":
                    try:
                        store.retract(r.id)
                        n += 1
                    except ScopeError:
                        continue  # an enclosing scope's shared memory: not ours to forget
            if forgotten_eps:
                ops = [
                    store.assertion(
                        MARK, FORGOTTEN, eid, exact=True, index_text="", extractor="crewai"
                    )
                    for eid in forgotten_eps
                ]
                store.apply(ops)
                n += len(forgotten_eps)
                # facts read only from forgotten episodes are forgotten with them (the
                # facts citing them, looked up by source: not a listing of the store)
                gone = set(forgotten_eps)
                for f in store.facts_citing(forgotten_eps):
                    if (
                        not _is_marker(f)
                        and f.source_episode_ids
                        and set(f.source_episode_ids) <= gone
                    ):
                        try:
                            store.retract(f.id)
                        except ScopeError:
                            continue
        return n

    def _reset(self, prefix: str | None) -> None:
        self._writable("reset")
        path = paths.normalize(prefix)
        with self._handle.lock:
            store = self.chronomem
            now = store.now()
            reader = _Reader(store, TimeSelection())
            reader.prime()
            for f in store.facts():
                if _is_marker(f):
                    continue
                if paths.within(reader.fact_record(f).scope, path):
                    try:
                        store.retract(f.id)
                    except ScopeError:
                        continue
            store.apply(
                [
                    store.assertion(
                        MARK, RESET, f"{path} @ {now.isoformat()}", exact=True, index_text="",
                        metadata={"path": path}, extractor="crewai", valid_from=now,
                    )
                ]
            )  # fmt: skip


class _RecordsView:
    """CrewAI's ``StorageBackend`` read/delete side over a ``ChronomemMemory``, so the
    inherited ``forget``/``reset``/``list_records``/``info``/``tree``/``list_scopes``/
    ``list_categories`` work unchanged (with CrewAI's root-scope handling)."""

    def __init__(self, owner: ChronomemMemory):
        self.owner = owner

    def _sel(self) -> TimeSelection:
        return self.owner._time

    def get_record(self, record_id: str) -> MemoryRecord | None:
        if not isinstance(record_id, str):
            raise InvalidType("record_id must be a str")
        store = self.owner.chronomem
        sel = self._sel()
        with self.owner._handle.lock:
            reader = _Reader(store, sel)
            try:
                versions = [v for v in store.get(record_id) if v.state is not State.RETRACTED]
            except (NotFound, InvalidInput):
                versions = []
            if versions:
                return reader.fact_record(versions[-1])
            ep = reader.episode(record_id) if len(record_id) < 200 else None
            if ep is not None and reader.visible(ep):
                return episode_record(ep)
        return None

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        recs = self.owner._records(scope_prefix, self._sel())
        start = _limit(offset, "offset")
        return recs[start : start + _limit(limit)]

    def count(self, scope_prefix: str | None = None) -> int:
        return len(self.owner._records(scope_prefix, self._sel()))

    def _select(self, scope_prefix: str | None) -> list[MemoryRecord]:
        return self.owner._records(scope_prefix, self._sel())

    def get_scope_info(self, scope: str) -> ScopeInfo:
        return scopes.scope_info(self._select, scope)

    def list_scopes(self, parent: str = "/") -> list[str]:
        return scopes.child_scopes(self._select, parent)

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        return scopes.category_counts(self._select(scope_prefix))

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        self.owner._writable("forget")
        ids = _names(record_ids, "record_ids")
        cats = _names(categories, "categories")
        if older_than is not None and not isinstance(older_than, datetime):
            raise InvalidType("older_than must be a datetime")
        cutoff = naive_utc(older_than) if older_than and older_than.tzinfo else older_than
        chosen = []
        if ids is not None:  # a lookup per given id, not a listing of the store
            found = [
                r
                for i in dict.fromkeys(ids)
                if (r := self.get_record(i)) is not None
                and r.metadata.get("state", "live") == "live"
                and (scope_prefix is None or paths.within(r.scope, paths.normalize(scope_prefix)))
            ]
        else:
            found = self.owner._records(scope_prefix, TimeSelection())
        for r in found:
            if ids is not None and r.id not in ids:
                continue
            if cats and not set(cats) & set(r.categories):
                continue
            if cutoff is not None and not r.created_at < cutoff:
                continue
            if metadata_filter and any(r.metadata.get(k) != v for k, v in metadata_filter.items()):
                continue
            chosen.append(r)
        return self.owner._forget(chosen)

    def reset(self, scope_prefix: str | None = None) -> None:
        self.owner._reset(scope_prefix)

    def update(self, record: MemoryRecord) -> None:
        self.owner.update(record.id, content=record.content)

    def save(self, records: list[MemoryRecord]) -> None:
        raise NotImplementedError("ChronomemMemory saves through remember()")

    def search(self, *args: Any, **kwargs: Any) -> list[tuple[MemoryRecord, float]]:
        raise NotImplementedError("ChronomemMemory searches through recall()")

    def __deepcopy__(self, memo: dict[int, Any]) -> _RecordsView:
        owner = memo.get(id(self.owner), self.owner)
        return _RecordsView(owner)
