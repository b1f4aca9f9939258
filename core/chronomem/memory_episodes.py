"""``Memory``'s episode methods: raw records (messages, task outputs, documents)
stored as they came, for provenance and episode search (``chronomem.episodes``),
and ``add``: messages stored as episodes, with the facts extracted from them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from . import episodes as episode_store
from .arguments import collection, episode_row
from .errors import InvalidInput, InvalidType, NotFound
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

    def latest_episodes(
        self,
        limit: int,
        *,
        before: Episode | None = None,
        known_at: datetime | None = None,
    ) -> list[Episode]:
        """The newest ``limit`` episodes recorded in exactly this scope (not an
        enclosing one), newest first (transaction time, then creation order): a
        transcript's tail in one bounded read. Page back with ``before=`` the
        oldest episode of the previous page.

        :param limit: at most this many
        :param before: only episodes recorded before this one (default: the newest)
        :param known_at: as the store knew them then (default: everything recorded)"""
        self._engine.check_open()
        n = check_limit(limit)
        if n is None:
            raise InvalidInput("limit must be a non-negative int")
        if before is not None and not isinstance(before, Episode):
            raise InvalidType(f"before must be an Episode, not {type(before).__name__}")
        cursor = (to_us(before.recorded_at, "before"), before.id) if before else None
        known_us = to_us(known_at, "known_at") if known_at is not None else None
        return episode_store.latest(
            self._engine, self.scope, limit=n, before=cursor, known_at=known_us
        )

    def recorded_episodes(
        self, *, after: Episode | None = None, known_at: datetime | None = None
    ) -> list[Episode]:
        """Every episode recorded in exactly this scope (not an enclosing one),
        oldest first (transaction time, then creation order), in one statement
        read in index order: a transcript read whole, or from a cursor on.

        :param after: only episodes recorded after this one (default: all)
        :param known_at: as the store knew them then (default: everything recorded)"""
        self._engine.check_open()
        if after is not None and not isinstance(after, Episode):
            raise InvalidType(f"after must be an Episode, not {type(after).__name__}")
        cursor = (to_us(after.recorded_at, "after"), after.id) if after else None
        known_us = to_us(known_at, "known_at") if known_at is not None else None
        return episode_store.recorded(self._engine, self.scope, after=cursor, known_at=known_us)

    def tagged_episodes(
        self,
        path: Sequence[str],
        values: Sequence[str],
        *,
        where: Mapping[str, str] | None = None,
        after: Episode | None = None,
    ) -> list[Episode]:
        """The episodes recorded in exactly this scope whose metadata holds one of
        ``values`` at ``path`` (e.g. ``("chronomem_transcript", "message_id")``), in
        recording order: a lookup by the caller's own keys that reads only the
        matching rows.

        :param path: object keys into the metadata, outermost first
        :param values: the strings to match there
        :param where: also these ``{key: text}`` under ``path``'s parent (default none)
        :param after: only episodes recorded after this one (default: all)"""
        found = self._tagged(path, values, where, after, count=False)
        return cast("list[Episode]", found)

    def count_tagged(
        self,
        path: Sequence[str],
        values: Sequence[str],
        *,
        where: Mapping[str, str] | None = None,
        after: Episode | None = None,
    ) -> int:
        """How many episodes ``tagged_episodes`` would return (one row read)."""
        return cast(int, self._tagged(path, values, where, after, count=True))

    def _tagged(
        self,
        path: Sequence[str],
        values: Sequence[str],
        where: Mapping[str, str] | None,
        after: Episode | None,
        *,
        count: bool,
    ) -> list[Episode] | int:
        self._engine.check_open()
        keys = collection(path, "path", of="keys (str)")
        wanted = collection(values, "values", of="values (str)")
        extra = dict(where or {})
        texts = [*keys, *wanted, *extra, *extra.values()]
        if not keys or not all(isinstance(k, str) for k in texts):
            raise InvalidType("path, values and where must hold str (path non-empty)")
        if after is not None and not isinstance(after, Episode):
            raise InvalidType(f"after must be an Episode, not {type(after).__name__}")
        if not wanted:
            return 0 if count else []
        conds = [((*keys[:-1], k), v) for k, v in extra.items()]
        cursor = (to_us(after.recorded_at, "after"), after.id) if after else None
        return episode_store.tagged(
            self._engine, self.scope, keys, wanted, where=conds, after=cursor, count=count
        )
