"""Statements compiled once per dialect and run through the DBAPI cursor.

A point read (``Memory.get``, a current read of one slot, a LangGraph ``get``)
costs little in the database; through SQLAlchemy's execution path each of its
statements paid the compiled-cache lookup, parameter processing and a result
metadata build over every column (≈0.05 ms on SQLite, more than the database's
work). A ``Prepared`` statement is a SQLAlchemy ``SELECT`` (with named bind
parameters and no expanding ``IN``) compiled once per dialect: its SQL text, the
order of its parameters, their bind processors (``SafeText`` escaping on
PostgreSQL) and its columns' result processors. Running it hands the text and
the processed parameters to the backend's ``fetch`` (the driver's cursor on
SQLite; ``exec_driver_sql`` elsewhere, which still shows every statement to
SQLAlchemy's cursor events) and applies the result processors to the rows.
Nothing here asks which database it is; the backend decides how a statement
reaches the driver."""

from __future__ import annotations

import bisect
import threading
import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, Select, bindparam
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.visitors import cloned_traverse

from . import backends
from .backends import Backend
from .batching import chunks
from .schema import SafeText

Processor = Callable[[Any], Any] | None
_MISSING = object()


@dataclass(frozen=True)
class _Compiled:
    sql: str
    positional: bool
    # (parameter name, default value or _MISSING, bind processor) in the order the
    # driver takes them (positional), or one entry per distinct name (named)
    binds: tuple[tuple[str, Any, Processor], ...]
    names: tuple[str, ...]  # the parameter names, in the order of ``binds``
    results: tuple[tuple[int, Processor], ...]  # only the columns with a processor
    # no bind has a processor: the values go to the driver as given
    plain: bool = False


