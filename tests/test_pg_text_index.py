"""PostgreSQL's text indexes keep a bounded GIN pending list (``GIN_PENDING_KB``):
a new store creates them with it, and a store whose indexes lack it (created
before) gets it when opened."""

from __future__ import annotations

from sqlalchemy import text

from chronomem import Memory
from chronomem.backends.postgres import GIN_PENDING_KB, TEXT_INDEX_TABLES

WANT = f"gin_pending_list_limit={GIN_PENDING_KB}"
OPTIONS = text(
    "SELECT c.relname, c.reloptions FROM pg_class c WHERE c.relname = ANY(CAST(:n AS text[])) "
    "AND c.relnamespace = CAST(current_schema() AS regnamespace)"
)


def _options(m: Memory) -> dict[str, list[str]]:
    with m._engine.backend.read() as conn:
        rows = conn.execute(OPTIONS, {"n": [f"{t}_tsv" for t in TEXT_INDEX_TABLES]}).all()
    return {name: list(opts or []) for name, opts in rows}


def test_text_indexes_have_a_bounded_pending_list_and_older_ones_get_it_on_open(
    pg_url: str,
) -> None:
    m = Memory(pg_url)
    m.remember("ann", "likes", "hiking")
    assert _options(m) == {f"{t}_tsv": [WANT] for t in TEXT_INDEX_TABLES}
    with m._engine.backend.write() as conn:  # as a store created before
        for t in TEXT_INDEX_TABLES:
            conn.execute(text(f"ALTER INDEX {t}_tsv RESET (gin_pending_list_limit)"))
    assert all(not opts for opts in _options(m).values())
    m.close()
    m = Memory(pg_url)
    assert _options(m) == {f"{t}_tsv": [WANT] for t in TEXT_INDEX_TABLES}
    assert [h.fact.object for h in m.search("hiking") if h.fact is not None] == ["hiking"]
    m.close()
