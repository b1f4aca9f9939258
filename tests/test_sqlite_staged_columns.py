"""SQLite: a staged batch's columns that hold one value in every row are bound once.

A batch of more than ``sqlite.FEW_ROWS`` rows of ``cm_versions`` (a table with an
FTS5 trigger) goes through a TEMP staging table and one ``INSERT ... SELECT``
(``sqlite._staging``). A column holding one value, of one type, in every row
(``sqlite._same_positions``: the scope, the transaction time, a new version's
NULLs) is not staged: the copy binds its value once. The rows stored must be
those the plain per-row insert stores: here random batches (columns alike in
every row or not; values equal but of different types, which a TEXT column
keeps apart: ``1``, ``1.0``, ``True``) go into one store staged and into another
through ``Backend.insert_rows`` (SQLAlchemy's ``executemany``), and every column,
its stored type, the rowid order and the text index's matches are compared. And
a batch of new facts stages only the columns that vary."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from chronomem import Memory
from chronomem.backends import of
from chronomem.backends import sqlite as sq
from chronomem.backends.base import Backend
from chronomem.schema import versions

from .conftest import ManualClock
from .statements import counting
from .version_batches import column, version_rows

TEXT = st.text(alphabet=st.sampled_from(["a", "b", " ", "'", "é", "\n"]), max_size=6)
# equal values of different types: a TEXT column stores 1 as '1', 1.0 as '1.0'
ODD = st.sampled_from([None, 1, 1.0, True, "1", "a b"])
EQUAL = [1, 1.0, True]
COLUMNS = [c.name for c in versions.columns]


def _equal(n: int) -> st.SearchStrategy[list[Any]]:
    """``n`` values equal to ``True`` (``1``, ``1.0``, ``True``), a ``1.0`` among them,
    the first and the last ``True``."""
    mid = st.lists(st.sampled_from(EQUAL), min_size=n - 3, max_size=n - 3)
    return mid.map(lambda m: [True, 1.0, *m, True])


@st.composite
def batches(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(min_value=sq.FEW_ROWS + 1, max_value=sq.FEW_ROWS + 40))
    cols = {
        "user_id": column(st.sampled_from(["", "u"]), n),
        "subject": column(TEXT, n),
        "predicate": column(st.sampled_from(["likes", "lives_in"]), n),
        "object": column(TEXT, n),
        "valid_from": column(st.integers(min_value=0, max_value=2**61), n),
        "valid_to": column(st.none() | st.integers(min_value=1, max_value=2**40), n),
        "recorded_at": column(st.integers(min_value=0, max_value=2**62), n),
        "superseded_at": column(st.none() | st.integers(0, 2**62), n),
        # or values equal in every row, not all of one type (staged, not bound once),
        # the first and the last of one type
        "extractor": column(ODD, n) | _equal(n),
        "metadata": column(st.sampled_from(["{}", '{"k": [1, 2]}']), n),
        "index_text": column(st.none() | TEXT, n),
    }
    drawn = {c: draw(s) for c, s in cols.items()}
    return version_rows(drawn, n, lambda i: f"{i:04d}")


def _stored(m: Memory) -> tuple[list[Any], dict[str, list[Any]]]:
    typed = ", ".join(f"{c}, typeof({c})" for c in COLUMNS)
    with m.backend.engine.connect() as conn:
        rows = conn.execute(text(f"SELECT rowid, {typed} FROM cm_versions ORDER BY rowid")).all()
        matches = {
            term: conn.execute(
                text(
                    "SELECT rowid FROM cm_versions_fts WHERE cm_versions_fts MATCH :t ORDER BY rowid"
                ),
                {"t": term},
            ).all()
            for term in ("a", "b", "likes", "lives", "1", "0")
        }
    return [tuple(r) for r in rows], {k: [tuple(r) for r in v] for k, v in matches.items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_a_staged_batch_stores_the_per_row_inserts_rows(rows: list[dict[str, Any]]) -> None:
    staged, plain = Memory(), Memory()
    try:
        with staged.backend.write() as conn:
            of(conn).insert_rows(conn, versions, rows)
        with plain.backend.write() as conn:
            Backend.insert_rows(conn, versions, rows)
        assert _stored(staged) == _stored(plain)
    finally:
        staged.close()
        plain.close()


def test_a_batch_of_new_facts_stages_only_what_varies() -> None:
    """100 new facts of one predicate from the transaction time: the staging insert
    binds the 9 of a version's 23 columns that vary per row; the scope's columns,
    the predicate, the times and the NULLs go once, to the copy."""
    with Memory(clock=ManualClock()) as m:
        ops = [m.assertion(f"s{i}", "likes", f"o{i}") for i in range(100)]
        with counting(m) as seen:
            m.apply(ops)
        staged = [s for s in seen.statements if s.startswith("INSERT INTO temp.cm_stage_")]
        assert staged == [
            "INSERT INTO temp.cm_stage_cm_versions (id, fact_id, slot, subject, subject_key, "
            "subject_hash, object, object_key, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ]
        assert len(m.facts(predicate="likes")) == 100