class Prepared:
    """One SELECT, compiled once per dialect (see the module docstring)."""

    def __init__(self, stmt: Select[Any], *, at_once: bool = False):
        self.stmt = stmt
        # run on most calls of its path: prepared on the server from its first run
        # where the backend prepares statements (``Backend.fetch_prepared``)
        self.at_once = at_once
        self._by_dialect: weakref.WeakKeyDictionary[Dialect, _Compiled] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._last: tuple[Dialect, _Compiled] | None = None
        self.columns = tuple(str(c.key) for c in stmt.selected_columns)

    def _compile(self, dialect: Dialect, backend: type[Backend]) -> _Compiled:
        last = self._last  # the dialect compiled for last (no weak reference made per call)
        if last is not None and last[0] is dialect:
            return last[1]
        found = self._by_dialect.get(dialect)
        if found is not None:
            self._last = (dialect, found)
            return found

        def processing(t: Any) -> Any:
            """The type whose processors apply (None: none do)."""
            if isinstance(t, SafeText) and backend.text_as_given:
                return None  # SafeText's escaping is the identity on this backend
            return t.dialect_impl(dialect)

        compiled: Any = self.stmt.compile(dialect=dialect)
        binds = compiled.binds
        if any(b.expanding for b in binds.values()) or compiled.literal_execute_params:
            raise ValueError("a prepared statement takes no expanding or literal-execute binds")

        def entry(name: str) -> tuple[str, Any, Processor]:
            bp = binds[name]
            default = _MISSING if bp.value is None and bp.callable is None else bp.value
            t = processing(bp.type)
            return name, default, None if t is None else t.bind_processor(dialect)

        # positional: every placeholder in order; named: each rendered name once
        names = (
            list(compiled.positiontup)
            if compiled.positional
            else list(dict.fromkeys(compiled.bind_names.values()))
        )
        results = tuple(
            (i, proc)
            for i, c in enumerate(self.stmt.selected_columns)
            if (t := processing(c.type)) is not None
            and (proc := t.result_processor(dialect, None)) is not None
        )
        binds_ = tuple(entry(n) for n in names)
        found = _Compiled(
            sql=compiled.string,
            positional=bool(compiled.positional),
            binds=binds_,
            names=tuple(names),
            results=results,
            plain=all(p is None for _, _, p in binds_),
        )
        with self._lock:
            self._by_dialect[dialect] = found
        self._last = (dialect, found)
        return found

    def _bound(
        self, conn: Connection | Engine, backend: type[Backend], params: Mapping[str, Any]
    ) -> tuple[_Compiled, Any]:
        """The compiled statement (for ``conn``'s dialect: a connection's, or an
        engine's) and ``params`` as the driver takes them."""
        c = self._compile(conn.dialect, backend)
        values: list[Any]
        if c.plain:  # values as given (SQLite's usual case)
            values = [
                params[name] if default is _MISSING else params.get(name, default)
                for name, default, _ in c.binds
            ]
        else:
            values = []
            for name, default, proc in c.binds:
                value = params[name] if default is _MISSING else params.get(name, default)
                values.append(value if proc is None or value is None else proc(value))
        args: Any = tuple(values) if c.positional else dict(zip(c.names, values, strict=True))
        return c, args

    def point_rows(self, backend: Backend, params: Mapping[str, Any]) -> list[Sequence[Any]]:
        """``rows`` as a point read of its own (``Backend.point_fetch``: one
        statement, one snapshot), without a connection held around it."""
        c, args = self._bound(backend.engine, type(backend), params)
        return _processed(c, backend.point_fetch(c.sql, args))

    def rows(
        self,
        conn: Connection,
        params: Mapping[str, Any],
        ahead: Sequence[Ahead] = (),
        meanwhile: Callable[[], None] | None = None,
    ) -> list[Sequence[Any]]:
        """The statement's rows (tuples, values as SQLAlchemy would return them).
        ``ahead``: reads sent before it, in its round trip (``Ahead``);
        ``meanwhile``: client work run while the database runs it
        (``Backend.fetch_together``)."""
        backend = backends.of(conn)
        c, args = self._bound(conn, backend, params)
        pending = [a for a in ahead if a.rows is None]
        if not pending and meanwhile is None:
            fetch = backend.fetch_prepared if self.at_once else backend.fetch
            return _processed(c, fetch(conn, c.sql, args))
        bound = [a.stmt._bound(conn, backend, a.params) for a in pending]
        reads = [*((b.sql, p) for b, p in bound), (c.sql, args)]
        got = backend.fetch_together(conn, reads, meanwhile)
        for a, (b, _), rows in zip(pending, bound, got, strict=False):
            a.rows = _processed(b, rows)
        return _processed(c, got[-1])

    def scalar(self, conn: Connection, params: Mapping[str, Any]) -> Any:
        """The first column of the first row, or None."""
        rows = self.rows(conn, params)
        return rows[0][0] if rows else None


def _processed(c: _Compiled, rows: list[Any]) -> list[Sequence[Any]]:
    """``rows`` with the statement's result processors applied."""
    if not c.results:
        return rows
    out: list[Sequence[Any]] = []
    for row in rows:
        fixed = list(row)
        for i, proc in c.results:
            fixed[i] = proc(fixed[i])  # type: ignore[misc]
        out.append(fixed)
    return out


class Ahead:
    """A read that goes to the database with the next statement run with it
    (``Prepared.rows(..., ahead=[...])``), in that statement's round trip where
    the backend sends statements together (``Backend.fetch_together``:
    PostgreSQL's pipeline mode; elsewhere one after the other, this one first).
    A search's clock read rides with its lexical leg: one round trip, not two.
    ``rows`` stays None until it went out and came back; a statement that was
    never run, or failed, leaves it None, and its caller then reads it alone."""

    __slots__ = ("params", "rows", "stmt")

    def __init__(self, stmt: Prepared, params: Mapping[str, Any]):
        self.stmt = stmt
        self.params = params
        self.rows: list[Sequence[Any]] | None = None


