"""SQLite's FTS5 text indexes (``cm_versions_fts``, ``cm_episodes_fts``, kept by
triggers): the lexical leg's bm25 query, FTS5's integrity check, the rebuild from
the tables' text, and the indexes' DDL for the schema migrations (what each index
covers is ``schema.TEXT_BODIES``). ``SqliteBackend`` calls these."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Integer, bindparam, column, literal_column, select, table
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.selectable import Join

from ..schema import INDEX_MAX_CHARS, reset_fts

if TYPE_CHECKING:
    from ..prepared import ShapedTerms
    from .base import Run

FTS_TABLES = ("cm_versions_fts", "cm_episodes_fts")
Fetch = Callable[[Connection, str, Any], list[Any]]  # Backend.fetch
# The indexes' tokenization: schema v1/v2 and, since v3, stemmed (the lexical
# query matches with whatever the index was built with).
TOKENIZE = "unicode61 remove_diacritics 2"
TOKENIZE_STEMMED = "porter unicode61 remove_diacritics 2"


def _fts_match(terms: Sequence[str]) -> str:
    # Every term double-quoted (quotes doubled): FTS5 sees strings, never operators.
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


# SQLite: FTS5 ranks every match itself (cheap, in C); only its best this many
# are joined to the table and filtered (see lexical).
SQLITE_CANDIDATES = 1000
# Tried first when the query matches more rows than SQLITE_CANDIDATES: this many
# candidates per row wanted (plus FIRST_EXTRA); exact whenever the n-th row kept
# ranks strictly above the last one fetched (see lexical), else the
# SQLITE_CANDIDATES query runs.
FIRST_PER_ROW = 2
FIRST_EXTRA = 64
COMMON_MATCHES = 5000  # a query term in more rows than this is "common" (focused_match)


class _FtsFirstJoin(Join):
    """``fts CROSS JOIN table ON ...`` on SQLite: the left table is scanned first
    on every SQLite version (the planner may not reorder a CROSS JOIN). SQLite
    >= 3.51 otherwise walked the table's time index and probed FTS5 once per
    row: seconds per search on a 10k-turn store."""

    inherit_cache = True


@compiles(_FtsFirstJoin, "sqlite")
def _compile_fts_first(element: _FtsFirstJoin, compiler: Any, **kw: Any) -> str:
    sql = str(compiler.visit_join(element, **kw))
    return sql.replace(" JOIN ", " CROSS JOIN ", 1)


def lexical_select(
    tbl: Any,
    terms: Sequence[str],
    filters: Sequence[Any],
    n: Any,
    tiebreak: list[Any],
    candidates: Any = None,
    match_expr: Any = None,
) -> Any:
    """The SQLite lexical query (FTS-first, ``_FtsFirstJoin``). With ``candidates``,
    only the FTS index's best ``candidates`` matches (bm25, computed inside FTS5)
    are joined to the table and filtered: a common word matching a fifth of a
    100k store no longer costs a table lookup per match. ``n``, ``candidates``
    and ``match_expr`` (default: every term) are values or bind parameters (a
    statement compiled once per shape, ``lexical``)."""
    name = tbl.name
    fts = table(f"{name}_fts", column("rowid"))
    bm25: Any = literal_column(f"bm25({name}_fts)")
    if isinstance(match_expr, BindParameter):
        bound: Any = match_expr
    else:
        bound = bindparam("m", match_expr if match_expr is not None else _fts_match(terms))
    match = literal_column(f"{name}_fts").op("MATCH")(bound)
    if candidates is None:
        src: Any = fts
        rid, rank = fts.c.rowid, bm25
        where = [match, *filters]
    else:
        src = (
            select(fts.c.rowid.label("rid"), bm25.label("r"))
            .where(match)
            .order_by(bm25, fts.c.rowid)
            .limit(candidates)
            .subquery("fts_top")
        )
        rid, rank = src.c.rid, src.c.r
        where = list(filters)
    return (
        select(tbl.c.id, rank.label("r"))
        .select_from(_FtsFirstJoin(src, tbl, rid == literal_column(f"{name}.rowid")))
        .where(*where)
        .order_by(rank, *tiebreak)
        .limit(n)
    )


def lexical_sql(
    conn: Connection,
    tbl: Any,
    terms: Sequence[str],
    filters: list[Any],
    n: int,
    tiebreak: list[Any],
    candidates: int | None = None,
) -> tuple[str, tuple[Any, ...]]:
    """The SQL text and parameters of the SQLite lexical query (for plans and tests)."""
    q = lexical_select(tbl, terms, filters, n, tiebreak, candidates)
    compiled = q.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.construct_params()
    return str(compiled), tuple(params[k] for k in compiled.positiontup or ())


def lexical(
    conn: Connection,
    tbl: Any,
    terms: Sequence[str],
    filters: ShapedTerms,
    n: int,
    tiebreak: list[Any],
    run: Run,
    fetch: Fetch | None = None,
) -> list[tuple[str, float]]:
    # The best SQLITE_CANDIDATES matches first; exact whenever they hold n rows that
    # pass the filters (every match outside them ranks lower). Otherwise (a scope or
    # time filter rejects most of them) the query runs over every match.
    # A term in more than COMMON_MATCHES rows (at 100k facts, "live" stems to the
    # "lives in" of every fifth fact) is left out while a rarer query term exists:
    # FTS5 then scores hundreds of rows, not tens of thousands. When that finds
    # fewer than n rows, every term is searched again (below).
    #
    # When the terms match more rows than that (their probed counts say so), the
    # best FIRST_PER_ROW * n + FIRST_EXTRA matches are tried alone first, for
    # n + FIRST_EXTRA rows: joining a thousand long rows to the table cost a third
    # of a 10k-turn episode search. Every match left out of them ranks at or below
    # the worst of them (bm25, then rowid), so at or below the last row kept; when
    # the n-th row's bm25 is strictly better than the last one's, no match outside
    # them can enter the top n, and the top n are those the SQLITE_CANDIDATES
    # query gives, row for row. Else (a tie there, too few rows) that query runs.
    #
    # Each of the three statements is built and compiled once per shape of the
    # filters (``run``: ``prepared.ByShape.rows``), its limits and match bound.
    cap = max(SQLITE_CANDIDATES, 5 * n)
    counts = term_counts(conn, tbl.name, terms, fetch) if len(terms) >= 2 else []
    focused = focused_match(conn, tbl.name, terms, counts)
    # at most this many rows match what is searched (0: not probed)
    matches = sum(c for c in counts if focused is None or c <= COMMON_MATCHES)
    first = FIRST_PER_ROW * n + FIRST_EXTRA
    shape = (tbl.name, tuple(c.name for c in tiebreak), filters.shape)

    def ranked(limit: int, candidates: int | None, match: str) -> list[Any]:
        top = candidates is not None
        params = {**filters.params, "lex_match": match, "lex_n": limit}
        if top:
            params["lex_top"] = candidates

        def build() -> Any:
            return lexical_select(
                tbl,
                (),
                filters.terms,
                bindparam("lex_n", type_=Integer()),
                tiebreak,
                bindparam("lex_top", type_=Integer()) if top else None,
                bindparam("lex_match"),
            )

        return run(conn, (*shape, top), build, params)

    every = _fts_match(terms)
    searched = focused if focused is not None else every
    if first < cap < matches:
        found = ranked(n + FIRST_EXTRA, first, searched)
        if len(found) > n and found[n - 1][1] < found[-1][1]:
            return [(i, -float(r)) for i, r in found[:n]]
    rows = ranked(n, cap, searched)
    if len(rows) < n:
        rows = ranked(n, None, every)
    return [(i, -float(r)) for i, r in rows]


def term_counts(
    conn: Connection, name: str, terms: Sequence[str], fetch: Fetch | None = None
) -> list[int]:
    """How many rows each term matches, counted up to ``COMMON_MATCHES + 1`` (one
    statement for all the terms; through ``fetch``, the backend's, when given)."""
    if not terms:
        return []
    probe = (
        f"(SELECT count(*) FROM (SELECT 1 FROM {name}_fts WHERE {name}_fts MATCH ? "
        f"LIMIT {COMMON_MATCHES + 1}))"
    )
    sql = "SELECT " + ", ".join([probe] * len(terms))
    args = tuple(_fts_match([t]) for t in terms)
    rows = fetch(conn, sql, args) if fetch else conn.exec_driver_sql(sql, args).all()
    return [int(c or 0) for c in rows[0]]


def focused_match(
    conn: Connection, name: str, terms: Sequence[str], counts: Sequence[int] | None = None
) -> str | None:
    """The rarer terms alone when some terms are common and some are not (None
    otherwise): a common term then counts like a stopword. Its bm25 weight (idf)
    is small by definition, and scoring its posting list cost ~20 ms at 100k.
    ``counts``: the terms' ``term_counts`` when already probed."""
    if len(terms) < 2:
        return None
    if counts is None:
        counts = term_counts(conn, name, terms)
    common = [t for t, c in zip(terms, counts, strict=True) if c > COMMON_MATCHES]
    rare = [t for t in terms if t not in common]
    if not common or not rare:
        return None
    return _fts_match(rare)


def fts_state(conn: Connection, fts: str) -> str:
    """FTS5's ``integrity-check`` against the indexed text (``rank`` 1), in a
    savepoint (a failure must not end the caller's transaction): "ok" or the error."""
    try:
        with conn.begin_nested():
            conn.exec_driver_sql(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)")
    except Exception as exc:  # sqlite reports corruption as DatabaseError
        return f"damaged ({getattr(exc, 'orig', exc)})"
    return "ok"


def rebuild_fts(conn: Connection, fts: str) -> None:
    """Rebuild an FTS5 index from its table's text, emptying it first when its
    structure cannot be read."""
    try:
        with conn.begin_nested():
            conn.exec_driver_sql(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")
            return
    except Exception:  # "vtable constructor failed": the structure is unreadable
        pass
    reset_fts(conn, fts)
    conn.exec_driver_sql(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")


def check(conn: Connection, *, repair: bool) -> tuple[dict[str, str], list[str]]:
    """Each index's state ("ok" or the error); with ``repair`` a damaged one is
    rebuilt from the stored text (and checked again). Returns the states and what
    was repaired."""
    states: dict[str, str] = {}
    repaired: list[str] = []
    for name in FTS_TABLES:
        state = fts_state(conn, name)
        if state != "ok" and repair:
            rebuild_fts(conn, name)
            repaired.append(f"rebuilt {name} from the stored text ({state})")
            state = fts_state(conn, name)
        states[name] = state
    return states, repaired


# -- the indexes' DDL (schema migrations) ------------------------------------------


def _fact_body(row: str) -> str:
    default = f"{row}.subject || ' ' || replace({row}.predicate, '_', ' ') || ' ' || {row}.object"
    return f"coalesce({row}.index_text, {default})"


_CONTENTLESS = (
    ("cm_versions", _fact_body("new"), _fact_body("old")),
    ("cm_episodes", "new.text", "old.text"),
)


def create_contentless(conn: Connection) -> None:
    """Schema v1: contentless FTS5 indexes over the tables' implicit rowids, kept by
    triggers: the text is stored once (in the table), so erasing a row and
    optimizing the index leaves no copy behind."""
    for name, new_body, old_body in _CONTENTLESS:
        fts = f"{name}_fts"
        conn.exec_driver_sql(
            f"CREATE VIRTUAL TABLE {fts} USING fts5(body, content='', tokenize='{TOKENIZE}')"
        )
        conn.exec_driver_sql(
            f"CREATE TRIGGER {name}_ai AFTER INSERT ON {name} BEGIN "
            f"INSERT INTO {fts}(rowid, body) VALUES (new.rowid, {new_body}); END"
        )
        conn.exec_driver_sql(
            f"CREATE TRIGGER {name}_ad AFTER DELETE ON {name} BEGIN "
            f"INSERT INTO {fts}({fts}, rowid, body) VALUES ('delete', old.rowid, {old_body}); END"
        )


def create_external(conn: Connection, table: str, body: str, tokenize: str) -> None:
    """(Re)create ``table``'s index as an external-content FTS5 index over a view
    of its bounded text (``INDEX_MAX_CHARS``), kept by triggers, built from the
    stored text."""
    fts, src = f"{table}_fts", f"{table}_fts_src"
    reset_fts(conn, fts)  # an index past the level limit cannot even be dropped
    for trigger in (f"{table}_ai", f"{table}_ad"):
        conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.exec_driver_sql(f"DROP TABLE {fts}")
    conn.exec_driver_sql(f"DROP VIEW IF EXISTS {src}")  # v3 rebuilds a v2 index

    def bounded(r: str) -> str:
        return f"substr({body.format(r=r)}, 1, {INDEX_MAX_CHARS})"

    conn.exec_driver_sql(
        f"CREATE VIEW {src} AS SELECT rowid AS rid, {bounded('')} AS body FROM {table}"
    )
    conn.exec_driver_sql(
        f"CREATE VIRTUAL TABLE {fts} USING fts5(body, content='{src}', content_rowid='rid', "
        f"tokenize='{tokenize}')"
    )
    conn.exec_driver_sql(
        f"CREATE TRIGGER {table}_ai AFTER INSERT ON {table} BEGIN "
        f"INSERT INTO {fts}(rowid, body) VALUES (new.rowid, {bounded('new.')}); END"
    )
    conn.exec_driver_sql(
        f"CREATE TRIGGER {table}_ad AFTER DELETE ON {table} BEGIN "
        f"INSERT INTO {fts}({fts}, rowid, body) VALUES ('delete', old.rowid, {bounded('old.')}); END"
    )
    conn.exec_driver_sql(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")
