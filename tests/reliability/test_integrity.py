"""``Memory.check()`` finds each kind of damage it claims to, and ``repair=True``
fixes what can be fixed without deciding about facts (issue #14 A)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from chronomem import Memory

from ..statements import counting
from ._support import check_invariants, raw


def _store(url: str) -> None:
    with Memory(url) as m:
        t = m.scoped(tenant="t")
        ep = t.add_episode("ann lives in oslo")
        t.remember("ann", "lives_in", "oslo", source=ep)
        t.remember("bob", "likes", "tea")


def test_a_healthy_store_checks_ok(durable_url: str) -> None:
    _store(durable_url)
    with Memory(durable_url) as m:
        report = m.check()
        assert report.ok, report
        assert report.repaired == ()
        if durable_url.startswith("postgres"):
            assert report.fts == {}
        else:
            assert report.fts == {"cm_versions_fts": "ok", "cm_episodes_fts": "ok"}


SQLITE_DAMAGE = {
    # a token for a row that does not exist (a torn index write)
    "ghost": "INSERT INTO cm_versions_fts(rowid, body) VALUES (987654, 'ghost')",
    # an index that lost a row's tokens
    "lost": "INSERT INTO cm_versions_fts(cm_versions_fts, rowid, body) SELECT 'delete', rowid, "
    "subject || ' likes ' || object FROM cm_versions WHERE subject = 'bob'",
    # a structure record SQLite cannot read: every query of the index fails
    "unreadable": "UPDATE cm_episodes_fts_data SET block = X'00000000ff' WHERE id = 10",
}


@pytest.mark.parametrize("damage", sorted(SQLITE_DAMAGE))
def test_damaged_sqlite_text_index_is_found_and_rebuilt(tmp_path: Path, damage: str) -> None:
    path = str(tmp_path / "d.db")
    _store(path)
    with raw(path) as conn:
        conn.exec_driver_sql(SQLITE_DAMAGE[damage])
    with Memory(path) as m:
        report = m.check()
        assert not report.ok
        assert any(state.startswith("damaged") for state in report.fts.values()), report
        assert report.repaired == ()
        assert not m.check().ok  # checking alone changes nothing
        fixed = m.check(repair=True)
        assert fixed.ok, fixed
        assert fixed.repaired and all("rebuilt" in r for r in fixed.repaired)
        assert m.check().ok
        t = m.scoped(tenant="t")
        for word in ("tea", "oslo"):
            res = t.search(word, k=5)
            assert not res.degraded and any(word in h.text for h in res), word
    check_invariants(path)


def test_orphans_are_found_and_deleted(durable_url: str) -> None:
    _store(durable_url)
    with raw(durable_url) as conn:
        conn.exec_driver_sql(
            "INSERT INTO cm_vectors (tenant, kind, item_id, embedder, dim, vec, norm) "
            "VALUES ('t', 'v', 'nope', 'e', 1, '\\x00000000', 1)"
            if durable_url.startswith("postgres")
            else "INSERT INTO cm_vectors VALUES ('t', 'v', 'nope', 'e', 1, x'00000000', 1)"
        )
        conn.exec_driver_sql(
            "INSERT INTO cm_sources (tenant, fact_id, episode_id, recorded_at, extractor) "
            "SELECT tenant, fact_id, 'gone', recorded_at, NULL FROM cm_versions LIMIT 1"
        )
        if durable_url.startswith("postgres"):
            conn.commit()
    with Memory(durable_url) as m:
        report = m.check()
        assert (report.orphan_vectors, report.orphan_sources) == (1, 1)
        assert not report.ok
        fixed = m.check(repair=True)
        assert fixed.ok and len(fixed.repaired) == 2, fixed
        assert m.scoped(tenant="t").facts(subject="ann")[0].object == "oslo"
    check_invariants(durable_url)


def test_i1_violations_are_reported_not_repaired(tmp_path: Path) -> None:
    """Two current versions of one slot overlapping: which is right is the
    caller's decision, so the check reports it and repair leaves it."""
    path = str(tmp_path / "i1.db")
    with Memory(path) as m:
        m.remember("ann", "lives_in", "oslo")
        m.remember("ann", "lives_in", "rome")
    with raw(path) as conn:
        conn.exec_driver_sql(
            "UPDATE cm_versions SET superseded_at = NULL, superseded_by = NULL, "
            "closed_reason = NULL WHERE closed_reason = 'superseded'"
        )
    with Memory(path) as m:
        assert m.check().i1_violations >= 1
        fixed = m.check(repair=True)
        assert fixed.i1_violations >= 1 and not fixed.ok and fixed.repaired == ()


def _overlapping_pairs(rows: list[tuple[str, str, int, int | None]]) -> int:
    """The model: pairs of current versions (tenant, slot, valid_from, valid_to)
    of one slot whose valid intervals [from, to) meet."""
    n = 0
    for i, (t1, s1, f1, e1) in enumerate(rows):
        for t2, s2, f2, e2 in rows[i + 1 :]:
            if (t1, s1) == (t2, s2) and f1 < (e2 or 2**62) and f2 < (e1 or 2**62):
                n += 1
    return n


def test_the_i1_count_is_the_number_of_overlapping_pairs(tmp_path: Path) -> None:
    """Every closed version made current again by hand: the check counts exactly
    the overlapping pairs the raw rows hold, slot by slot, tenant by tenant.
    (SQLite: PostgreSQL's exclusion constraint refuses such rows.)"""
    durable_url = str(tmp_path / "i1pairs.db")
    days = [datetime(2020, 1, d, tzinfo=timezone.utc) for d in range(1, 29)]
    with Memory(durable_url) as m:
        for tenant in ("t", "u"):
            s = m.scoped(tenant=tenant)
            for i, city in enumerate(["oslo", "rome", "lima", "kyiv", "pune"]):
                s.remember("ann", "lives_in", city, valid_from=days[i * 5])
                s.remember("bob", "lives_in", city, valid_from=days[(7 * i) % 25])
                s.remember("bob", "likes", city, valid_from=days[i], valid_to=days[i + 9])
    with raw(durable_url) as conn:
        conn.exec_driver_sql(
            "UPDATE cm_versions SET superseded_at = NULL, superseded_by = NULL, "
            "closed_reason = NULL"
        )
        rows = [
            tuple(r)
            for r in conn.exec_driver_sql(
                "SELECT tenant, slot, valid_from, valid_to FROM cm_versions ORDER BY id"
            )
        ]
    expected = _overlapping_pairs(rows)  # type: ignore[arg-type]
    assert expected > 10  # the scenario does overlap
    with Memory(durable_url) as m:
        assert m.check().i1_violations == expected


def test_the_i1_check_pairs_versions_within_their_slot(tmp_path: Path) -> None:
    """The I1 statement pairs each current version with its own slot's, not with
    every later version of the tenant: its work grows with the store, not with
    its square (SQLite VM steps, a store four times as large)."""
    steps = []
    for n in (300, 1200):
        path = str(tmp_path / f"s{n}.db")
        with Memory(path) as m:
            m.scoped(tenant="t").remember_many(
                [{"subject": f"p{i}", "predicate": "lives_in", "obj": "oslo"} for i in range(n)]
            )
        with Memory(path) as m, counting(m) as cost:
            assert m.check().ok
        steps.append(cost.vm_steps)
    assert steps[1] < 6 * steps[0], steps