# the lengths a PreparedIn compiles its list at (a longer list runs in parts)
IN_LISTS = (8, 16, 32, 64, 128, 256, 512)


class PreparedIn:
    """A SELECT over one list of values (``make(binds)`` builds it from the list's
    bind parameters, ``{name}0``, ``{name}1``, ...), compiled once per length of
    ``IN_LISTS`` and run as a ``Prepared``: a list is padded to the next length
    with its last value repeated (an ``IN`` list holding a value twice selects the
    same rows). For the few ids a search fetches, SQLAlchemy rewriting an expanding
    ``IN`` per call cost more than the database's lookups."""

    def __init__(
        self, make: Callable[[list[Any]], Select[Any]], name: str = "v", *, at_once: bool = False
    ):
        self._make = make
        self._name = name
        self._at_once = at_once  # (``Prepared``'s)
        self._by_size: dict[int, Prepared] = {}
        self._lock = threading.Lock()
        self.columns = self._prepared(IN_LISTS[0]).columns
        # each length's parameter names, made once (not a formatted name per value per call)
        self._names = {size: tuple(f"{name}{i}" for i in range(size)) for size in IN_LISTS}

    def _prepared(self, size: int) -> Prepared:
        found = self._by_size.get(size)
        if found is None:
            found = Prepared(
                self._make([bindparam(f"{self._name}{i}") for i in range(size)]),
                at_once=self._at_once,
            )
            with self._lock:
                found = self._by_size.setdefault(size, found)
        return found

    def rows(
        self, conn: Connection, params: Mapping[str, Any], values: Sequence[Any]
    ) -> list[Sequence[Any]]:
        """The rows for ``values`` (any number: in parts of at most the longest list)."""
        out: list[Sequence[Any]] = []
        for part in chunks(values, IN_LISTS[-1]):
            size = IN_LISTS[bisect.bisect_left(IN_LISTS, len(part))]  # the first >= len(part)
            args = dict(params)
            args.update(zip(self._names[size], part + [part[-1]] * (size - len(part)), strict=True))
            out.extend(self._prepared(size).rows(conn, args))
        return out


@dataclass(frozen=True)
class ShapedTerms:
    """WHERE terms over named bind parameters, built once per ``shape`` (equal
    shapes, equal terms), and one call's values for those parameters: a statement
    made of them is built and compiled once per shape (``ByShape``), not on every
    call (building the filters, the SELECT and its cache key cost a search's fact
    lexical leg more than SQLite's own work)."""

    shape: Hashable
    terms: tuple[Any, ...]
    params: Mapping[str, Any]

    def bound(self) -> list[Any]:
        """The terms with ``params`` as their values, for a statement run through
        SQLAlchemy: the same SQL as a statement over ``terms`` given ``params``."""
        values = self.params

        def bind(b: Any) -> None:  # on a copy of each bind parameter (cloned_traverse)
            if b.key in values:
                b.value = values[b.key]
                b.required = False

        return [cloned_traverse(t, {}, {"bindparam": bind}) for t in self.terms]


class ByShape:
    """``Prepared`` statements made on first use, one per key (a statement's shape):
    ``rows(conn, key, build, params)`` runs the one ``build()`` made for ``key``.
    A backend's multi-statement query (``Backend.lexical``) takes ``rows`` as an
    argument: backends cannot import this module (it imports them)."""

    def __init__(self) -> None:
        self._by_key: dict[Hashable, Prepared] = {}
        self._lock = threading.Lock()

    def rows(
        self,
        conn: Connection,
        key: Hashable,
        build: Callable[[], Select[Any]],
        params: Mapping[str, Any],
        ahead: Sequence[Ahead] = (),
        meanwhile: Callable[[], None] | None = None,
    ) -> list[Sequence[Any]]:
        found = self._by_key.get(key)
        if found is None:
            made = Prepared(build())
            with self._lock:
                found = self._by_key.setdefault(key, made)
        return found.rows(conn, params, ahead, meanwhile)
