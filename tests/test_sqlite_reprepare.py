"""A statement binding a predicate is prepared once on SQLite, whatever value it is
run with: no partial index's ``WHERE`` may compare a column with a literal that a
statement's ``column = ?`` could be checked against (SQLite then re-prepares the
statement at each new value; ``Backend.partial_index_term``). Preparing is seen by
the authorizer callback, which SQLite calls while it compiles a statement only."""

from __future__ import annotations

from pathlib import Path

from chronomem import Memory
from chronomem.schema import INSTANT_ORDERS

RECORD_PREDICATES = sorted({p for p, _ in INSTANT_ORDERS.values()})
STATEMENTS = [
    "SELECT id FROM cm_versions WHERE tenant = ? AND predicate = ? AND superseded_at IS NULL",
    "SELECT count(*) FROM cm_versions WHERE tenant = ? AND predicate = ?",
]


def test_a_statement_naming_a_predicate_is_prepared_once(tmp_path: Path) -> None:
    with Memory(f"sqlite:///{tmp_path / 'm.db'}") as m:
        m.remember("ann", "likes", "tea")
        with m.backend.engine.connect() as conn:
            raw = conn.connection.driver_connection
            compiled: list[int] = []

            def seen(*_: object) -> int:
                compiled.append(1)
                return 0  # SQLITE_OK

            for sql in STATEMENTS:
                raw.set_authorizer(seen)  # expires every prepared statement: prepare again
                raw.execute(sql, ("default", "likes")).fetchall()  # prepared, then cached
                assert compiled, "the authorizer sees a statement being prepared"
                compiled.clear()
                try:
                    for value in ["likes", "lives_in", *RECORD_PREDICATES, "likes"]:
                        raw.execute(sql, ("default", value)).fetchall()
                finally:
                    raw.set_authorizer(None)
                assert compiled == [], f"re-prepared {len(compiled)} times: {sql}"
