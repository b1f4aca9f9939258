"""PostgreSQL: a batch's varying columns go as one binary array each, not as JSON rows.

``postgres.insert_rows`` sends each text and integer column that varies between
the rows of a batch as one array parameter in binary (``_array_insert``: zipped by
``unnest``, no JSON for the client to encode nor for the server to parse); a
batch holding a value the arrays cannot carry as the JSON did (a float, a bool in
an integer column, an integer out of range) goes as JSON, as before. The rows
stored must be exactly those the JSON form stored: random batches (text with
backslashes, NULs, quotes and non-ASCII; NULL or not; columns alike in every row
or not) go into ``cm_versions`` both ways and every stored column (the generated
text search column too) is compared; stores written by real batches (closings,
cut versions, odd text, episodes) both ways, on PostgreSQL 15 and on pgvector,
hold the same rows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.dialects.postgresql.psycopg import dialect as psycopg_dialect

from chronomem import Memory
from chronomem.backends import pgpipeline
from chronomem.backends import postgres as pg
from chronomem.schema import episodes, versions

from . import test_pg_same_columns as same_columns
from .conftest import T0
from .statements import counting
from .test_pg_binary_arrays import elements
from .test_pg_same_columns import ODD, _insert, _rows_of, _stored, batches, written_two_ways

store = same_columns.store  # a PostgreSQL store of this module's own (its fixture)

_runs = iter(range(10**6))


def test_rows_stored_are_those_the_json_form_stores(
    store: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random batches stored both ways hold the same rows; and the comparison
    compared the arrays, not the JSON twice: most random batches went as arrays
    (counted here, in the test that drew them, whatever worker runs it)."""
    assert pgpipeline.supported()
    sent_as_arrays: list[bool] = []

    @settings(
        max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(rows=batches(), queued=st.booleans())
    def compare(rows: list[dict[str, Any]], queued: bool) -> None:
        run = next(_runs)
        new, old = f"n{run}-", f"o{run}-"
        with monkeypatch.context() as patch:
            arrays = pg._column_arrays
            used: list[bool] = []

            def noted(*args: Any) -> Any:
                out = arrays(*args)
                used.append(out is not None)
                return out

            patch.setattr(pg, "_column_arrays", noted)
            _insert(store, new, rows, [1.0] * len(rows), queued)
            sent_as_arrays.append(any(used))
            patch.setattr(pg, "ARRAYS", False)
            _insert(store, old, rows, [1.0] * len(rows), queued)
        stored_new, stored_old = _stored(store, new), _stored(store, old)
        assert len(stored_new) == len(rows)
        assert stored_new == stored_old

    compare()
    assert sent_as_arrays
    assert sum(sent_as_arrays) >= len(sent_as_arrays) // 2, sent_as_arrays


def test_a_batch_of_new_versions_sends_its_varying_columns_as_arrays(store: Memory) -> None:
    m = store
    with counting(m) as cost:
        m.apply([m.assertion(f"person {i} a\\b", "visited", f"town {i}") for i in range(50)])
    sent = {
        sql.split()[2]: (sql, params)
        for sql, params in zip(cost.statements, cost.params, strict=True)
        if sql.startswith("INSERT INTO")
    }
    sql, params = sent["cm_versions"]
    assert "rows" not in params and "json_populate_recordset" not in sql
    arrays = {k[2:]: elements(v) for k, v in params.items() if k.startswith("a_")}
    assert set(arrays) == {
        "id", "fact_id", "slot", "subject", "subject_key", "subject_hash", "object",
        "object_key", "content_hash",
    }  # fmt: skip
    assert all(len(v) == 50 for v in arrays.values())
    assert "person 3 a\\\\b" in arrays["subject"]  # SafeText's escaping, as in the JSON
    # the vectors too: their ids and blobs as arrays, the rest once
    sql, params = sent["cm_vectors"]
    assert "rows" not in params and "json_populate_recordset" not in sql
    blobs = {k[2:]: elements(v) for k, v in params.items() if k.startswith("a_")}
    assert set(blobs) == {"item_id", "vec"}
    assert blobs["item_id"] == elements(sent["cm_versions"][1]["a_id"])
    assert all(len(v) == 4 * m.embedder.dim for v in blobs["vec"])
    got = {f.subject for f in m.facts(predicate="visited")}
    assert {f"person {i} a\\b" for i in range(50)} <= got


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("valid_from", [1, True]),  # a bool is no integer here
        ("valid_from", [1, 2**63]),  # out of bigint's range
        ("valid_from", [1, 2.0]),
        ("subject", ["a", b"b"]),
        ("subject", [None, None]),  # all NULL (sent once, as alike, in a real batch)
    ],
)
def test_values_the_arrays_cannot_carry_go_as_json(column: str, values: list[Any]) -> None:
    rows = [{"subject": "s", "valid_from": 1} | {column: v} for v in values]
    dialect = psycopg_dialect()
    procs = {c: versions.c[c].type.bind_processor(dialect) for c in ("subject", "valid_from")}
    assert pg._column_arrays(versions, ["subject", "valid_from"], rows, procs) is None
    ok = [{"subject": "s\x00", "valid_from": 1}, {"subject": "t", "valid_from": -(2**63)}]
    kinds, arrays = pg._column_arrays(versions, ["subject", "valid_from"], ok, procs)  # type: ignore[misc]
    assert kinds == ("text", "bigint")
    assert arrays == {"subject": ["s\\0", "t"], "valid_from": [1, -(2**63)]}


def _episode_items() -> list[dict[str, Any]]:
    return [
        {
            "text": f"said {ODD[i % len(ODD)]} {i}",
            "role": "user" if i % 2 else None,
            "occurred_at": T0 + timedelta(minutes=i) if i % 3 else None,
            "metadata": {"i": i, "odd": ODD[i % len(ODD)]},
        }
        for i in range(40)
    ]


def _episodes(m: Memory) -> list[tuple[Any, ...]]:
    kept = ", ".join(f"e.{c.name}" for c in episodes.c if c.name != "id")
    with m.backend.engine.connect() as conn:
        got = conn.exec_driver_sql(f"SELECT {kept}, e.tsv::text FROM cm_episodes e").all()
    return sorted((tuple(r) for r in got), key=repr)


@pytest.mark.parametrize("server", ["postgres", "pgvector"])
def test_a_store_written_in_batches_holds_what_the_json_form_wrote(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def json_form(patch: pytest.MonkeyPatch) -> None:
        patch.setattr(pg, "ARRAYS", False)

    def read(m: Memory) -> tuple[Any, Any]:
        m.add_episodes(_episode_items())
        return _rows_of(m), _episodes(m)

    new, old = written_two_ways(server, monkeypatch, json_form, read)
    assert len(new[0]) > 360 and len(new[1]) == 40
    assert new == old
