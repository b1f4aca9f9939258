"""A logged read's transaction-clock instant.

The instant is the tenant's last transaction time, read inside the read's own
transaction as it commits (an engine ``commit`` listener; no extra transaction
or connection). On SQLite that is the read's snapshot, so the instant is exact.
On PostgreSQL (read committed) it is read after the read's statements: a write
that commits in between is counted before the instant without having been
seen, so its replay would include it; with no concurrent writer (or a writer
serialised with the reads) replay is exact."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

from sqlalchemy import Connection, bindparam, select

from ..prepared import Prepared
from ..schema import txclock
from ..writer import stamp

if TYPE_CHECKING:
    from ..memory import Memory

# set while a logged read runs: its tenant, and the clock readings its transactions took
read_clock: ContextVar[tuple[str, list[int]] | None] = ContextVar(
    "chronomem_read_clock", default=None
)


# The tenant's clock: compiled once per dialect and run on the driver's cursor
# (``chronomem.prepared``). It runs in every logged read, where SQLAlchemy's
# execution path cost as much as a point read's own statement.
_INSTANT = Prepared(select(txclock.c.last_us).where(txclock.c.tenant == bindparam("tenant")))


def _instant(conn: Connection, tenant: str, now: int) -> int:
    """A tenant that never wrote has no clock row: it gets one here (once), so every
    later write is stamped after this read's instant."""
    at = _INSTANT.scalar(conn, {"tenant": tenant})
    if at is None:
        return stamp(conn, tenant, now)
    return int(at)


def instant_hook(conn: Connection) -> None:
    """The read's transaction-clock instant: the tenant's last transaction time,
    read in the read's own snapshot as it ends — an engine ``commit`` listener,
    and ``Backend.point_read``'s ``on_end`` for a point read whose snapshot
    SQLAlchemy does not see (the latest of the read's snapshots counts). Every
    write the read saw is stamped at or before it; every later write is stamped
    after it (``writer.stamp``: strictly after the last). On SQLite the read's
    snapshot holds the clock too, so the instant is exactly the read's; on
    PostgreSQL (read committed) it is read after the read's statements. The clock
    is not ticked (the search mirrors, which follow the clock, do not resync after
    a read) and the read writes nothing."""
    want = read_clock.get()
    if want is not None:
        at = _INSTANT.scalar(conn, {"tenant": want[0]})
        if at is not None:
            want[1].append(int(at))


def read_instant(mem: Memory) -> int:
    """The instant of a read whose transactions did not give one (a tenant that
    never wrote has no clock row yet: it gets one, once)."""
    t = mem.scope.tenant
    backend = mem._engine.backend
    with backend.read() as conn:
        at = _INSTANT.scalar(conn, {"tenant": t})
    if at is not None:
        return int(at)
    with backend.write() as conn:
        return _instant(conn, t, mem._engine.tx_us())
