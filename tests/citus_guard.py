"""Citus readiness: every statement chronomem sends to PostgreSQL filters on one tenant.

With Citus, ``tenant`` is the distribution column of every ``cm_*`` table except
``cm_meta`` (see ``docs/scaling.md``). A statement is then routed to one shard
only when each distributed table it reads or writes is pinned to one tenant
value: by ``tenant = <value>`` / ``tenant = ANY(<one-tenant array>)`` /
``tenant IN (<values>)`` among the top-level conjuncts of its WHERE or JOIN ON,
by a ``tenant = other.tenant`` equality with a table that is pinned (a
colocated join, or a correlated subquery), or, for an INSERT, by the tenant
values it carries. This module checks that from the SQL text and the bound
parameters of every statement, through SQLAlchemy's ``before_cursor_execute``
event on the ``Engine`` class.

A small recursive-descent reading of the SQL (tokens, parenthesised groups,
query blocks, FROM/JOIN items, top-level AND conjuncts), enough for what
SQLAlchemy's PostgreSQL compiler and chronomem's ``text()`` statements emit;
a shape it does not understand counts as *not* filtered, so the check fails
closed.

Exempt, and why:

- DDL and maintenance statements (CREATE/ALTER/DROP/COMMENT, VACUUM, ANALYZE,
  REINDEX, SET/RESET/SHOW, transaction control): Citus propagates DDL and
  VACUUM/ANALYZE to every shard itself; they carry no tenant data.
- Statements touching no ``cm_*`` relation: ``SELECT 1`` (pool pre-ping),
  ``pg_advisory_xact_lock`` (the lock key is a hash, there is no table),
  catalog queries (``pg_attribute``, ``pg_available_extensions``, ``has_table``),
  ``current_schema()``. A ``cm_*`` name inside a string literal (``'cm_vectors'::regclass``)
  is not a relation.
- ``cm_meta``: the store-wide key/value table (schema version, the embedder's
  identity, whether I1 is a constraint). It has no tenant by design and is a
  Citus *reference table*; statements on it need no tenant.
- Store-wide sweeps, recognised by the chronomem function on the call stack:
  ``chronomem.schema.migrate`` and ``chronomem.schema.rekey_legacy_slots`` (migrations),
  ``chronomem.retrieval.pgvector.ensure_column``
  (the one-off backfill of the pgvector column from the float32 blobs, run when
  the column is created), ``chronomem.retrieval.reembed`` (re-embedding the
  whole store with a new embedder: the embedder is store-wide) and
  ``chronomem.integrity`` (``Memory.check``: documented to check every tenant) and
  ``chronomem.provenance.scopes`` (``Memory.scopes``, CLI ``chronomem scopes``:
  documented to list every tenant's scopes, to find where an adapter wrote).
  These run as multi-shard statements on Citus, which it supports as long as
  every join between distributed tables is on the distribution column; so for
  them the guard still requires every block's ``cm_*`` tables to be joined on
  ``tenant`` (colocated), only not pinned to one value.
- Statements whose SQL is written in the test suite itself (the first frame
  outside SQLAlchemy/psycopg is a file under ``tests/``): whole-database
  assertions such as "a rejected call wrote nothing". They are the tests'
  inspection, not chronomem's queries. ``Recorder(include_tests=True)`` checks
  them too (used by the guard's own tests).
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

# -- tokens and groups -----------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>--[^\n]*|/\*.*?\*/)
  | (?P<str>[EeBbXxUuNn]?'(?:[^']|'')*')
  | (?P<qid>"(?:[^"]|"")*")
  | (?P<param>%\((?P<pname>[^)]+)\)s|%s)
  | (?P<cast>::)
  | (?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<lp>\()
  | (?P<rp>\))
  | (?P<op><=>|<=|>=|<>|!=|\|\||@@|&&|%%|[-+*/<>=~!@#%^&|`?,.;:\[\]{}])
    """,
    re.X | re.S,
)


@dataclass(frozen=True)
class Tok:
    kind: str  # ident, qid, str, num, param, op, cast
    text: str
    index: int = -1  # positional parameter number (``%s``)

    @property
    def up(self) -> str:
        return self.text.upper() if self.kind == "ident" else self.text

    @property
    def name(self) -> str | None:
        """The identifier this token names (unquoted, lower-cased), if any."""
        if self.kind == "ident":
            return self.text.lower()
        if self.kind == "qid":
            return self.text[1:-1].replace('""', '"')
        return None


