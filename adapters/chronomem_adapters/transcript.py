"""A conversation transcript kept as chronomem episodes of one scope.

Chat histories and agent memories of every framework need the same thing:
append messages (never overwrite), read them back exactly and in order, hide
them from current reads without destroying them, and erase them for real.

- Each message is one episode of the memory's own scope, with a JSON payload
  (the framework's own serialisation of the message) in its metadata, so the
  framework can rebuild the exact object. Messages come back in the order they
  were appended (transaction time, then creation order), not by their claimed
  timestamps.
- ``record`` is ``append`` plus fact extraction (``Memory.add``) over the new
  messages, with the transcript's own episodes as the facts' sources.
- ``append`` skips messages whose id is already in the visible transcript, so
  frameworks that re-send a whole history (LlamaIndex ``aset``) never
  duplicate anything.
- Hot paths are bounded by the transcript's tail, never its length: ``recent``
  reads the visible transcript newest first in growing pages
  (``Memory.latest_episodes``, one bounded statement each); ``append`` writes
  by the store's own cursor (transaction time, then creation order) and looks
  up only the given message ids (``Memory.tagged_episodes``) and, when one is
  found, the clear markers, never the whole transcript.
- ``store_thread`` is for frameworks that hand over the whole thread every
  turn (a LangChain agent's state): it walks the thread from its end, looks
  up only its newest messages by id (a window of ``WINDOW``, doubling while
  none is stored), and converts and stores only what follows the newest
  stored one. Each stored message keeps its position in the thread; when the
  newest stored message still sits at its position and the window holds no
  gap, the messages before it are taken as stored (the cursor). Otherwise the
  thread was edited before it (a message removed or inserted) and every id is
  looked up once (the full confirmation).
- ``clear`` appends a marker episode: current reads start after the last
  marker, the audit view (``messages(known_at=…)`` before the clear, or
  ``messages(include_cleared=True)``) still shows everything. Nothing is lost.
- ``erase`` is the physical delete: ``Memory.purge`` of the scope.

See docs/design.md §5 (episodes and scope)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from chronomem import Episode, ExtractionReceipt, InvalidType, Memory

PAGE = 32  # the first page ``recent`` reads; each further page doubles, up to MAX_PAGE
MAX_PAGE = 1024
KEY = "chronomem_transcript"  # metadata key: {"kind", "message_id", "payload"} or a marker
CLEARED = "cleared"
WINDOW = 8  # the thread's newest messages ``store_thread`` looks up first (doubling)

T = TypeVar("T")


@dataclass(frozen=True)
class TranscriptMessage:
    """One message as the transcript stores it."""

    role: str
    text: str
    message_id: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)  # JSON-safe framework data
    occurred_at: datetime | None = None


def _marker(ep: Episode, kind: str) -> bool:
    tag = ep.metadata.get(KEY)
    return isinstance(tag, dict) and tag.get("kind") == kind and tag.get("marker") == CLEARED


def _member(ep: Episode, kind: str) -> bool:
    tag = ep.metadata.get(KEY)
    return isinstance(tag, dict) and tag.get("kind") == kind and "marker" not in tag


class Transcript:
    """The transcript named ``kind`` in ``memory``'s scope (exactly that scope:
    a session's transcript never shows its user's or a sibling's messages)."""

    def __init__(self, memory: Memory, kind: str = "chat"):
        if not isinstance(memory, Memory):
            raise InvalidType(f"memory must be a chronomem Memory, not {type(memory).__name__}")
        self.memory = memory
        self.kind = kind

    def episodes(
        self, *, known_at: datetime | None = None, include_cleared: bool = False
    ) -> list[Episode]:
        """The transcript's message episodes, in append order: the last clear
        marker found by its index, then one ordered read of what follows it."""
        after = None if include_cleared else self._last_marker(known_at)
        eps = self.memory.recorded_episodes(after=after, known_at=known_at)
        return [e for e in eps if _member(e, self.kind)]

    def _last_marker(self, known_at: datetime | None) -> Episode | None:
        kind = {"kind": self.kind}
        markers = self.memory.tagged_episodes((KEY, "marker"), [CLEARED], where=kind)
        if known_at is not None:
            markers = [m for m in markers if m.recorded_at <= known_at]
        return markers[-1] if markers else None

    def messages(
        self, *, known_at: datetime | None = None, include_cleared: bool = False
    ) -> list[TranscriptMessage]:
        return [
            _to_message(e)
            for e in self.episodes(known_at=known_at, include_cleared=include_cleared)
        ]

    def recent(
        self, *, known_at: datetime | None = None, page: int = PAGE
    ) -> Iterator[TranscriptMessage]:
        """The visible transcript newest first, read lazily: a caller that stops
        after the tail it needs (a token window) reads only that tail. ``page``:
        the first page's size (1 to ``MAX_PAGE``), each further page doubling: a
        caller that knows about how many messages it will read (its last window)
        reads them in one statement. The messages are the same whatever it is."""
        for e in self._recent_episodes(known_at, page):
            yield _to_message(e)

    def _recent_episodes(self, known_at: datetime | None, first: int = PAGE) -> Iterator[Episode]:
        before: Episode | None = None
        size = max(1, min(first, MAX_PAGE))
        while True:
            page = self.memory.latest_episodes(size, before=before, known_at=known_at)
            for e in page:
                if _marker(e, self.kind):
                    return
                if _member(e, self.kind):
                    yield e
            if len(page) < size:
                return
            before = page[-1]
            size = min(size * 2, MAX_PAGE)

    def _stored_ids(self, ids: list[str]) -> set[str]:
        """Which of ``ids`` the visible transcript holds, read by lookup (the
        matching messages and this scope's clear markers), not by listing it."""
        if not all(isinstance(i, str) for i in ids):
            return {
                e.metadata[KEY].get("message_id")
                for e in self.episodes()
                if e.metadata[KEY].get("message_id") is not None
            }
        kind = {"kind": self.kind}
        if len(ids) <= PAGE:  # a few ids: one lookup, no tail read
            return set(self._by_id(list(ids), _Marker(self)))
        since = self._last_marker(None)
        head: list[str] = []
        newest = next(self._recent_episodes(None), None)
        last = newest.metadata[KEY].get("message_id") if newest is not None else None
        if last in ids:
            # an agent re-sending its thread: the messages up to the newest stored
            # one are confirmed by one count, only those after it are looked up
            head = list(dict.fromkeys(ids[: ids.index(last) + 1]))
            stored = self.memory.count_tagged((KEY, "message_id"), head, where=kind, after=since)
            if stored != len(head):
                head = []
        confirmed = set(head)
        rest = list(dict.fromkeys(i for i in ids if i not in confirmed))
        found = self.memory.tagged_episodes((KEY, "message_id"), rest, where=kind, after=since)
        return set(head) | {e.metadata[KEY]["message_id"] for e in found}

    def _new(self, messages: Sequence[TranscriptMessage]) -> list[dict[str, Any]]:
        """The episodes to write for the messages not already in the visible
        transcript (by id), validated before anything is written."""
        ids = [
            m.message_id
            for m in messages
            if isinstance(m, TranscriptMessage) and m.message_id is not None
        ]
        seen = self._stored_ids(ids) if ids else set()
        items = []
        for m in messages:
            if not isinstance(m, TranscriptMessage):
                raise InvalidType(f"expected a TranscriptMessage, not {type(m).__name__}")
            if m.message_id is not None:
                if m.message_id in seen:
                    continue
                seen.add(m.message_id)
            items.append(self._item(m))
        return items

    def _item(self, m: TranscriptMessage, position: int | None = None) -> dict[str, Any]:
        """The episode (``add_episodes``' mapping) that stores ``m``."""
        tag: dict[str, Any] = {"kind": self.kind, "message_id": m.message_id, "payload": m.payload}
        if position is not None:
            tag["position"] = position
        return {
            "text": m.text,
            "role": m.role,
            "occurred_at": m.occurred_at,
            "metadata": {KEY: tag},
        }

    def append(self, messages: Sequence[TranscriptMessage]) -> list[Episode]:
        """Store the messages not already in the visible transcript (by id), in
        one transaction; returns the episodes written."""
        items = self._new(messages)
        return self.memory.add_episodes(items) if items else []

    def record(
        self, messages: Sequence[TranscriptMessage], *, extractor: Any = None
    ) -> ExtractionReceipt:
        """``append`` and extract facts from the new messages in one go
        (``Memory.add``): the transcript's episodes are the ones the facts cite,
        so nothing is stored twice. ``extractor``: default the offline rule
        extractor. Facts land in this memory's scope. Returns the receipt
        (``episode_ids`` are the new messages' episodes)."""
        return self._extract(self._new(messages), extractor)

    def store_thread(
        self,
        thread: Sequence[T],
        *,
        id_of: Callable[[T], str | None],
        convert: Callable[[T], TranscriptMessage | None],
        extract: bool = False,
        extractor: Any = None,
    ) -> ExtractionReceipt:
        """Store the messages of ``thread`` (the whole conversation, oldest
        first, as a framework re-sends it each turn) that the visible transcript
        does not hold yet, in one transaction; with ``extract``, also extract
        facts from them (as ``record``). Only the messages walked from the end
        are read: ``id_of`` gives a message's id (and may refuse a bad item),
        ``convert`` is called only for the messages to store (``None``: never
        store this one). Bounded by the new messages, not the thread: one
        marker lookup and one lookup of the newest ``WINDOW`` ids (doubling
        while none is stored), unless the thread was edited before its newest
        stored message (then every id is looked up once). A message without an
        id cannot be looked up: it is stored when it follows the newest stored
        message that has one. Returns the receipt (``episode_ids``: the new
        messages' episodes)."""
        items = []
        for i in self._unstored(thread, id_of):
            m = convert(thread[i])
            if m is None:
                continue
            if not isinstance(m, TranscriptMessage):
                raise InvalidType(f"expected a TranscriptMessage, not {type(m).__name__}")
            items.append(self._item(m, i))
        if extract:
            return self._extract(items, extractor)
        return ExtractionReceipt(
            episode_ids=[e.id for e in self.memory.add_episodes(items)] if items else []
        )

    def _unstored(self, thread: Sequence[T], id_of: Callable[[T], str | None]) -> list[int]:
        """The positions in ``thread`` to store, oldest first."""
        n = len(thread)
        if n == 0:
            return []
        since = _Marker(self)
        ids: dict[int, str | None] = {}
        found: dict[str, Episode] = {}
        lo, size = n, WINDOW
        while lo > 0 and not found:  # walk back until a stored message turns up
            top, lo = lo, max(0, lo - size)
            for i in range(lo, top):
                ids[i] = id_of(thread[i])
            found.update(self._by_id([ids[i] for i in range(lo, top)], since))
            size *= 2
        last = next((i for i in range(n - 1, lo - 1, -1) if _found(ids[i], found)), -1)
        if last >= 0 and not self._at_cursor(ids, found, lo, last):
            # edited before its newest stored message: confirm every id once
            for i in range(lo):
                ids[i] = id_of(thread[i])
            found.update(self._by_id([ids[i] for i in range(lo)], since))
            lo = 0
        out: list[int] = []
        seen: set[str] = set()
        for i in range(lo, n):
            v = ids[i]
            if v is None:
                if i > last:
                    out.append(i)
            elif v not in found and v not in seen:
                seen.add(v)
                out.append(i)
        return out

    def _by_id(self, ids: Sequence[str | None], since: _Marker) -> dict[str, Episode]:
        """The visible transcript's episodes of these message ids (the newest of
        each): one lookup by id; the clear markers are read only when it finds
        something (new ids, the usual case, cost one statement)."""
        wanted = list(dict.fromkeys(i for i in ids if i is not None))
        if not wanted:
            return {}
        where = {"kind": self.kind}
        found = self.memory.tagged_episodes((KEY, "message_id"), wanted, where=where)
        return {e.metadata[KEY]["message_id"]: e for e in since.after(found)}

    @staticmethod
    def _at_cursor(
        ids: dict[int, str | None], found: dict[str, Episode], lo: int, last: int
    ) -> bool:
        """Whether the thread still ends, up to its newest stored message, as it
        did when that message was stored: the message sits at the position it
        was stored at, and every message with an id between the window's start
        and it is stored. Then the messages before it were confirmed stored
        when it was (removing one shifts it; inserting one leaves a gap)."""
        v = ids[last]
        assert v is not None
        if found[v].metadata[KEY].get("position") != last:
            return False
        return all(ids[i] is None or ids[i] in found for i in range(lo, last))

    def _extract(self, items: list[dict[str, Any]], extractor: Any) -> ExtractionReceipt:
        from chronomem.extraction import Turn

        if not items:
            return ExtractionReceipt()
        turns = [
            Turn(
                text=i["text"],
                role=i["role"],
                occurred_at=i["occurred_at"],
                speaker="user" if i["role"] == "user" else (i["role"] or "user"),
                metadata=i["metadata"],
            )
            for i in items
        ]
        return self.memory.add(turns, extractor=extractor)

    def clear(self) -> None:
        """Hide the current transcript from current reads; the audit view keeps it."""
        tag = {"kind": self.kind, "marker": CLEARED}
        self.memory.add_episodes([{"text": "", "role": "system", "metadata": {KEY: tag}}])

    def erase(self) -> dict[str, int]:
        """Physically delete this scope's memory (transcript, facts, indexes)."""
        return self.memory.purge()


class _Marker:
    """A transcript's last clear marker, read once, when first needed."""

    def __init__(self, transcript: Transcript):
        self.transcript = transcript
        self.read = False
        self.marker: Episode | None = None

    def after(self, episodes: list[Episode]) -> list[Episode]:
        """The episodes recorded after the marker (all of them without one)."""
        if not episodes:
            return episodes
        if not self.read:
            self.marker, self.read = self.transcript._last_marker(None), True
        m = self.marker
        if m is None:
            return episodes
        return [e for e in episodes if (e.recorded_at, e.id) > (m.recorded_at, m.id)]


def _found(message_id: str | None, found: dict[str, Episode]) -> bool:
    return message_id is not None and message_id in found


def _to_message(e: Episode) -> TranscriptMessage:
    tag = e.metadata[KEY]
    payload = tag.get("payload")
    return TranscriptMessage(
        role=e.role or "",
        text=e.text,
        message_id=tag.get("message_id"),
        payload=payload if isinstance(payload, dict) else {},
        occurred_at=e.occurred_at,
    )
