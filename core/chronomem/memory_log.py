"""``Memory``'s served-read log methods (``chronomem.readlog``): the switch, the
caller tag, and reading, replaying and auditing what was served."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from . import readlog

if TYPE_CHECKING:
    from .engine import Engine
    from .memory import Memory


class ReadLogMethods:
    """Mixed into ``Memory``: every method here works on the store's read log."""

    _engine: Engine

    @property
    def read_log(self) -> bool:
        """Whether this store logs every ``facts``/``search``/``recall`` it serves
        (shared by every scoped view; set it to switch the log on or off)."""
        return self._engine.read_log

    @read_log.setter
    def read_log(self, on: bool) -> None:
        self._engine.read_log = bool(on)

    def drain(self) -> None:
        """Write the read log's pending entries and return the pooled database
        connections, leaving the store open: a later call opens new connections.
        An in-memory SQLite store keeps its one connection, which holds its data.
        (What a framework means by ``close`` on a store it shares: CrewAI's.)"""
        self._engine.check_open()
        readlog.flush(cast("Memory", self))
        backend = self._engine.backend
        if not getattr(backend, "memory", False):
            backend.engine.dispose()

    @staticmethod
    def read_tag(**tag: str | None) -> AbstractContextManager[None]:
        """Tag the reads logged inside a ``with`` block. Nested tags merge, the
        inner keys winning.

        :param tag: keys and values, e.g. ``run``, ``thread``, ``checkpoint``; each
            value a ``str``, or ``None`` to drop that key inside the block"""
        return readlog.read_tag(**tag)

    def reads(
        self,
        *,
        run: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        op: str | None = None,
        tag: Mapping[str, str] | None = None,
        limit: int | None = None,
    ) -> list[readlog.Read]:
        """The logged reads of this scope (and the scopes under it), oldest first.

        :param run: only the reads tagged with this ``run`` (default: any)
        :param since: only the reads made at or after this instant
        :param until: only the reads made at or before this instant
        :param op: only this kind of read: ``"facts"``, ``"search"`` or ``"recall"``
        :param tag: only the reads whose tag holds every one of these keys and values
        :param limit: at most this many reads (default: all)"""
        mem = cast("Memory", self)
        return readlog.reads(mem, run=run, since=since, until=until, op=op, tag=tag, limit=limit)

    def replay(self, read_id: str | readlog.Read, *, rerun: bool = False) -> Any:
        """What a logged read returned, as of its instant (``chronomem.readlog.replay``):
        the same facts, hits or block. Raises ``ErasedRead`` if it served something
        since erased.

        :param read_id: the read's id, or the ``Read`` itself
        :param rerun: re-execute a ``search``/``recall`` as of its instant instead of
            rebuilding it from what it served (default ``False``; ranks may differ)"""
        return readlog.replay(cast("Memory", self), read_id, rerun=rerun)

    def served(
        self,
        *,
        run: str | None = None,
        read_ids: Sequence[str] | None = None,
        since: datetime | None = None,
        tag: Mapping[str, str] | None = None,
    ) -> readlog.Served:
        """What the agent knew: each item served, its state then, and what happened
        to it since (unchanged, ended, corrected, retracted, erased).

        :param run: the reads tagged with this ``run`` (default: every read)
        :param read_ids: these reads, by id (instead of ``run``/``since``/``tag``)
        :param since: only the reads made at or after this instant
        :param tag: only the reads whose tag holds every one of these keys and values"""
        mem = cast("Memory", self)
        return readlog.served(mem, run=run, read_ids=read_ids, since=since, tag=tag)
