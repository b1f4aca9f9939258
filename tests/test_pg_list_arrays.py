"""PostgreSQL: a facts read of more than ``reads.INLINE`` values of a list filter
(subjects; fact ids and predicates alike) binds each list as one array parameter
(``column = ANY(…)``), not one placeholder per value (SQLite keeps its expanding
``IN``: the same SQL as before). A LangGraph batch's read of its items (~500
subjects a statement, each in two lists) was a statement of ~1,000 placeholders,
32 kB of SQL that SQLAlchemy expanded, psycopg parsed anew (too long for its
cache) and the server parsed, per chunk. The rows are those of the same read one
subject at a time."""

from __future__ import annotations

from typing import Any

from chronomem import Memory, reads
from chronomem.model import State

from .conftest import T0, ManualClock
from .statements import counting

N = 40  # more than reads.INLINE: the expanding shape


def _subject(i: int) -> str:
    """Some subjects hold what ``SafeText`` escapes on PostgreSQL (a backslash, NUL)."""
    return f"user {i}" + ("\\x" if i % 7 == 0 else "\x00y" if i % 7 == 1 else "")


def _load(memory: Memory) -> None:
    memory.apply(
        [
            memory.assertion(_subject(i), p, f"thing {i} {p}", valid_from=T0, exact=True)
            for i in range(N)
            for p in ("likes", "visited")
        ]
    )


def _placeholders(params: Any) -> int:
    return len(params) if isinstance(params, dict) else len(params or ())


def _key(fact: Any) -> tuple[str, str, str, str]:
    return (fact.id, fact.subject, fact.predicate, fact.object)


def test_a_long_list_is_one_array_parameter(pg_url: str) -> None:
    assert N > reads.INLINE
    m = Memory(pg_url, clock=ManualClock(start=T0))
    try:
        _load(m)
        subjects = [_subject(i) for i in range(N)] + ["nobody"]
        with counting(m) as cost:
            many = m.facts(subjects=subjects, exact=True)
        (sql,) = [s for s in cost.statements if "cm_versions" in s]
        params = cost.params[cost.statements.index(sql)]
        # two lists of N + 1 values each, bound as two parameters (before: 2 (N + 1))
        assert "= ANY" in sql and "IN (" not in sql
        assert _placeholders(params) < 2 * reads.INLINE
        one_by_one = [f for s in subjects for f in m.facts(subject=s, exact=True)]
        assert sorted(map(_key, many)) == sorted(map(_key, one_by_one))
        assert len(many) == 2 * N

        # run more often than psycopg's threshold for preparing a statement (5):
        # never a server-side prepared statement (``backends.base.UNPREPARED``), each run
        # planned for its own array, as the expanded statement was
        q = reads.facts_query(
            m.scope, valid_at=2**62, known_at=None, states=frozenset(State), subject_keys=subjects
        )
        with m.backend.engine.connect() as conn:
            for _ in range(7):
                assert len(q.run(conn)) == 2 * N
            prepared = conn.exec_driver_sql(
                "SELECT count(*) FROM pg_prepared_statements WHERE strpos(statement, 'ANY') > 0"
            ).scalar()
        assert prepared == 0

    finally:
        m.close()
