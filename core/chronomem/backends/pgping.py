"""The pool's liveness check of a PostgreSQL connection, only after it sat idle.

SQLAlchemy's ``pool_pre_ping`` sends an empty query at every checkout: one more
round trip per search and per write, whatever the connection went through. A
connection handed back a moment ago is as alive as it was then, so here it is
pinged only when it comes out of the pool after more than ``IDLE_S`` seconds
in it (the way a connection pooler skips its check of a connection released
just before). A ping that finds it dead makes the pool replace it
(``DisconnectionError``: the checkout is retried on a new connection), as the
pre-ping did. The cost: a server that restarts while a connection sat idle for
less than ``IDLE_S`` is found out by the next statement instead, which fails
(the pool then discards every connection opened before the failure, so one call
fails, not all of them)."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Engine, event, exc

IDLE_S = 5.0
_SINCE = "chronomem.idle_since"  # connection record's info: when it went back to the pool


def install(engine: Engine) -> None:
    """Ping a connection at checkout when it was idle for more than ``IDLE_S``
    (the engine is created without ``pool_pre_ping``)."""
    dialect = engine.dialect

    @event.listens_for(engine, "connect")
    def fresh(dbapi_conn: Any, record: Any) -> None:
        record.info.pop(_SINCE, None)  # just opened: alive

    @event.listens_for(engine, "checkin")
    def back(dbapi_conn: Any, record: Any) -> None:
        record.info[_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def out(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        since = record.info.get(_SINCE)
        if since is None or time.monotonic() - since <= IDLE_S:
            return
        try:
            dialect.do_ping(dbapi_conn)
        except dialect.loaded_dbapi.Error as e:
            if dialect.is_disconnect(e, dbapi_conn, None):
                raise exc.DisconnectionError(str(e)) from e
            raise
