"""The served-read log: what memory handed an agent, and what we believe about it now.

Opt-in per store: ``Memory(..., read_log=True)`` (every ``scoped()`` view of it
shares the switch). Each ``facts``, ``search`` and ``recall`` then records one
read (``cm_reads``) and the items it returned (``cm_read_items``): the read's
transaction-clock instant, its scope, its arguments with the valid instant
resolved (a read "now" is logged at the instant it ran), the returned version
(or episode) ids with their scores and states, and the caller tag in effect.

Each concern is one module of this package:

- ``tags``: the caller tag (``read_tag``), a context variable an adapter sets
  around a framework call: ``with memory.read_tag(run="r-17"): ...``.
- ``capture``: logging the three reads (``serve`` a query value); ``args``: how
  a read's query value is stored; ``instant``: the read's transaction-clock instant.
- ``batch``: the pending entries and their batched writes (``flush``, ``close``).
- ``queries``: ``reads`` and ``get_read``; ``records``: the values they return.
- ``replay``: ``memory.replay(read_id)``, what a read returned as of its instant.
- ``served``: ``memory.served(run=...)``, what the agent knew and what changed since.
- ``erasure``: erasure reaches the log (``forget``, ``forget_scope``).

When the log is off, a read pays one attribute check; writes are untouched
(erasure always clears the log: it is rare and must reach reads logged by any
process). On: building the entry and one indexed clock lookup in the read's
transaction, plus a share of a batch insert (``benchmarks/readlog.py``).
See ``docs/design.md``."""

from __future__ import annotations

from .args import TEXT_ARGS, TIME_ARGS
from .batch import FLUSH_AFTER_S, FLUSH_EVERY, close, flush
from .capture import serve
from .erasure import forget, forget_scope
from .instant import instant_hook
from .queries import get_read, reads
from .records import ErasedRead, Read, ReadItem, Served, ServedItem
from .replay import replay
from .served import served
from .tags import current_tag, read_tag

__all__ = [
    "FLUSH_AFTER_S",
    "FLUSH_EVERY",
    "TEXT_ARGS",
    "TIME_ARGS",
    "ErasedRead",
    "Read",
    "ReadItem",
    "Served",
    "ServedItem",
    "close",
    "current_tag",
    "flush",
    "forget",
    "forget_scope",
    "get_read",
    "instant_hook",
    "read_tag",
    "reads",
    "replay",
    "serve",
    "served",
]
