"""Array parameters for PostgreSQL, built in PostgreSQL's binary array format by
the caller and handed to psycopg as they are (``Array``).

psycopg dumps a Python list element by element in Python: in binary for a
``%(…)b`` placeholder, in text for ``%(…)s`` (SQLAlchemy's), where each element is
also quoted. A write's arrays (a batch's 1,000 slots, its lock keys, one array a
varying column of its version insert) were a tenth of the client's work on a
batch, on its way to the server. Built here in a few C-level passes (an encode
and a length per element, one join), they are the same values: the server reads
them as it read psycopg's, by the element type they are sent with, and the
statement's own cast (``::text[]``, ``::bigint[]``) makes of them what it made
of psycopg's. Where they cannot go so (a NUL in a text, which psycopg refuses with
its own error; an integer out of the element type's range; a connection whose
encoding is not UTF-8), the list goes to psycopg as before."""

from __future__ import annotations

import functools
import itertools
import struct
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

# element type OIDs, and the array types holding them
TEXT, INT8, INT4, BYTEA, FLOAT4 = 25, 20, 23, 17, 700
_ARRAY_OF = {TEXT: 1009, INT8: 1016, INT4: 1007, BYTEA: 1001, FLOAT4: 1021}
_INTS = {INT8: (">i8", 8, -(2**63), 2**63 - 1), INT4: (">i4", 4, -(2**31), 2**31 - 1)}

_HEAD = struct.Struct(">iiiii").pack  # dimensions, has NULLs, element type, length, lower bound
_LEN = struct.Struct(">i").pack
_NULL = _LEN(-1)  # a NULL element's length
_READY = "chronomem.arrays"  # the DBAPI connection's info: the dumper is registered


class Array:
    """A one-dimensional array parameter in PostgreSQL's binary array format: its
    array type's OID and its bytes (header, then each element's length and bytes)."""

    __slots__ = ("data", "oid")

    def __init__(self, oid: int, data: bytes):
        self.oid, self.data = oid, data


@functools.cache
def _dumper() -> type:
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class ArrayDumper(Dumper):
        """Sends an ``Array``'s bytes in binary, typed as its array type."""

        format = Format.BINARY

        def get_key(self, obj: Any, format: Any) -> Any:
            return (self.cls, obj.oid)

        def upgrade(self, obj: Any, format: Any) -> Any:
            dumper = type(self)(self.cls, None)
            dumper.oid = obj.oid
            return dumper

        def dump(self, obj: Any) -> bytes:
            return obj.data

    return ArrayDumper


def ready(conn: Connection) -> bool:
    """Whether ``conn``'s driver connection takes ``Array`` parameters (psycopg's
    connection, its dumper registered on first use, its client encoding UTF-8)."""
    raw: Any = conn.connection.driver_connection
    info = conn.connection.info
    if _READY not in info:
        adapters = getattr(raw, "adapters", None)
        if adapters is None:  # not psycopg
            info[_READY] = False
            return False
        adapters.register_dumper(Array, _dumper())
        info[_READY] = True
    return bool(info[_READY]) and raw.info.encoding == "utf-8"


def _joined(elements: Sequence[bytes | None], nulls: bool) -> bytes:
    """Each element's length and bytes, in order (-1 and nothing for a NULL)."""
    if not nulls:
        return b"".join(
            itertools.chain.from_iterable(zip(map(_LEN, map(len, elements)), elements, strict=True))  # type: ignore[arg-type]
        )
    return b"".join(
        itertools.chain.from_iterable(
            (_NULL,) if e is None else (_LEN(len(e)), e) for e in elements
        )
    )


def texts(conn: Connection, values: list[Any]) -> Any:
    """``values`` (each a ``str`` or None) as a ``text[]`` parameter; the list as it
    is where the array cannot go so (see the module's docstring), or is empty."""
    if not values or not ready(conn):
        return values
    nulls = None in values
    present = [v for v in values if v is not None] if nulls else values
    if "\x00" in "".join(present):  # psycopg's own error for it, as before
        return values
    if nulls:
        encoded: list[bytes | None] = [None if v is None else v.encode() for v in values]
    else:
        encoded = list(map(str.encode, values))
    return Array(
        _ARRAY_OF[TEXT], _HEAD(1, int(nulls), TEXT, len(values), 1) + _joined(encoded, nulls)
    )


def blobs(conn: Connection, values: list[bytes]) -> Any:
    """``values`` (each ``bytes``, none NULL) as a ``bytea[]`` parameter."""
    if not values or not ready(conn):
        return values
    return Array(_ARRAY_OF[BYTEA], _HEAD(1, 0, BYTEA, len(values), 1) + _joined(values, False))


def integers(conn: Connection, values: list[Any], elem: int = INT8) -> Any:
    """``values`` (each an ``int`` in ``elem``'s range, ``INT8`` or ``INT4``) as its
    array; the list as it is when one is NULL or out of range, or it is empty."""
    if not values or None in values or not ready(conn):
        return values
    kind, size, low, high = _INTS[elem]
    if min(values) < low or max(values) > high:
        return values
    return _fixed_width(elem, kind, size, values)


def float4s(conn: Connection, values: Any) -> Array:
    """Every component of ``values`` (float32), in order, as one ``real[]``."""
    import numpy as np

    ready(conn)  # registers the dumper (floats have no client encoding to mind)
    return _fixed_width(
        FLOAT4, ">f4", 4, np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
    )


def _fixed_width(elem: int, dtype: str, size: int, values: Any) -> Array:
    """``values`` (none NULL) as an array of ``elem``: each element's length ``size``
    and its big-endian bytes (numpy ``dtype``), after the header."""
    import numpy as np

    body = np.empty(len(values), dtype=[("n", ">i4"), ("v", dtype)])
    body["n"] = size
    body["v"] = values
    return Array(_ARRAY_OF[elem], _HEAD(1, 0, elem, len(values), 1) + body.tobytes())
