"""The engine under every ``Memory`` view (docs/design.md §10).

One ``Engine`` per opened store: the backend (database and dialect work), the
clock, the predicate registry, the insert hooks the indexer hangs on, and the
retrieval handle (embedder, indexer, mirrors). ``Memory.scoped`` views share
it; the modules that run SQL (``episodes``, ``erasure``, ``provenance``,
``retrieval``, ``timeline``, ``integrity``, ``exchange``) take ``(engine,
scope)`` and never a ``Memory``, so nothing below the public face imports it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from .backends import Backend, open_backend
from .errors import StoreClosed
from .predicates import PredicateSpec
from .registry import Registry
from .schema import migrate
from .timeutil import Clock, check_tx_clock, read_instants, to_us
from .writer import InsertHook, stamp

if TYPE_CHECKING:  # annotations only: retrieval sits above the engine
    from .retrieval.search import Retrieval

TimeArgs = tuple[int, int | None]  # (valid instant, belief instant or None = latest), µs


class Engine:
    """What every scoped view of one store shares."""

    def __init__(self, backend: Backend, clock: Clock, *, read_log: bool = False):
        self.backend = backend
        self.clock = clock
        self.registry = Registry()
        self.closed = False
        self.hooks: list[InsertHook] = []  # run on every batch of inserted versions
        self.episode_hooks: list[InsertHook] = []  # ... and of inserted episodes
        self.retrieval: Retrieval | None = None  # set by ``retrieval.attach`` on open
        self.read_log = read_log  # chronomem.readlog: log every served read
        self.read_log_pending: object | None = None  # chronomem.readlog's unwritten entries

    @classmethod
    def open(cls, url: str | None, clock: Clock, *, read_log: bool = False) -> Engine:
        """Connect to ``url`` and bring its schema up to date (under the write lock)."""
        backend = open_backend(url)
        try:
            with backend.write() as conn:
                migrate(conn, type(backend))
        except Exception:
            backend.dispose()
            raise
        return cls(backend, clock, read_log=read_log)

    # -- lifecycle --------------------------------------------------------------------
    def check_open(self) -> None:
        if self.closed:
            raise StoreClosed("this chronomem store is closed")

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.backend.dispose()

    # -- the clock --------------------------------------------------------------------
    def now(self) -> datetime:
        value = self.clock()
        to_us(value, "clock()")  # the clock must give aware datetimes too
        return value

    def now_us(self) -> int:
        return to_us(self.clock(), "clock()")

    def tx_us(self) -> int:
        """The clock's reading for a write: it becomes a transaction time, so one in
        the calendar's last year is refused (``InvalidInput``) before anything is
        stamped — a store stamped at 9999-12-31 could never write again."""
        return check_tx_clock(self.now_us())

    def times(
        self, valid_at: datetime | None, known_at: datetime | None, as_of: datetime | None
    ) -> TimeArgs:
        """The read instants: ``valid_at`` (default now) and ``known_at`` (default
        None: everything recorded), or ``as_of`` for both (never with either)."""
        v, k = read_instants(valid_at, known_at, as_of)
        return (v if v is not None else self.now_us()), k

    # -- the predicate registry -------------------------------------------------------
    def register_predicate(self, tenant: str, spec: PredicateSpec) -> None:
        with self.backend.write() as conn:
            self.registry.register(conn, tenant, spec, stamp(conn, tenant, self.tx_us()))
        self.registry.invalidate(tenant)

    def resolve_predicate(self, tenant: str, name: str) -> PredicateSpec:
        with self.backend.read() as conn:
            return self.registry.resolve(conn, tenant, name)

    def predicate_known(self, tenant: str, name: str) -> bool:
        if Registry.builtin(name):
            return True
        with self.backend.read() as conn:
            return self.registry.known(conn, tenant, name)

    # -- hooks and caches -------------------------------------------------------------
    def on_insert(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        for hook in self.hooks:
            hook(conn, rows)

    def on_episodes(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        for hook in self.episode_hooks:
            hook(conn, rows)

    def invalidate_index(self) -> None:
        """Drop what this process caches of stored text and vectors (after erasure,
        repair or import): the mirrors reload, the embedding cache forgets."""
        if self.retrieval is not None:
            self.retrieval.mirrors.clear()
            self.retrieval.indexer.clear()
