"""PostgreSQL: a batch's columns that hold one value in every row go once.

``postgres.insert_rows`` sends a column holding one value (of one type) in every
row of a batch (``_same_columns``: the scope, the transaction time, a new
version's NULLs, the vectors' embedder) as one JSON object beside the rows, read
by ``json_populate_record``, instead of in each row's object. The rows stored
must be exactly those the per-row form stored: here random batches (text with
backslashes, NULs, quotes and non-ASCII; NULL or not; columns alike in every row
or not) go into ``cm_versions`` and ``cm_vectors`` both ways, queued in a
writer's transaction and run at once, and every stored column (the generated
text search column too) is compared; stores written by real batches (closings,
cut versions, odd text) both ways, on PostgreSQL 15 and on pgvector (whose
embedding goes inside the vector insert), hold the same rows. And the JSON of a
batch of new versions carries only the columns that vary."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem.backends import of, pgpipeline
from chronomem.backends import postgres as pg
from chronomem.schema import vectors, versions

from .conftest import T0, ManualClock
from .statements import counting
from .version_batches import column, version_rows

TEXT = st.text(alphabet=st.sampled_from(["a", "b", " ", "\\", "\x00", '"', "'", "é", "✓", "\n"]))
MAYBE_TEXT = st.none() | TEXT
SCOPE = st.text(alphabet=st.sampled_from(["u", "1", "é", '"']))  # scope ids: no NUL
MAYBE_INT = st.none() | st.integers(min_value=0, max_value=2**62)


@pytest.fixture(scope="module")
def store(request: pytest.FixtureRequest) -> Iterator[Memory]:
    from .conftest import drop_pg_schema, make_pg_schema, require_pg

    require_pg()
    url, schema = make_pg_schema()
    m = Memory(url)
    m.remember("someone", "likes", "tea")  # the tenant's clock row
    try:
        yield m
    finally:
        m.close()
        drop_pg_schema(schema)


@st.composite
def batches(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(min_value=1, max_value=6))
    cols = {
        "user_id": column(SCOPE, n),
        "subject": column(TEXT, n),
        "predicate": column(TEXT, n),
        "object": column(TEXT, n),
        "valid_from": column(st.integers(min_value=0, max_value=2**61), n),
        "valid_to": column(st.none() | st.integers(min_value=1, max_value=2**40), n),
        "recorded_at": column(st.integers(min_value=0, max_value=2**62), n),
        "superseded_at": column(MAYBE_INT, n),
        "extractor": column(MAYBE_TEXT, n),
        "metadata": column(st.sampled_from(["{}", '{"a": "\\\\u0000"}', '{"k": [1, 2]}']), n),
        "index_text": column(MAYBE_TEXT, n),
    }
    drawn = {c: draw(s) for c, s in cols.items()}
    return version_rows(drawn, n)


def _vector_rows(rows: list[dict[str, Any]], norms: list[float]) -> list[dict[str, Any]]:
    return [
        {
            "tenant": "default",
            "kind": "v",
            "item_id": r["id"],
            "embedder": "e",
            "dim": 2,
            "vec": bytes([i, 7]),
            "norm": norm,
        }
        for i, (r, norm) in enumerate(zip(rows, norms, strict=True))
    ]


def _insert(
    m: Memory, prefix: str, rows: list[dict[str, Any]], norms: list[float], queued: bool
) -> None:
    mine = [{**r, "id": prefix + r["id"], "slot": prefix + r["slot"]} for r in rows]
    if queued:  # as the writer's flush: queued, sent with the COMMIT
        with m.backend.write() as conn, of(conn).deferring(conn):
            of(conn).insert_rows(conn, versions, mine)
            of(conn).insert_rows(conn, vectors, _vector_rows(mine, norms))
    else:
        with m.backend.engine.begin() as conn:
            of(conn).insert_rows(conn, versions, mine)
            of(conn).insert_rows(conn, vectors, _vector_rows(mine, norms))


def _stored(m: Memory, prefix: str) -> list[tuple[Any, ...]]:
    """Every stored column of the rows under ``prefix`` (their id and slot without it)."""
    others = ", ".join(f"v.{c.name}" for c in versions.c if c.name not in ("id", "slot"))
    with m.backend.engine.connect() as conn:
        got = conn.exec_driver_sql(
            f"SELECT substr(v.id, %(n)s), substr(v.slot, %(n)s), {others}, v.tsv::text, "
            "x.kind, x.embedder, x.dim, x.vec, x.norm FROM cm_versions v "
            "JOIN cm_vectors x ON x.tenant = v.tenant AND x.item_id = v.id "
            "WHERE starts_with(v.id, %(p)s) ORDER BY v.id",
            {"n": len(prefix) + 1, "p": prefix},
        ).all()
    return [tuple(r) for r in got]


_runs = iter(range(10**6))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=batches(),
    norm=st.sampled_from([1.0, 0.5]),
    mixed=st.booleans(),
    queued=st.booleans(),
)
def test_rows_stored_are_those_the_per_row_form_stores(
    store: Memory,
    monkeypatch: pytest.MonkeyPatch,
    rows: list[dict[str, Any]],
    norm: float,
    mixed: bool,
    queued: bool,
) -> None:
    assert pgpipeline.supported()
    norms = [norm if not mixed or i % 2 else 1 for i in range(len(rows))]  # 1 (int) vs 1.0
    run = next(_runs)
    new, old = f"n{run}-", f"o{run}-"
    _insert(store, new, rows, norms, queued)
    with monkeypatch.context() as patch:
        patch.setattr(pg, "_same_columns", lambda rows, cols: ())
        _insert(store, old, rows, norms, queued)
    stored_new, stored_old = _stored(store, new), _stored(store, old)
    assert len(stored_new) == len(rows)
    assert stored_new == stored_old


def test_a_batch_of_new_versions_sends_its_alike_columns_once(
    store: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the JSON form (the versions' varying columns go as arrays now, but a batch
    holding a value the arrays cannot carry goes so: ``test_pg_array_inserts``)."""
    monkeypatch.setattr(pg, "ARRAYS", False)
    m = store
    with counting(m) as cost:
        m.apply([m.assertion(f"person {i}", "visited", f"town {i}") for i in range(50)])
    sent = {
        sql.split()[2]: params
        for sql, params in zip(cost.statements, cost.params, strict=True)
        if sql.startswith("INSERT INTO")
    }
    rows = json.loads(sent["cm_versions"]["rows"])
    assert len(rows) == 50
    # what varies between new versions: ids, slot, subject, object and their keys,
    # the valid-from instant when given (not here: the transaction time, alike)
    assert set(rows[0]) == {
        "id", "fact_id", "slot", "subject", "subject_key", "subject_hash", "object",
        "object_key", "content_hash",
    }  # fmt: skip
    same = json.loads(sent["cm_versions"]["same"])
    assert same["recorded_at"] == same["valid_from"] and same["superseded_at"] is None
    assert set(json.loads(sent["cm_vectors"]["rows"])[0]) == {"item_id"}


