"""Helpers shared by the reliability tests: raw inspection of a store's tables
(never through chronomem, so a bug in a read path cannot hide a bug in a write
path), invariant checks, and write snapshots."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

import pytest
from sqlalchemy import Connection, create_engine, inspect

CLOSED_REASONS = {"superseded", "ended", "retracted"}


def is_sqlite(url: str) -> bool:
    return not url.startswith("postgres")


def sqlalchemy_url(url: str) -> str:
    """``Memory`` accepts a bare file path for SQLite; SQLAlchemy does not."""
    return url if "://" in url else f"sqlite:///{url}"


@contextmanager
def raw(url: str) -> Iterator[Connection]:
    """A plain connection to the store's database, outside chronomem.

    SQLite inspection connections are autocommit, so they never hold a lock
    that a chronomem writer would then wait for."""
    kw: dict[str, Any] = {}
    if is_sqlite(url):
        kw["connect_args"] = {"isolation_level": None, "timeout": 30}
    eng = create_engine(sqlalchemy_url(url), **kw)
    try:
        with eng.connect() as conn:
            yield conn
    finally:
        eng.dispose()


def cm_tables(conn: Connection) -> list[str]:
    """Every table chronomem created (cm_*), FTS shadow tables included."""
    if conn.dialect.name == "sqlite":
        rows = conn.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'cm\\_%' ESCAPE '\\'"
        )
        return sorted(r[0] for r in rows)
    return sorted(t for t in inspect(conn).get_table_names() if t.startswith("cm_"))


def cm_virtual_tables(conn: Connection) -> list[str]:
    if conn.dialect.name != "sqlite":
        return []
    rows = conn.exec_driver_sql(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
    )
    return sorted(r[0] for r in rows if r[0].startswith("cm_"))


def snapshot(conn: Connection) -> dict[str, Any]:
    """A cheap fingerprint of everything a write could change (row counts, closes,
    the transaction clocks). Equal before and after a call = nothing written."""
    out: dict[str, Any] = {}
    for t in ("cm_versions", "cm_episodes", "cm_sources", "cm_vectors", "cm_predicates", "cm_meta"):
        out[t] = conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar()
    out["closed"] = conn.exec_driver_sql(
        "SELECT count(superseded_at), max(superseded_at), max(recorded_at) FROM cm_versions"
    ).one()
    out["clock"] = sorted(
        tuple(r) for r in conn.exec_driver_sql("SELECT tenant, last_us FROM cm_txclock")
    )
    out["registry"] = sorted(
        tuple(r)
        for r in conn.exec_driver_sql(
            "SELECT tenant, name, canonical, cardinality, volatility FROM cm_predicates"
        )
    )
    return out


# -- invariants ----------------------------------------------------------------------


def _overlaps(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Pairs of intervals [valid_from, valid_to) that intersect (None = +inf)."""
    out = []
    ordered = sorted(rows, key=lambda r: r["valid_from"])
    for a, b in pairwise(ordered):
        if a["valid_to"] is None or a["valid_to"] > b["valid_from"]:
            out.append((a, b))
    return out


def version_rows(conn: Connection) -> list[dict[str, Any]]:
    cols = (
        "tenant, id, fact_id, slot, user_id, agent_id, session_id, valid_from, valid_to, "
        "recorded_at, superseded_at, superseded_by, closed_reason"
    )
    return [dict(r._mapping) for r in conn.exec_driver_sql(f"SELECT {cols} FROM cm_versions")]


