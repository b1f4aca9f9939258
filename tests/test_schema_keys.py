"""Citus readiness of the schema (issue #19): every key leads with ``tenant``
(the I1 exclusion constraint includes it: see its test).

Citus requires every primary key, unique constraint and exclusion constraint of a
distributed table to include the distribution column; leading with it also makes
every b-tree key a per-tenant key on one machine. Checked twice: in the SQLAlchemy
metadata (``chronomem.schema``), and in the PostgreSQL catalog of a freshly
migrated store (which also sees the indexes and constraints the migrations add
in SQL: the I1 exclusion constraint, the text indexes, pgvector's HNSW index)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlalchemy import PrimaryKeyConstraint, UniqueConstraint, create_engine, text

from chronomem import Memory
from chronomem.schema import metadata

# cm_meta is the store-wide key/value table (schema version, embedder): no tenant,
# a Citus reference table (docs/scaling.md).
REFERENCE = {"cm_meta"}
# Index methods whose keys cannot lead with a scalar tenant column: GIN over the
# tsvector, HNSW over the embedding. On Citus they are built per shard, so each
# covers the tenants of its shard only; the queries using them pin the tenant
# in the same statement (tests/test_tenant_predicate.py).
NON_BTREE_OK = {"gin", "hnsw"}


def _tables() -> list[Any]:
    return [t for t in metadata.sorted_tables if t.name not in REFERENCE]


def test_every_table_but_the_reference_table_has_a_required_tenant_column() -> None:
    assert {t.name for t in metadata.sorted_tables} - {t.name for t in _tables()} == REFERENCE
    for t in _tables():
        assert "tenant" in t.c, t.name
        assert not t.c.tenant.nullable, t.name


def test_metadata_keys_and_indexes_lead_with_tenant() -> None:
    seen = 0
    for t in _tables():
        for con in t.constraints:
            if isinstance(con, PrimaryKeyConstraint | UniqueConstraint):
                cols = [c.name for c in con.columns]
                assert cols and cols[0] == "tenant", (t.name, type(con).__name__, cols)
                seen += 1
        for ix in t.indexes:
            cols = [c.name for c in ix.columns]
            assert cols and cols[0] == "tenant", (t.name, ix.name, cols)
            seen += 1
    assert seen >= len(_tables())  # at least every table's primary key


CATALOG = text(
    """
    SELECT c.relname AS tbl, i.relname AS idx, am.amname AS method,
           ix.indisunique AS uniq, ix.indisprimary AS pk, ix.indisexclusion AS excl,
           a.attname AS first_col
    FROM pg_index ix
    JOIN pg_class i ON i.oid = ix.indexrelid
    JOIN pg_class c ON c.oid = ix.indrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_am am ON am.oid = i.relam
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ix.indkey[0]
    WHERE n.nspname = current_schema() AND c.relname LIKE 'cm\\_%'
    ORDER BY c.relname, i.relname
    """
)

CONSTRAINTS = text(
    """
    SELECT c.relname AS tbl, k.conname AS name, k.contype AS kind,
           pg_get_constraintdef(k.oid) AS def
    FROM pg_constraint k
    JOIN pg_class c ON c.oid = k.conrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relname LIKE 'cm\\_%' AND k.contype IN ('p', 'u', 'x')
    """
)


@pytest.fixture(params=["postgres", "pgvector"])
def migrated(request: pytest.FixtureRequest) -> tuple[list[Any], list[Any], bool, bool]:
    url = request.getfixturevalue("pg_url" if request.param == "postgres" else "pgvector_url")
    with Memory(url) as m:  # migrates (and, with pgvector, adds the HNSW index)
        m.remember("alice", "lives_in", "Paris")
        pgvector = bool(m._engine.retrieval.pgvector)
    eng = create_engine(url)
    try:
        with eng.connect() as conn:
            indexes = list(conn.execute(CATALOG).mappings())
            constraints = list(conn.execute(CONSTRAINTS).mappings())
            gist = bool(
                conn.execute(
                    text("SELECT 1 FROM pg_extension WHERE extname = 'btree_gist'")
                ).scalar()
            )
    finally:
        eng.dispose()
    return indexes, constraints, pgvector, gist


def test_catalog_keys_lead_with_tenant(migrated: tuple[list[Any], list[Any], bool, bool]) -> None:
    indexes, constraints, pgvector, _ = migrated
    tables = {r["tbl"] for r in indexes}
    assert tables >= {t.name for t in metadata.sorted_tables}
    for r in indexes:
        if r["tbl"] in REFERENCE:
            continue
        if r["method"] in NON_BTREE_OK:
            assert not r["uniq"], r
            continue
        if r["excl"] and r["method"] == "gist":
            continue  # the I1 constraint: checked on its definition below
        # every unique, primary, exclusion and plain b-tree / gist index leads with tenant
        assert r["first_col"] == "tenant", dict(r)
    assert sum(1 for r in indexes if r["pk"] and r["tbl"] not in REFERENCE) == len(_tables())
    methods = {r["idx"]: r["method"] for r in indexes}
    assert methods.get("cm_versions_tsv") == "gin"
    if pgvector:
        assert methods.get("cm_vectors_hnsw") == "hnsw"
    for k in constraints:
        if k["tbl"] in REFERENCE or k["kind"] == "x":
            continue
        assert re.match(r"(PRIMARY KEY|UNIQUE) \(tenant\b", k["def"]), dict(k)


def test_the_i1_exclusion_constraint_includes_the_distribution_column(
    migrated: tuple[list[Any], list[Any], bool, bool],
) -> None:
    """Citus accepts an exclusion constraint on a distributed table only when it
    includes the distribution column with ``=``: I1's does. It does not lead with
    it (schema v7): a GiST tree is not ordered by its first column, and one whose
    first column holds a tenant's single value chooses its pages badly; it leads
    with a hash of the slot, then compares tenant and slot themselves."""
    _, constraints, _, gist = migrated
    excl = [k for k in constraints if k["kind"] == "x"]
    for k in excl:
        assert k["def"].startswith("EXCLUDE USING gist (hashtextextended("), k["def"]
        elements = k["def"].split("(", 1)[1]
        assert re.search(r"(^|, )tenant WITH =", elements), k["def"]
        assert re.search(r", slot WITH =", elements), k["def"]
        assert "int8range(valid_from, valid_to) WITH &&" in elements, k["def"]
    # without btree_gist the store keeps I1 by slot locks alone (chronomem.schema)
    assert {k["name"] for k in excl} == ({"cm_versions_i1"} if gist else set())
