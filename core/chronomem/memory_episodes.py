"""``Memory``'s episode methods: raw records (messages, task outputs, documents)
stored as they came, for provenance and episode search (``chronomem.episodes``),
and ``add``: messages stored as episodes, with the facts extracted from them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from . import episodes as episode_store
from .arguments import collection, episode_row
from .errors import InvalidType, NotFound
from .facts import check_limit
from .identity import require_id
from .model import Episode, ExtractionReceipt
from .timeutil import to_us

if TYPE_CHECKING:
    from .engine import Engine
    from .memory import Memory
    from .scope import Scope


class EpisodeMethods:
    """Mixed into ``Memory``: storing and listing episodes in its scope."""

    _engine: Engine
    scope: Scope

    def add(
        self,
        messages: object,
        *,
        extractor: Any = None,
        occurred_at: datetime | None = None,
        on_error: str = "report",
    ) -> ExtractionReceipt:
        """Store messages as episodes, extract facts from them and write the facts
        through the state machine. The ``ExtractionReceipt`` names the new
        ``episode_ids`` and counts ``extracted``, ``skipped`` (small talk),
        ``unextracted`` (kept, but nothing the extractor could read) and ``failed``.

        :param messages: a str, a list, OpenAI-style ``{"role", "content"}`` dicts or
            framework message objects
        :param extractor: what extracts the facts (default: the offline rule extractor)
        :param occurred_at: when the messages were said (default: now; a message's own
            ``occurred_at``/``timestamp`` wins)
        :param on_error: ``"report"`` (default: a failed extraction batch writes nothing
            and is reported on the receipt) or ``"raise"`` (``ExtractionError`` after
            the rest was written)"""
        from .extraction import add_messages

        return add_messages(
            cast("Memory", self),
            messages,
            extractor=extractor,
            occurred_at=occurred_at,
            on_error=on_error,  # type: ignore[arg-type]
        )

    def add_episode(
        self,
        text: str,
        *,
        role: str | None = None,
        occurred_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Episode:
        """Store one raw record (a message, a task output, a document).

        :param text: the record's text, stored as given
        :param role: who said it (``"user"``, ``"assistant"``, …; default none)
        :param occurred_at: when it happened (default: its transaction time)
        :param metadata: a JSON-serialisable mapping kept with it (default empty)"""
        return self.add_episodes(
            [{"text": text, "role": role, "occurred_at": occurred_at, "metadata": metadata}]
        )[0]

    def add_episodes(self, items: Iterable[Mapping[str, Any]]) -> list[Episode]:
        """Store several episodes in one transaction (same transaction time).

        :param items: mappings with ``add_episode``'s arguments: ``text`` (required),
            ``role``, ``occurred_at``, ``metadata``"""
        self._engine.check_open()
        given = collection(items, "add_episodes", of="episodes (mappings)")
        prepared = [episode_row(item) for item in given]
        if not prepared:
            return []
        return episode_store.insert(self._engine, self.scope, prepared)

    def get_episode(self, episode_id: str) -> Episode:
        """One episode of this scope (or an enclosing one); ``NotFound`` otherwise.

        :param episode_id: the episode's id (``Episode.id``)"""
        self._engine.check_open()
        require_id(episode_id, "episode_id")
        found = episode_store.get(self._engine, self.scope, episode_id)
        if found is None:
            raise NotFound(f"no episode {episode_id!r} in this scope")
        return found

    def episodes(
        self,
        *,
        limit: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        known_at: datetime | None = None,
        role: str | None = None,
    ) -> list[Episode]:
        """Episodes in this scope, in the order they occurred (then recorded).

        :param limit: at most this many (default: all)
        :param since: only those that occurred at or after this instant
        :param until: only those that occurred before this instant
        :param known_at: as the store knew them then (default: everything recorded)
        :param role: only this role's episodes (default: every role)"""
        self._engine.check_open()
        since_us = to_us(since, "since") if since is not None else None
        until_us = to_us(until, "until") if until is not None else None
        known_us = to_us(known_at, "known_at") if known_at is not None else None
        if role is not None and not isinstance(role, str):
            raise InvalidType("role must be a str")
        return episode_store.listing(
            self._engine,
            self.scope,
            since=since_us,
            until=until_us,
            known_at=known_us,
            role=role,
            limit=check_limit(limit),
        )
