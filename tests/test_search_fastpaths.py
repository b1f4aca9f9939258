"""The search's shortcuts (issue #13, fourth round) give what the plain ways give.

The SQLite lexical leg tries a few candidates before the 1000 (``fts5.lexical``),
the mirror looks ids up in bulk (``Ids.get_many``) and knows each episode's
speaker (``TenantMirror.spoken_by``), and the hits' rows come through statements
compiled per list length (``PreparedIn``): each is checked here against the
plain query or loop it replaces, on stores full of ties."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chronomem import Memory
from chronomem.backends import fts5
from chronomem.model import State
from chronomem.retrieval import legs
from chronomem.retrieval.cache import Ids
from chronomem.schema import episodes

WORDS = ["hiking", "trip", "lake", "dinner", "music", "garden", "paint", "river", "snow"]


def _reference(conn: Any, tbl: Any, terms: list[str], filters: list[Any], n: int) -> Any:
    """The lexical query as it ran before the shortcut: the best 1000 (or 5 n)
    candidates, else every match."""
    tiebreak = [tbl.c.content_hash, tbl.c.occurred_at, tbl.c.id]
    cap = max(fts5.SQLITE_CANDIDATES, 5 * n)
    focused = fts5.focused_match(conn, tbl.name, terms)
    rows = conn.execute(fts5.lexical_select(tbl, terms, filters, n, tiebreak, cap, focused)).all()
    if len(rows) < n:
        rows = conn.execute(fts5.lexical_select(tbl, terms, filters, n, tiebreak)).all()
    return [(i, -float(r)) for i, r in rows]


@pytest.mark.parametrize("same", [False, True])
def test_the_first_candidates_give_the_rows_of_the_thousand(tmp_path: Path, same: bool) -> None:
    rnd = random.Random(7)
    m = Memory(str(tmp_path / "s.db"))
    try:
        # 2,400 turns of few words: thousands of matches, many identical texts (bm25
        # ties); with ``same``, a third of them one text (a tie the shortcut cannot
        # decide: the 1000-candidate query runs)
        for b in range(4):
            m.add_episodes(
                [
                    {
                        "text": "hiking lake trip snow paint garden"
                        if same and (b + i) % 3 == 0
                        else " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 4)))
                    }
                    for i in range(600)
                ]
            )
        tf = legs.TimeFilter(2**62, None, frozenset({State.LIVE}))
        tiebreak = [episodes.c.content_hash, episodes.c.occurred_at, episodes.c.id]
        tried = 0
        with m._engine.backend.read() as conn:
            for terms in (["hiking", "lake"], ["trip", "snow", "music"], ["paint", "garden"]):
                counts = fts5.term_counts(conn, "cm_episodes", terms)
                assert sum(counts) > fts5.SQLITE_CANDIDATES  # the shortcut applies
                for n in (1, 5, 30, 200, 400):
                    shaped = legs.episode_leg_filters(m.scope, tf)
                    got = fts5.lexical(
                        conn, episodes, terms, shaped, n, tiebreak, legs._LEXICAL.rows
                    )
                    want = _reference(conn, episodes, terms, legs.episode_filters(m.scope, tf), n)
                    assert got == want, (terms, n)
                    tried += 1
        assert tried == 15
    finally:
        m.close()


def test_term_counts_count_each_term_up_to_the_common_limit(tmp_path: Path) -> None:
    m = Memory(str(tmp_path / "s.db"))
    try:
        m.add_episodes([{"text": f"lake {i}"} for i in range(30)] + [{"text": "river"}])
        with m._engine.backend.read() as conn:
            assert fts5.term_counts(conn, "cm_episodes", ["lake", "river", "snow"]) == [30, 1, 0]
            assert fts5.term_counts(conn, "cm_episodes", []) == []
    finally:
        m.close()


def test_get_many_finds_what_get_finds() -> None:
    ids = Ids()
    held = [f"{i:024x}" for i in range(0, 30_000, 3)]
    ids.extend(held[:9_000])
    ids.get("x")  # the sorted part covers these
    ids.extend(held[9_000:])  # a tail
    asked = [*held[::7], "", "nope", "0" * 40, held[-1], "é"]
    want = [ids.get(s) for s in asked]
    got = ids.get_many(asked).tolist()
    assert got == [-1 if p is None else p for p in want]
    assert ids.get_many([]).tolist() == []


@pytest.mark.parametrize("named", [True, False])
def test_the_mirror_names_the_speakers_sql_names(memory: Memory, named: bool) -> None:
    turns = []
    for i in range(40):
        meta: dict[str, Any] = {"speaker": ["Gina", "Jon Snow", 3][i % 3]} if named else {}
        turns.append({"text": f"turn {i}", "role": ["user", "Gina", None][i % 3], "metadata": meta})
    eps = memory.add_episodes(turns)
    ids = [e.id for e in eps] + ["missing"]
    r = memory._engine.retrieval
    assert r is not None
    mirror = r.mirrors.get(memory.scope.tenant)
    with memory._engine.backend.read() as conn:
        mirror.sync(conn)
        for terms, roles in (
            (["gina"], frozenset()),
            (["snow", "x"], frozenset()),
            (["user"], frozenset()),
            (["nobody"], frozenset()),
            ([], frozenset({"user"})),  # "what did I say": the user's turns, named or not
            (["nobody"], frozenset({"assistant"})),  # a role no episode has
            (["jon"], frozenset({"user"})),
        ):
            sql = legs.spoken_by(conn, memory.scope, ids, terms, roles)
            ps = mirror.e.pos.get_many(ids)
            held = np.flatnonzero(ps >= 0)
            fast = {ids[j] for j in held[mirror.spoken_by(ps[held], terms, roles)].tolist()}
            assert fast == sql, (terms, roles)
            if roles == {"user"}:
                assert {e.id for e in eps if e.role == "user"} <= sql


def test_search_reads_rows_of_long_id_lists(memory: Memory) -> None:
    memory.add_episodes([{"text": f"hiking day {i}"} for i in range(700)])
    hits = memory.search("hiking", k=600, include_episodes=True)
    assert len(hits) == 600
    assert len({h.episode.id for h in hits if h.episode is not None}) == 600