def check_invariants(url: str, *, erased: Collection[str] = ()) -> dict[str, int]:
    """Check, on the raw tables, every structural invariant a crash or a race could
    break. Raises AssertionError with every violation found; returns sizes.

    ``erased``: ids of versions deliberately erased. ``erase`` deletes a fact's
    versions but not the ``superseded_by`` pointers other facts' versions hold to
    them, so only a successor in this set may be missing."""
    problems: list[str] = []
    with raw(url) as conn:
        if conn.dialect.name == "sqlite":
            ok = conn.exec_driver_sql("PRAGMA integrity_check").scalars().all()
            if ok != ["ok"]:
                problems.append(f"PRAGMA integrity_check: {ok[:5]}")
            for table in ("cm_versions", "cm_episodes"):
                fts = f"{table}_fts"
                try:
                    conn.exec_driver_sql(
                        f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)"
                    )
                except Exception as exc:  # the index disagrees with itself or its text
                    problems.append(f"{fts} integrity-check (damage or torn index write): {exc}")
                docs = set(conn.exec_driver_sql(f"SELECT rowid FROM {fts}").scalars())
                rows = set(conn.exec_driver_sql(f"SELECT rowid FROM {table}").scalars())
                if docs != rows:
                    problems.append(
                        f"{fts} indexes {len(docs - rows)} deleted rows and misses "
                        f"{len(rows - docs)} rows (torn index write)"
                    )
        else:
            n = conn.exec_driver_sql(
                "SELECT count(*) FROM pg_constraint WHERE conname = 'cm_versions_i1' "
                "AND conrelid = 'cm_versions'::regclass"
            ).scalar()
            if n != 1:
                problems.append("the I1 exclusion constraint is missing")

        rows = version_rows(conn)
        by_id = {(r["tenant"], r["id"]): r for r in rows}
        by_slot: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        stamps: dict[str, int] = defaultdict(lambda: -(2**63))
        for r in rows:
            by_slot[(r["tenant"], r["slot"])].append(r)
            for t in (r["recorded_at"], r["superseded_at"]):
                if t is not None:
                    stamps[r["tenant"]] = max(stamps[r["tenant"]], t)
            if r["valid_to"] is not None and r["valid_to"] <= r["valid_from"]:
                problems.append(f"empty valid interval: {r}")
            closed = r["superseded_at"] is not None
            if closed != (r["closed_reason"] is not None):
                problems.append(f"superseded_at and closed_reason disagree: {r}")
            if r["closed_reason"] is not None and r["closed_reason"] not in CLOSED_REASONS:
                problems.append(f"unknown closed_reason: {r}")
            if closed and not r["recorded_at"] < r["superseded_at"]:
                problems.append(f"recorded_at >= superseded_at: {r}")
            if r["closed_reason"] in ("superseded", "ended") and r["superseded_by"] is None:
                problems.append(f"closed as {r['closed_reason']} without a successor: {r}")
            if r["superseded_by"] is not None:
                succ = by_id.get((r["tenant"], r["superseded_by"]))
                if succ is None and r["superseded_by"] in erased:
                    pass
                elif succ is None:
                    problems.append(f"torn supersession: successor missing for {r}")
                elif succ["recorded_at"] != r["superseded_at"]:
                    problems.append(
                        f"torn supersession: successor recorded at {succ['recorded_at']}, "
                        f"predecessor closed at {r['superseded_at']}: {r}"
                    )
            if not closed and r["superseded_by"] is not None:
                problems.append(f"current version with a successor: {r}")

        # I1 at every belief instant: the versions of a slot known at t are disjoint.
        for (tenant, slot), vs in by_slot.items():
            instants = {v["recorded_at"] for v in vs} | {
                v["superseded_at"] for v in vs if v["superseded_at"] is not None
            }
            for t in instants:
                known = [
                    v
                    for v in vs
                    if v["recorded_at"] <= t
                    and (v["superseded_at"] is None or v["superseded_at"] > t)
                ]
                for a, b in _overlaps(known):
                    problems.append(
                        f"I1 broken in {tenant}/{slot} at {t}: {a['id']} overlaps {b['id']}"
                    )

        episodes = {
            (t, i): rec
            for t, i, rec in conn.exec_driver_sql("SELECT tenant, id, recorded_at FROM cm_episodes")
        }
        for (t, _), rec in episodes.items():
            stamps[t] = max(stamps[t], rec)
        facts = {(r["tenant"], r["fact_id"]) for r in rows}
        for t, fid, eid in conn.exec_driver_sql(
            "SELECT tenant, fact_id, episode_id FROM cm_sources"
        ):
            if (t, fid) not in facts:
                problems.append(f"cm_sources cites a fact with no version: {t}/{fid}")
            if (t, eid) not in episodes:
                problems.append(f"cm_sources cites a missing episode: {t}/{eid}")
        vec = list(conn.exec_driver_sql("SELECT tenant, kind, item_id FROM cm_vectors"))
        for t, kind, item in vec:
            if (kind == "v" and (t, item) not in by_id) or (
                kind == "e" and (t, item) not in episodes
            ):
                problems.append(f"orphan vector {t}/{kind}/{item}")
        if vec:  # retrieval is attached: every version and episode is embedded in its own write
            have = {(t, k, i) for t, k, i in vec}
            missing = [k for k in by_id if (k[0], "v", k[1]) not in have]
            missing += [k for k in episodes if (k[0], "e", k[1]) not in have]
            if missing:
                problems.append(f"{len(missing)} rows written without their vector: {missing[:3]}")

        clock = dict(
            tuple(r) for r in conn.exec_driver_sql("SELECT tenant, last_us FROM cm_txclock")
        )
        for t, latest in stamps.items():
            if clock.get(t) is None or clock[t] < latest:
                problems.append(f"tenant {t!r}: clock {clock.get(t)} behind a stamp {latest}")

    assert not problems, f"{len(problems)} invariant violations:\n" + "\n".join(problems[:40])
    return {"versions": len(rows), "slots": len(by_slot), "episodes": len(episodes)}


def sqlite_fts_terms(path: str) -> set[str]:
    """Every term the store's FTS5 indexes hold (via fts5vocab on a temp schema)."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    try:
        terms: set[str] = set()
        for fts in ("cm_versions_fts", "cm_episodes_fts"):
            conn.execute(f"CREATE VIRTUAL TABLE temp.v_{fts} USING fts5vocab(main, {fts}, row)")
            terms |= {r[0] for r in conn.execute(f"SELECT term FROM temp.v_{fts}")}
        return terms
    finally:
        conn.close()


def core_bug(request: Any, reason: str, *, when: bool = True) -> None:
    """Mark the running test ``xfail(strict=True)`` for an open core bug, for the
    backends it affects only (a strict xfail that passes is an error: fixed bugs
    get noticed and the marker removed)."""
    if when:
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=f"core bug: {reason}"))


def version_indexes(url: str) -> dict[str, str]:
    """The store's indexes on ``cm_versions``: name -> definition (SQLite's ``sql``,
    PostgreSQL's ``indexdef``)."""
    with raw(url) as conn:
        if conn.dialect.name == "sqlite":
            q = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'cm_versions'"
        else:
            q = (
                "SELECT indexname, indexdef FROM pg_indexes "
                "WHERE schemaname = current_schema() AND tablename = 'cm_versions'"
            )
        return {name: str(sql or "") for name, sql in conn.exec_driver_sql(q).all()}
