"""Erasure reaches the log.

The log never holds a fact's or an episode's text,
only ids; when ``erase``/``erase_subject``/``purge`` deletes a version or an
episode, the items naming it are marked erased and the text arguments of every
read that served it (its query, subject, object) are blanked. ``purge`` also
deletes the reads made in the purged scopes. Such a read cannot be replayed
(``ErasedRead``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import Connection, delete, select, update

from .. import backends
from .. import reads as reads_sql
from ..batching import chunks
from ..schema import read_items, read_log
from ..scope import Scope
from .args import TEXT_ARGS
from .batch import flush_into


def forget(
    conn: Connection,
    tenant: str,
    *,
    version_ids: Sequence[str] = (),
    episode_ids: Sequence[str] = (),
) -> None:
    """Erasure reaches the log: mark the items naming erased versions/episodes
    erased, and blank the text arguments of every read that served one. The
    store's pending entries are written first, in the erasing transaction, after
    any other process's batch of this tenant being written has committed (the
    erase holds the tenant's read-log lock to its commit)."""
    backends.of(conn).lock_read_log(conn, [tenant], erasing=True)
    flush_into(conn)
    touched: set[str] = set()
    for kind, ids in (("v", list(version_ids)), ("e", list(episode_ids))):
        for chunk in chunks(ids):
            where = (
                read_items.c.tenant == tenant,
                read_items.c.kind == kind,
                read_items.c.item_id.in_(chunk),
            )
            touched.update(conn.execute(select(read_items.c.read_id).where(*where)).scalars())
            conn.execute(update(read_items).where(*where).values(erased=1))
    ordered = sorted(touched)
    for chunk in chunks(ordered):
        rows = conn.execute(
            select(read_log.c.id, read_log.c.args).where(
                read_log.c.tenant == tenant, read_log.c.id.in_(chunk)
            )
        ).all()
        for rid, raw in rows:
            args = json.loads(raw)
            for key in TEXT_ARGS:
                if args.get(key) is not None:
                    args[key] = None
            conn.execute(
                update(read_log)
                .where(read_log.c.tenant == tenant, read_log.c.id == rid)
                .values(erased=1, args=json.dumps(args, sort_keys=True))
            )


def forget_scope(conn: Connection, scope: Scope) -> None:
    """``purge``: the reads made in this scope and the scopes under it go too."""
    backends.of(conn).lock_read_log(conn, [scope.tenant], erasing=True)
    flush_into(conn)
    ids = list(
        conn.execute(select(read_log.c.id).where(reads_sql.scope_within(read_log, scope))).scalars()
    )
    for chunk in chunks(ids):
        conn.execute(
            delete(read_items).where(
                read_items.c.tenant == scope.tenant, read_items.c.read_id.in_(chunk)
            )
        )
        conn.execute(
            delete(read_log).where(read_log.c.tenant == scope.tenant, read_log.c.id.in_(chunk))
        )