ODD = ["plain", "back\\slash", "nul\x00byte", 'quote " and \\u0000', "ünïcode ✓"]


def _batches(m: Memory) -> None:
    """Writes of new facts, closings and cut versions, odd text, metadata, an
    extractor on some: what a store's rows look like after real batches."""
    for round_ in range(3):
        m.apply(
            [
                m.assertion(
                    f"person {i % 40} {ODD[i % len(ODD)]}",
                    "lives_in" if i % 3 else "likes",
                    f"place {i} {ODD[(i + round_) % len(ODD)]}",
                    valid_from=T0 + timedelta(days=round_, minutes=i),
                    metadata={"round": round_} if i % 4 == 0 else None,
                    extractor="x\\y" if i % 5 == 0 else None,
                )
                for i in range(120)
            ]
        )


def _rows_of(m: Memory) -> list[tuple[Any, ...]]:
    """Every stored version with its vector, but the ids (random per store)."""
    skip = ("id", "fact_id", "superseded_by")
    kept = ", ".join(f"v.{c.name}" for c in versions.c if c.name not in skip)
    with m.backend.engine.connect() as conn:
        pgv = conn.exec_driver_sql(
            "SELECT count(*) FROM information_schema.columns "
            "WHERE table_name = 'cm_vectors' AND column_name = 'embedding' "
            "AND table_schema = current_schema()"
        ).scalar()
        embedding = ", x.embedding::text" if pgv else ""
        got = conn.exec_driver_sql(
            f"SELECT {kept}, v.tsv::text, x.kind, x.embedder, x.dim, x.vec, x.norm{embedding} "
            "FROM cm_versions v JOIN cm_vectors x ON x.tenant = v.tenant AND x.item_id = v.id"
        ).all()
    return sorted((tuple(r) for r in got), key=repr)


def written_two_ways(
    server: str,
    monkeypatch: pytest.MonkeyPatch,
    other: Callable[[pytest.MonkeyPatch], None],
    read: Callable[[Memory], Any],
) -> tuple[Any, Any]:
    """What ``read`` finds in two stores written by real batches (``_batches``) on
    ``server`` (PostgreSQL 15 or pgvector): one by the backend as it is, one with
    ``other`` patched in (an older form of its inserts); each in a fresh schema."""
    from .conftest import (
        PG_URL,
        PGVECTOR_URL,
        REQUIRE_PGVECTOR,
        drop_pg_schema,
        make_pg_schema,
        require_pg,
    )

    base = PG_URL if server == "postgres" else PGVECTOR_URL
    if server == "postgres":
        require_pg()
    else:
        require_pg(PGVECTOR_URL, REQUIRE_PGVECTOR)
    stored = []
    for older in (False, True):
        url, schema = make_pg_schema(base)
        try:
            with monkeypatch.context() as patch:
                if older:
                    other(patch)
                m = Memory(url, clock=ManualClock(start=T0 + timedelta(days=30)))
                try:
                    _batches(m)
                    stored.append(read(m))
                finally:
                    m.close()
        finally:
            drop_pg_schema(schema, base)
    return stored[0], stored[1]


@pytest.mark.parametrize("server", ["postgres", "pgvector"])
def test_a_store_written_in_batches_holds_what_the_per_row_form_wrote(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def per_row(patch: pytest.MonkeyPatch) -> None:
        patch.setattr(pg, "_same_columns", lambda rows, cols: ())

    new, old = written_two_ways(server, monkeypatch, per_row, _rows_of)
    assert len(new) > 360
    assert new == old
