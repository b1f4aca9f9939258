"""PostgreSQL: array parameters built in binary by ``pgarrays`` are the values psycopg sent.

A write's array parameters (its slots, lock keys, closings, and one array a
varying column of its version insert) go as ``pgarrays.Array``: PostgreSQL's
binary array format, built by the client in a few C-level passes instead of
psycopg's element-by-element dump (in text, quoted, for SQLAlchemy's ``%s``).
The server must read exactly what it read from psycopg's list: random lists of
text (NULL or not, non-ASCII, quotes, braces, backslashes, NULs), of integers
(NULL or not, at and beyond each type's range) and of bytes go through one
``SELECT`` both ways, cast as the write statements cast them, and come back
equal; a text array's bytes are psycopg's own binary dump; the values that
cannot go so (a NUL in a text, an integer out of range, a NULL integer) stay
lists, and psycopg's error for a NUL is raised as before."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, create_engine
from sqlalchemy.exc import DataError

from chronomem.backends import pgarrays

from .conftest import PG_URL, require_pg

TEXT = st.text(
    alphabet=st.sampled_from(["a", "b", " ", "\\", '"', "'", "{", "}", ",", "é", "✓", "\n", "😀"])
)
INT8 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
INT4 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
_CAST = {pgarrays.TEXT: "text[]", pgarrays.INT8: "bigint[]", pgarrays.INT4: "integer[]"}


def elements(value: Any) -> list[Any]:
    """An ``Array``'s elements decoded (text, integers or bytes); a list as it is."""
    if not isinstance(value, pgarrays.Array):
        return list(value)
    data = value.data
    ndim, _, elem = struct.unpack_from(">iii", data)
    if ndim == 0:
        return []
    n, _ = struct.unpack_from(">ii", data, 12)
    at, out = 20, []
    for _ in range(n):
        (size,) = struct.unpack_from(">i", data, at)
        at += 4
        if size < 0:
            out.append(None)
            continue
        raw = data[at : at + size]
        at += size
        if elem == pgarrays.TEXT:
            out.append(raw.decode())
        elif elem == pgarrays.BYTEA:
            out.append(raw)
        else:
            out.append(int.from_bytes(raw, "big", signed=True))
    return out


@pytest.fixture(scope="module")
def conn() -> Iterator[Connection]:
    require_pg()
    engine = create_engine(PG_URL)
    try:
        with engine.connect() as c:
            yield c
    finally:
        engine.dispose()


def _read(conn: Connection, value: Any, cast: str) -> Any:
    with conn.begin_nested():
        return conn.exec_driver_sql(f"SELECT CAST(%(a)s AS {cast})", {"a": value}).scalar()


def _both(conn: Connection, values: list[Any], made: Any, cast: str) -> None:
    assert _read(conn, made, cast) == _read(conn, values, cast) == (values or [])
    assert elements(made) == values


SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(values=st.lists(st.none() | TEXT, max_size=12))
def test_text_arrays_read_as_psycopgs(conn: Connection, values: list[str | None]) -> None:
    made = pgarrays.texts(conn, values)
    assert isinstance(made, pgarrays.Array) == bool(values)
    _both(conn, values, made, "text[]")
    if values and None not in values:  # psycopg's own binary dump, byte for byte
        raw: Any = conn.connection.driver_connection
        dumper = psycopg.adapt.Transformer(raw).get_dumper(values, psycopg.adapt.PyFormat.BINARY)
        assert made.data == bytes(dumper.dump(values))


@SETTINGS
@given(
    values=st.lists(st.none() | INT8 | st.sampled_from([2**63, -(2**63) - 1]), max_size=8),
    four=st.booleans(),
)
def test_integer_arrays_read_as_psycopgs(
    conn: Connection, values: list[int | None], four: bool
) -> None:
    elem = pgarrays.INT4 if four else pgarrays.INT8
    low, high = (-(2**31), 2**31 - 1) if four else (-(2**63), 2**63 - 1)
    made = pgarrays.integers(conn, values, elem)
    fits = bool(values) and None not in values and all(low <= v <= high for v in values)  # type: ignore[operator]
    assert isinstance(made, pgarrays.Array) == fits
    if not fits:
        assert made is values  # psycopg's, as before
        return
    _both(conn, values, made, _CAST[elem])


@SETTINGS
@given(values=st.lists(st.binary(max_size=20), max_size=8))
def test_bytea_arrays_read_as_psycopgs(conn: Connection, values: list[bytes]) -> None:
    made = pgarrays.blobs(conn, values)
    assert isinstance(made, pgarrays.Array) == bool(values)
    _both(conn, values, made, "bytea[]")


def test_a_nul_in_a_text_is_psycopgs_error_as_before(conn: Connection) -> None:
    values = ["a", "b\x00c"]
    assert pgarrays.texts(conn, values) is values
    with pytest.raises(DataError, match="NUL"):
        _read(conn, pgarrays.texts(conn, values), "text[]")