@dataclass
class Group:
    items: list[Any]  # Tok | Group


class Unparsed(Exception):
    """A shape the reader does not understand (counts as not filtered)."""


def tokenize(sql: str) -> list[Any]:
    out: list[Any] = []
    stack: list[list[Any]] = [out]
    pos, positional = 0, 0
    while pos < len(sql):
        m = _TOKEN.match(sql, pos)
        if m is None:
            raise Unparsed(f"cannot tokenize at {sql[pos : pos + 20]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind in ("ws", "comment"):
            continue
        if kind == "pname":
            kind = "param"
        if kind == "lp":
            g = Group([])
            stack[-1].append(g)
            stack.append(g.items)
        elif kind == "rp":
            if len(stack) == 1:
                raise Unparsed("unbalanced parenthesis")
            stack.pop()
        elif kind == "param":
            if m.group("pname") is not None:
                stack[-1].append(Tok("param", m.group("pname")))
            else:
                stack[-1].append(Tok("param", "", positional))
                positional += 1
        else:
            stack[-1].append(Tok(kind or "op", m.group(0)))
    if len(stack) != 1:
        raise Unparsed("unbalanced parenthesis")
    return out


def _kw(item: Any, *words: str) -> bool:
    return isinstance(item, Tok) and item.kind == "ident" and item.up in words


def _split(items: list[Any], sep: str) -> list[list[Any]]:
    parts: list[list[Any]] = [[]]
    for it in items:
        if isinstance(it, Tok) and it.kind == "op" and it.text == sep:
            parts.append([])
        else:
            parts[-1].append(it)
    return parts


# -- what a statement needs ------------------------------------------------------------

DISTRIBUTED_PREFIX = "cm_"
NONCOLOCATED = "distributed tables not joined on tenant: "
REFERENCE_TABLES = frozenset({"cm_meta"})
EXEMPT_FIRST_WORDS = frozenset(
    [
        "CREATE",
        "ALTER",
        "DROP",
        "COMMENT",
        "GRANT",
        "REVOKE",
        "VACUUM",
        "ANALYZE",
        "REINDEX",
        "CLUSTER",
        "SET",
        "RESET",
        "SHOW",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
        "START",
        "END",
        "DISCARD",
        "LISTEN",
        "NOTIFY",
        "UNLISTEN",
        "DEALLOCATE",
        "PREPARE",
    ]
)


@dataclass(frozen=True)
class ValueRef:
    """Where a tenant value comes from: a bound parameter (by name or position) or a literal."""

    param: str | None = None
    index: int = -1
    literal: str | None = None
    array: bool = False  # ``= ANY(param)``: the parameter is a list of tenants


@dataclass
class Analysis:
    relations: list[str] = field(default_factory=list)  # cm_* relations met
    problems: list[str] = field(default_factory=list)  # static: a table not filtered
    values: list[ValueRef] = field(default_factory=list)  # tenant values to check per execution
    kind: str = ""  # SELECT / INSERT / UPDATE / DELETE / exempt

    @property
    def touches(self) -> bool:
        return any(r not in REFERENCE_TABLES for r in self.relations)


class _Rel:
    def __init__(self, table: str | None, alias: str):
        self.table = table  # a cm_* table name, or None (another relation)
        self.alias = alias
        self.parent: _Rel = self
        self.bound = False
        # unnest(<array>, …) AS alias(col, …): which array parameter feeds each column
        self.arrays: dict[str, ValueRef] = {}

    def root(self) -> _Rel:
        r = self
        while r.parent is not r:
            r = r.parent
        return r


def _union(a: _Rel, b: _Rel) -> None:
    ra, rb = a.root(), b.root()
    if ra is not rb:
        rb.parent = ra
        ra.bound = ra.bound or rb.bound


class Reader:
    """Reads one statement; ``analysis`` says which cm_* tables it touches, which of
    them are not pinned to a tenant, and which values pin them."""

    def __init__(self, sql: str):
        self.a = Analysis()
        try:
            items = tokenize(sql)
            while items and isinstance(items[-1], Tok) and items[-1].text == ";":
                items = items[:-1]
            self._statement(items)
        except (Unparsed, IndexError) as exc:
            if re.search(r"\bcm_\w+", _strip_literals(sql)):
                self.a.relations.append("?")
                self.a.problems.append(f"not understood ({exc})")

    # statements
    def _statement(self, items: list[Any]) -> None:
        if not items:
            return
        first = items[0]
        if isinstance(first, Group):
            self.a.kind = "SELECT"
            self._query(items, [])
            return
        word = first.up if isinstance(first, Tok) else ""
        if word == "EXPLAIN":
            rest = items[1:]
            while rest and (
                isinstance(rest[0], Group) or _kw(rest[0], "ANALYZE", "VERBOSE", "ANALYSE")
            ):
                rest = rest[1:]
            self._statement(rest)
            return
        if word in EXEMPT_FIRST_WORDS:
            self.a.kind = "exempt"
            return
        self.a.kind = word
        if word in ("SELECT", "WITH", "VALUES", "TABLE"):
            self._query(items, [])
        elif word == "INSERT":
            self._insert(items)
        elif word == "UPDATE":
            self._update(items)
        elif word == "DELETE":
            self._delete(items)
        else:
            # TRUNCATE, COPY, LOCK, MERGE, ...: fine only when no cm_* table is named
            for it in _flatten(items):
                n = it.name
                if n and n.startswith(DISTRIBUTED_PREFIX) and n not in REFERENCE_TABLES:
                    self.a.relations.append(n)
                    self.a.problems.append(f"{word} on {n} (no tenant routing)")

    def _with(self, items: list[Any], outer: list[_Rel]) -> list[Any]:
        """Reads the CTEs of a leading WITH; returns the statement after them."""
        i = 1
        if _kw(items[i] if i < len(items) else None, "RECURSIVE"):
            i += 1
        while True:
            # name [(cols)] AS [NOT] [MATERIALIZED] (query)
            i += 1
            if i < len(items) and isinstance(items[i], Group):
                i += 1
            if not _kw(items[i] if i < len(items) else None, "AS"):
                raise Unparsed("WITH without AS")
            i += 1
            while _kw(items[i] if i < len(items) else None, "NOT", "MATERIALIZED"):
                i += 1
            body = items[i] if i < len(items) else None
            if not isinstance(body, Group):
                raise Unparsed("WITH body")
            self._query(body.items, outer)
            i += 1
            if i < len(items) and isinstance(items[i], Tok) and items[i].text == ",":
                i += 1
                continue
            return items[i:]

    def _query(self, items: list[Any], outer: list[_Rel]) -> list[_Rel]:
        """A query expression (possibly WITH, UNION, parenthesised); returns the
        relations of its last block (for INSERT … SELECT)."""
        if _kw(items[0], "WITH"):
            items = self._with(items, outer)
            if items and not _kw(items[0], "SELECT", "VALUES") and not isinstance(items[0], Group):
                self._statement(items)  # WITH … INSERT/UPDATE/DELETE
                return []
        parts: list[list[Any]] = [[]]
        for it in items:
            if _kw(it, "UNION", "INTERSECT", "EXCEPT"):
                parts.append([])
            elif parts[-1] == [] and _kw(it, "ALL", "DISTINCT") and len(parts) > 1:
                continue
            else:
                parts[-1].append(it)
        rels: list[_Rel] = []
        for part in parts:
            if len(part) >= 1 and isinstance(part[0], Group):
                rels = self._query(part[0].items, outer)
                self._subqueries(part[1:], outer)
            elif part and _kw(part[0], "SELECT"):
                rels = self._select(part, outer)
            elif part and _kw(part[0], "VALUES"):
                self._subqueries(part, outer)
            else:
                raise Unparsed("query expected")
        return rels

    _CLAUSES = (
        "FROM",
        "WHERE",
        "GROUP",
        "HAVING",
        "WINDOW",
        "ORDER",
        "LIMIT",
        "OFFSET",
        "FOR",
        "FETCH",
    )

    def _clauses(self, items: list[Any], words: tuple[str, ...]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        current = "HEAD"
        out[current] = []
        for it in items:
            if _kw(it, *words) and it.up not in out:
                current = it.up
                out[current] = []
            else:
                out[current].append(it)
        return out

    def _select(self, items: list[Any], outer: list[_Rel]) -> list[_Rel]:
        c = self._clauses(items[1:], self._CLAUSES)
        rels, joins = self._from(c.get("FROM", []), outer)
        conds = self._conjuncts(c.get("WHERE", []))
        self._pin(rels, outer, conds + joins)
        self._check_block(rels, outer)
        for key, part in c.items():
            if key != "FROM":
                self._subqueries(part, outer + rels)
        return rels

    def _insert(self, items: list[Any]) -> None:
        # INSERT INTO name [AS alias] [(cols)] {VALUES … | SELECT … | DEFAULT VALUES} [ON CONFLICT …] [RETURNING …]
        if not _kw(items[1], "INTO"):
            raise Unparsed("INSERT without INTO")
        table = _relname(items, 2)
        i = 2 + _relname_len(items, 2)
        if _kw(items[i] if i < len(items) else None, "AS"):
            i += 2
        cols: list[str] = []
        if i < len(items) and isinstance(items[i], Group):
            cols = [(_col_name(p) or "") for p in _split(items[i].items, ",")]
            i += 1
        rest = items[i:]
        c = self._clauses(rest, ("ON", "RETURNING"))
        body = c["HEAD"]
        if table is None or not table.startswith(DISTRIBUTED_PREFIX):
            self._subqueries(rest, [])
            return
        self.a.relations.append(table)
        if table in REFERENCE_TABLES:
            return
        if "tenant" not in cols:
            self.a.problems.append(f"INSERT INTO {table} carries no tenant column")
            return
        pos = cols.index("tenant")
        if body and _kw(body[0], "VALUES"):
            rows = [g for g in body[1:] if isinstance(g, Group)]
            for row in rows:
                terms = _split(row.items, ",")
                ref = _value(terms[pos]) if pos < len(terms) else None
                if ref is None:
                    self.a.problems.append(f"INSERT INTO {table}: a row's tenant is not a value")
                else:
                    self.a.values.append(ref)
            self._subqueries(body, [])
        elif body and _kw(body[0], "SELECT"):
            self._insert_select(table, pos, body)
        elif body:
            if not self._query(body, []):
                self.a.problems.append(f"INSERT INTO {table} … SELECT not read")
        else:
            self.a.problems.append(f"INSERT INTO {table} without rows")

    def _insert_select(self, table: str, pos: int, body: list[Any]) -> None:
        """INSERT … SELECT: the selected tenant is a value, a pinned table's tenant,
        or an ``unnest(<tenant array>)`` column (one tenant per execution)."""
        rels = self._select(body, [])
        head = self._clauses(body[1:], self._CLAUSES)["HEAD"]
        if head and _kw(head[0], "DISTINCT", "ALL"):
            head = head[1:]
        terms = _split(head, ",")
        term = terms[pos] if pos < len(terms) else []
        ref = _value(term)
        if ref is not None:
            self.a.values.append(ref)
            return
        parts = _column(term)
        if parts is not None:
            col = parts[-1]
            owners = [r for r in rels if len(parts) == 1 or r.alias == parts[-2]]
            for r in owners:
                if col in r.arrays:
                    self.a.values.append(r.arrays[col])
                    return
                if r.table and r.table not in REFERENCE_TABLES and col == "tenant":
                    return  # a table of this block: _check_block pinned it (or said why not)
        self.a.problems.append(f"INSERT INTO {table} … SELECT: the tenant inserted is not a value")

    def _update(self, items: list[Any]) -> None:
        # UPDATE [ONLY] name [[AS] alias] SET … [FROM …] [WHERE …] [RETURNING …]
        i = 1 + (1 if _kw(items[1], "ONLY") else 0)
        target, n = self._relation(items, i)
        c = self._clauses(items[i + n :], ("SET", "FROM", "WHERE", "RETURNING"))
        more, joins = self._from(c.get("FROM", []), [])
        rels = [target, *more]
        conds = self._conjuncts(c.get("WHERE", []))
        self._pin(rels, [], conds + joins)
        self._check_block(rels, [])
        for key in ("SET", "WHERE", "RETURNING"):
            self._subqueries(c.get(key, []), rels)

    def _delete(self, items: list[Any]) -> None:
        # DELETE FROM [ONLY] name [[AS] alias] [USING …] [WHERE …] [RETURNING …]
        if not _kw(items[1], "FROM"):
            raise Unparsed("DELETE without FROM")
        i = 2 + (1 if _kw(items[2], "ONLY") else 0)
        target, n = self._relation(items, i)
        c = self._clauses(items[i + n :], ("USING", "WHERE", "RETURNING"))
        more, joins = self._from(c.get("USING", []), [])
        rels = [target, *more]
        conds = self._conjuncts(c.get("WHERE", []))
        self._pin(rels, [], conds + joins)
        self._check_block(rels, [])
        for key in ("WHERE", "RETURNING"):
            self._subqueries(c.get(key, []), rels)

    # FROM items
    _JOIN_WORDS = ("JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "OUTER", "NATURAL")

    def _relation(self, items: list[Any], i: int) -> tuple[_Rel, int]:
        """One FROM item at ``items[i]``: (relation, tokens used)."""
        start = i
        args: list[ValueRef | None] = []
        if _kw(items[i], "LATERAL", "ONLY"):
            i += 1
        it = items[i]
        if isinstance(it, Group):
            if it.items and (
                _kw(it.items[0], "SELECT", "WITH", "VALUES") or isinstance(it.items[0], Group)
            ):
                self._query(it.items, [])
            table: str | None = None
            default_alias = ""
            i += 1
        else:
            name = _relname(items, i)
            n = _relname_len(items, i)
            if n == 0:
                raise Unparsed("relation expected")
            i += n
            if i < len(items) and isinstance(items[i], Group):  # a function: unnest(…)
                if name == "unnest":
                    args = [_value(a) for a in _split(items[i].items, ",")]
                self._subqueries([items[i]], [])
                i += 1
                name = None
            table = name if name and name.startswith(DISTRIBUTED_PREFIX) else None
            default_alias = name or ""
        alias = default_alias
        colnames: list[str | None] = []
        if _kw(items[i] if i < len(items) else None, "AS"):
            i += 1
        nxt = items[i] if i < len(items) else None
        if isinstance(nxt, Tok) and nxt.name and not _kw(nxt, *self._JOIN_WORDS, *_NOT_ALIAS):
            alias = nxt.name
            i += 1
            if i < len(items) and isinstance(items[i], Group):  # alias(col, …)
                colnames = [_col_name(p) for p in _split(items[i].items, ",")]
                i += 1
        if table is not None:
            self.a.relations.append(table)
        rel = _Rel(table, alias)
        if args and colnames:
            for col, arg in zip(colnames, args, strict=False):
                if col and arg is not None:
                    rel.arrays[col] = ValueRef(arg.param, arg.index, arg.literal, array=True)
        return rel, i - start

    def _from(self, items: list[Any], outer: list[_Rel]) -> tuple[list[_Rel], list[list[Any]]]:
        joins: list[list[Any]] = []
        rels: list[_Rel] = []
        i = 0
        while i < len(items):
            it = items[i]
            if isinstance(it, Tok) and it.text == ",":
                i += 1
                continue
            if _kw(it, *self._JOIN_WORDS):
                while i < len(items) and _kw(items[i], *self._JOIN_WORDS):
                    i += 1
                continue
            if _kw(it, "ON"):
                j = i + 1
                while (
                    j < len(items)
                    and not _kw(items[j], *self._JOIN_WORDS)
                    and not (isinstance(items[j], Tok) and items[j].text == ",")
                ):
                    j += 1
                cond = items[i + 1 : j]
                joins += self._conjuncts(cond)
                self._subqueries(cond, outer + rels)
                i = j
                continue
            if _kw(it, "USING"):
                cols = [_col_name(p) for p in _split(items[i + 1].items, ",")]
                if "tenant" in cols and len(rels) >= 2:
                    _union(rels[-2], rels[-1])
                i += 2
                continue
            rel, n = self._relation(items, i)
            rels.append(rel)
            i += n
        return rels, joins

    # conditions
    def _conjuncts(self, items: list[Any]) -> list[list[Any]]:
        out: list[list[Any]] = []
        cur: list[Any] = []
        between = False
        for it in items:
            if _kw(it, "BETWEEN"):
                between = True
            if _kw(it, "AND"):
                if between:
                    between = False
                    cur.append(it)
                    continue
                out.append(cur)
                cur = []
            else:
                cur.append(it)
        out.append(cur)
        flat: list[list[Any]] = []
        for c in out:
            if (
                len(c) == 1
                and isinstance(c[0], Group)
                and not any(_kw(x, "OR") for x in c[0].items)
            ):
                flat += self._conjuncts(c[0].items)
            elif c:
                flat.append(c)
        return flat

    def _pin(self, rels: list[_Rel], outer: list[_Rel], conds: list[list[Any]]) -> None:
        scope = {r.alias: r for r in outer}
        scope.update({r.alias: r for r in rels})
        scope.update({r.table: r for r in rels if r.table and r.table not in scope})
        cm = [r for r in rels if r.table]
        default = cm[0] if len(cm) == 1 else None

        def column(terms: list[Any]) -> _Rel | None:
            parts = _column(terms)
            if parts is None or parts[-1] != "tenant":
                return None
            if len(parts) == 1:
                return default
            return scope.get(parts[-2])

        for cond in conds:
            eq = _split(cond, "=")
            if len(eq) == 2:
                left, right = eq
                lc, rc = column(left), column(right)
                if lc is not None and rc is not None:
                    _union(lc, rc)
                    continue
                col, other = (lc, right) if lc is not None else (rc, left)
                if col is None:
                    continue
                ref = _value(other) or _any(other)
                if ref is not None:
                    col.root().bound = True
                    self.a.values.append(ref)
                continue
            if len(cond) >= 3 and _kw(cond[-2], "IN") and isinstance(cond[-1], Group):
                lhs, group = cond[:-2], cond[-1]
                col = column(lhs)
                if col is not None:
                    refs = [_value(t) for t in _split(group.items, ",")]
                    if refs and all(r is not None for r in refs):
                        col.root().bound = True
                        self.a.values += [r for r in refs if r is not None]
                elif len(lhs) == 1 and isinstance(lhs[0], Group):  # (a.tenant, a.x) IN ((…), …)
                    cols = [column(p) for p in _split(lhs[0].items, ",")]
                    pos = next((k for k, c in enumerate(cols) if c is not None), None)
                    rows = [g for g in group.items if isinstance(g, Group)]
                    if pos is not None and rows:
                        refs = [_value(_split(g.items, ",")[pos]) for g in rows]
                        if all(r is not None for r in refs):
                            cols[pos].root().bound = True  # type: ignore[union-attr]
                            self.a.values += [r for r in refs if r is not None]

    def _check_block(self, rels: list[_Rel], outer: list[_Rel]) -> None:
        cm = [r for r in rels if r.table and r.table not in REFERENCE_TABLES]
        if not cm:
            return
        for r in cm:
            if not r.root().bound:
                self.a.problems.append(f"{r.table} (as {r.alias}) is not filtered on one tenant")
        # Even a store-wide sweep must keep every join of distributed tables on the
        # distribution column (Citus pushes those down shard by shard): a block with a
        # table not pinned to a tenant has one tenant class, and a correlated subquery
        # is joined to its outer query on tenant. (Pinned classes are checked by value.)
        roots = {id(r.root()) for r in cm}
        outer_roots = {id(r.root()) for r in outer if r.table and r.table not in REFERENCE_TABLES}
        unbound = {id(r.root()) for r in cm if not r.root().bound}
        if unbound and (len(roots) > 1 or (outer_roots and not unbound <= outer_roots)):
            self.a.problems.append(
                NONCOLOCATED + ", ".join(sorted({f"{r.table} as {r.alias}" for r in cm}))
            )

    def _subqueries(self, items: list[Any], scope: list[_Rel]) -> None:
        for it in items:
            if isinstance(it, Group):
                if it.items and _kw(it.items[0], "SELECT", "WITH"):
                    self._query(it.items, scope)
                else:
                    self._subqueries(it.items, scope)


_NOT_ALIAS = [
    "ON",
    "USING",
    "WHERE",
    "SET",
    "FROM",
    "GROUP",
    "ORDER",
    "LIMIT",
    "OFFSET",
    "FOR",
    "HAVING",
    "WINDOW",
    "RETURNING",
    "FETCH",
    "UNION",
    "INTERSECT",
    "EXCEPT",
    "TABLESAMPLE",
]


def _flatten(items: list[Any]) -> Iterator[Tok]:
    for it in items:
        if isinstance(it, Group):
            yield from _flatten(it.items)
        else:
            yield it


def _relname(items: list[Any], i: int) -> str | None:
    """schema.table or table: the table's name."""
    n = _relname_len(items, i)
    return items[i + n - 1].name if n else None


def _relname_len(items: list[Any], i: int) -> int:
    if i >= len(items) or not isinstance(items[i], Tok) or items[i].name is None:
        return 0
    if (
        i + 2 < len(items)
        and isinstance(items[i + 1], Tok)
        and items[i + 1].text == "."
        and isinstance(items[i + 2], Tok)
        and items[i + 2].name
    ):
        return 3
    return 1


def _strip_cast(terms: list[Any]) -> list[Any]:
    """``x::TYPE(n)[]`` -> ``x``; ``CAST(x AS t)`` -> ``x``; ``(x)`` -> ``x``."""
    out = list(terms)
    if len(out) == 2 and _kw(out[0], "CAST") and isinstance(out[1], Group):
        inner = out[1].items
        k = next((j for j, t in enumerate(inner) if _kw(t, "AS")), len(inner))
        return _strip_cast(inner[:k])
    for j, t in enumerate(out):
        if isinstance(t, Tok) and t.kind == "cast":
            out = out[:j]
            break
    if len(out) == 1 and isinstance(out[0], Group):
        return _strip_cast(out[0].items)
    return out


def _column(terms: list[Any]) -> list[str] | None:
    t = _strip_cast(terms)
    # a parenthesised group (``CASE WHEN (EXISTS …)``) is no part of a column name
    names = [x.name if isinstance(x, Tok) else None for x in t[::2]]
    seps = t[1::2]
    if (
        not t
        or any(n is None for n in names)
        or any(not (isinstance(s, Tok) and s.text == ".") for s in seps)
    ):
        return None
    if len(t) % 2 == 0:
        return None
    return [str(n) for n in names]


def _col_name(terms: list[Any]) -> str | None:
    parts = _column(terms)
    return parts[-1] if parts else None


def _value(terms: list[Any]) -> ValueRef | None:
    t = _strip_cast(terms)
    if len(t) != 1 or not isinstance(t[0], Tok):
        return None
    tok = t[0]
    if tok.kind == "param":
        return ValueRef(param=tok.text or None, index=tok.index)
    if tok.kind == "str":
        return ValueRef(literal=tok.text[tok.text.index("'") + 1 : -1].replace("''", "'"))
    return None


def _any(terms: list[Any]) -> ValueRef | None:
    t = list(terms)
    if len(t) == 2 and _kw(t[0], "ANY") and isinstance(t[1], Group):
        v = _value(t[1].items)
        if v is not None:
            return ValueRef(param=v.param, index=v.index, literal=v.literal, array=True)
    return None


def _strip_literals(sql: str) -> str:
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


# -- checking executions ---------------------------------------------------------------

_cache: dict[str, Analysis] = {}


def analyse(sql: str) -> Analysis:
    a = _cache.get(sql)
    if a is None:
        a = Reader(sql).a
        if len(_cache) < 20_000:
            _cache[sql] = a
    return a


def _resolve(ref: ValueRef, params: Any) -> list[Any]:
    if ref.literal is not None:
        return [ref.literal]
    try:
        v = params[ref.param] if ref.param is not None else params[ref.index]
    except (KeyError, IndexError, TypeError):
        return [_Unknown()]
    if ref.array:
        return list(v) if isinstance(v, list | tuple) else [_Unknown()]
    return [v]


class _Unknown:
    def __repr__(self) -> str:
        return "<unbound>"


def tenants_of(a: Analysis, parameters: Any, executemany: bool) -> set[Any]:
    sets = parameters if executemany else [parameters]
    found: set[Any] = set()
    for p in sets:
        for ref in a.values:
            found.update(_resolve(ref, p))
    return found


def violations(sql: str, parameters: Any, executemany: bool, *, sweep: bool) -> list[str]:
    """Why this statement is not routed to one tenant ([] if it is, or exempt)."""
    a = analyse(sql)
    if a.kind == "exempt" or not a.touches:
        return []
    if sweep:
        return [p for p in a.problems if p.startswith(NONCOLOCATED)]
    if a.problems:
        return list(a.problems)
    found = tenants_of(a, parameters, executemany)
    if len(found) != 1 or any(isinstance(v, _Unknown) for v in found):
        return [f"binds {len(found)} tenant values ({sorted(map(repr, found))[:4]}), not one"]
    return []


# -- the event hook and the per-test record ---------------------------------------------

_TESTS_DIR = str(Path(__file__).resolve().parent) + "/"
_SKIP = ("/sqlalchemy/", "/psycopg/", "/psycopg_pool/", __file__)
_SWEEPS = (
    ("chronomem/schema.py", "migrate"),
    ("chronomem/schema.py", "rekey_legacy_slots"),  # a migration step (schema v5)
    ("chronomem/retrieval/pgvector.py", "ensure_column"),
    ("chronomem/retrieval/reembed.py", None),
    ("chronomem/integrity.py", None),
    ("chronomem/provenance.py", "scopes"),  # Memory.scopes: every tenant's scopes, counted
)


def _caller() -> tuple[str, bool, str]:
    """(where the statement was issued, whether it is a store-wide sweep, issuer kind)."""
    f = sys._getframe(2)
    issuer, where, sweep = "", "", False
    while f is not None:
        path = f.f_code.co_filename.replace("\\", "/")
        if not issuer and not any(s in path for s in _SKIP) and "contextlib" not in path:
            issuer = "tests" if path.startswith(_TESTS_DIR) else "chronomem"
            where = f"{path}:{f.f_lineno} ({f.f_code.co_name})"
        for mod, fn in _SWEEPS:
            if path.endswith(mod) and (fn is None or f.f_code.co_name == fn):
                sweep = True
        f = f.f_back  # type: ignore[assignment]
    return where, sweep, issuer


@dataclass
class Offence:
    sql: str
    why: list[str]
    where: str

    def __str__(self) -> str:
        return f"{self.where}: {'; '.join(self.why)}\n    {' '.join(self.sql.split())[:500]}"


class Recorder:
    """Collects the offending statements (and counts the checked ones) while active."""

    def __init__(self, include_tests: bool = False):
        self.include_tests = include_tests
        self.offences: list[Offence] = []
        self.checked: list[tuple[str, str]] = []  # (kind, relations) of every checked statement
        self.statements: set[str] = set()  # their distinct SQL texts
        self.lock = threading.Lock()

    def see(self, sql: str, parameters: Any, executemany: bool) -> None:
        try:
            self._see(sql, parameters, executemany)
        except Exception as exc:  # the guard must never break the statement it watches
            with self.lock:
                self.offences.append(Offence(sql, [f"guard error: {exc!r}"], "citus_guard"))

    def _see(self, sql: str, parameters: Any, executemany: bool) -> None:
        a = analyse(sql)
        if a.kind == "exempt" or not a.touches:
            return
        where, sweep, issuer = _caller()
        if issuer == "tests" and not self.include_tests:
            return
        why = violations(sql, parameters, executemany, sweep=sweep)
        with self.lock:
            self.checked.append((a.kind, ",".join(sorted(set(a.relations)))))
            self.statements.add(sql)
            if why:
                self.offences.append(Offence(sql, why, where))


_active: list[Recorder] = []


def _on_execute(
    conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
) -> None:
    if conn.dialect.name != "postgresql" or not _active:
        return
    for rec in list(_active):
        rec.see(statement, parameters, executemany)


if not event.contains(Engine, "before_cursor_execute", _on_execute):
    event.listen(Engine, "before_cursor_execute", _on_execute)


class recording:
    """``with recording() as rec:`` checks every PostgreSQL statement run inside."""

    def __init__(self, include_tests: bool = False):
        self.rec = Recorder(include_tests)

    def __enter__(self) -> Recorder:
        _active.append(self.rec)
        return self.rec

    def __exit__(self, *exc: object) -> None:
        _active.remove(self.rec)


@pytest.fixture(autouse=True)
def citus_guard() -> Iterator[None]:
    """Fails a test whose chronomem code sent PostgreSQL a statement on a ``cm_*``
    table that is not routed to one tenant (see the module docstring)."""
    with recording() as rec:
        yield
    if rec.offences:
        pytest.fail(
            "statements not filtered on one tenant (Citus would fan them out to every "
            "shard; see tests/citus_guard.py):\n" + "\n".join(map(str, rec.offences[:10])),
            pytrace=False,
        )
