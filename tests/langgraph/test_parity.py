"""Drop-in parity with LangGraph's own stores (issue #16), from their documented
behaviour and checked against the real classes side by side:

* ``SearchItem.score`` is the cosine similarity of the query to the item's best
  indexed field (``InMemoryStore`` with the same embeddings gives the same
  numbers); results are ordered by it; identical texts score identically;
  ``score="fused"`` reports the fused relevance instead.
* TTL: ``refresh_on_read`` defaults to True (``TTLConfig``); ``sweep_ttl()``
  returns the number of items that expired, as ``SqliteStore`` does.
* Filters: dotted keys are nested paths and keys outside ``[A-Za-z0-9_.-]`` are
  refused with ``ValueError``, as ``SqliteStore`` does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from chronomem import InvalidInput

from ..conftest import ManualClock
from .conftest import StoreFactory
from .fakes import CharEmbeddings

DOCS = {
    "a": {"text": "the quick brown fox"},
    "b": {"text": "a lazy dog sleeps"},
    "c": {"text": "the quick brown fox"},  # the same text as "a"
    "d": {"text": "foxes are quick and brown"},
}


@pytest.fixture
def sqlite_store() -> Iterator[SqliteStore]:
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn)
    store.setup()
    yield store
    conn.close()


def _index(emb: CharEmbeddings) -> dict[str, Any]:
    return {"dims": emb.dims, "embed": emb, "fields": ["text"]}


def test_score_is_the_cosine_langgraph_reports(make_store: StoreFactory) -> None:
    emb = CharEmbeddings()
    ours = make_store(index=_index(emb))
    theirs = InMemoryStore(index=_index(CharEmbeddings()))  # type: ignore[arg-type]
    for key, value in DOCS.items():
        ours.put(("docs",), key, value)
        theirs.put(("docs",), key, value)
    query = "quick brown fox"
    mine = ours.search(("docs",), query=query, limit=10)
    ref = {h.key: h.score for h in theirs.search(("docs",), query=query, limit=10)}
    scored = [h for h in mine if h.score is not None]
    assert scored, "the query matched nothing"
    for h in scored:
        assert h.score == pytest.approx(ref[h.key], abs=1e-5), h.key
        assert 0.0 <= h.score <= 1.0 + 1e-9
    # ordered by the score it reports; identical texts, identical scores
    scores = [h.score for h in scored]
    assert scores == sorted(scores, reverse=True)
    by_key = {h.key: h.score for h in scored}
    assert by_key["a"] == by_key["c"]
    assert by_key["a"] > by_key["b"]


def test_fused_score_behind_an_option(make_store: StoreFactory) -> None:
    emb = CharEmbeddings()
    fused = make_store(index=_index(emb), score="fused")
    for key, value in DOCS.items():
        fused.put(("docs",), key, value)
    hits = [h for h in fused.search(("docs",), query="quick brown fox") if h.score is not None]
    assert hits and all(h.score < 0.2 for h in hits)  # reciprocal-rank scale, not a cosine
    with pytest.raises(InvalidInput):
        make_store(score="bm25")


def test_refresh_on_read_defaults_to_true(make_store: StoreFactory, clock: ManualClock) -> None:
    store = make_store(ttl={"default_ttl": 1})  # refresh_on_read not configured
    store.put(("t",), "k", {"v": 1})
    for _ in range(3):
        clock.advance(seconds=40)
        assert store.get(("t",), "k") is not None  # each read restarts the minute
    clock.advance(seconds=70)
    assert store.get(("t",), "k") is None


def test_sweep_ttl_returns_the_expired_items_like_sqlite_store(
    make_store: StoreFactory, clock: ManualClock
) -> None:
    store = make_store()
    store.put(("t",), "short", {"v": 1}, ttl=1)
    store.put(("t",), "long", {"v": 1}, ttl=30)
    store.put(("t",), "forever", {"v": 1})
    store.put(("t",), "deleted", {"v": 1}, ttl=1)
    store.delete(("t",), "deleted")
    assert store.sweep_ttl() == 0
    clock.advance(minutes=2)
    assert store.sweep_ttl() == 1
    assert store.sweep_ttl() == 0  # already swept
    clock.advance(minutes=40)
    assert store.sweep_ttl() == 1
    assert store.get(("t",), "forever") is not None
    assert [v.value for v in store.history(("t",), "short", "v")] == [1]  # kept in history


FILTER_DOCS = {
    "admin": {"user": {"access-level": "admin", "age": 40}, "tag": "x"},
    "guest": {"user": {"access-level": "guest", "age": 20}, "tag": "y"},
    "flat": {"user.access-level": "admin", "tag": "z"},
}


@pytest.mark.parametrize(
    "filter_",
    [
        {"user.access-level": "admin"},
        {"user.age": {"$gt": 30}},
        {"user.access-level": {"$ne": "admin"}},
        {"tag": "y"},
    ],
)
def test_dotted_filter_keys_are_paths_as_in_sqlite_store(
    make_store: StoreFactory, sqlite_store: SqliteStore, filter_: dict[str, Any]
) -> None:
    ours = make_store()
    for key, value in FILTER_DOCS.items():
        if key == "flat":
            continue  # a dotted top-level key: SqliteStore cannot reach it (see below)
        ours.put(("f",), key, value)
        sqlite_store.put(("f",), key, value)
    mine = sorted(h.key for h in ours.search(("f",), filter=filter_))
    ref = sorted(h.key for h in sqlite_store.search(("f",), filter=filter_))
    assert mine == ref


def test_a_top_level_dotted_key_still_matches(make_store: StoreFactory) -> None:
    store = make_store()
    for key, value in FILTER_DOCS.items():
        store.put(("f",), key, value)
    assert sorted(h.key for h in store.search(("f",), filter={"user.access-level": "admin"})) == [
        "admin",
        "flat",
    ]


@pytest.mark.parametrize("key", ["bad key", "x'); DROP TABLE store; --", "a..b", ".a", "ä", ""])
def test_invalid_filter_keys_are_refused_with_value_error(
    make_store: StoreFactory, sqlite_store: SqliteStore, key: str
) -> None:
    store = make_store()
    store.put(("f",), "k", {"v": 1})
    with pytest.raises(ValueError):
        store.search(("f",), filter={key: 1})
    if key not in ("a..b", ".a", ""):  # SqliteStore's own pattern refuses these the same way
        with pytest.raises(ValueError):
            sqlite_store.search(("f",), filter={key: 1})


def test_langmem_tools_example() -> None:
    from ..examples_runner import run_example

    out = run_example("langgraph_langmem_tools.py")
    assert out.startswith("search: Ada lives in Berlin (score 0.")
    assert "as of before the move: Ada lives in Paris" in out
    assert "after delete: 0 memories about tea" in out
    home = out.split("history of the home memory:")[1].split("history of the tea")[0]
    assert [line.strip() for line in home.strip().splitlines()] == [
        "Ada lives in Paris [ended]",
        "Ada lives in Berlin [live]",
    ]
    assert "Ada likes green tea [retracted]" in out.split("history of the tea memory:")[1]


def test_an_item_put_again_answers_what_its_earlier_value_matched_in_fused_mode(
    make_store: StoreFactory, clock: ManualClock
) -> None:
    """Issue #28 on the store (``score="fused"``): an item put over keeps its earlier
    version, stale now; the question that version matched finds the item as it is
    now, scored at least as the stale version, above an unrelated item; before the
    put the old value is current again. The cosine mode keeps InMemoryStore's number
    (the item's fields as they are now)."""
    emb = CharEmbeddings()
    fused = make_store(index=_index(emb), score="fused")
    ns = ("u",)
    fused.put(ns, "job", {"text": "zany zebra xerxes works at vandelay"})
    fused.put(ns, "talk", {"text": "the weather is lovely"})
    clock.advance(days=1)
    before = clock.mark()
    clock.advance(days=1)
    q = "zany zebra xerxes"
    old = {h.key: h.score for h in fused.search(ns, query=q)}
    fused.put(ns, "job", {"text": "joined kramerica"})
    hits = fused.search(ns, query=q)
    assert hits[0].key == "job" and hits[0].value == {"text": "joined kramerica"}
    assert hits[0].score is not None and old["job"] is not None
    assert hits[0].score == pytest.approx(old["job"], rel=1e-3)  # its stale version's
    past = fused.as_of(before).search(ns, query=q)
    assert past[0].key == "job" and past[0].value["text"].startswith("zany")
    fused.delete(ns, "job")  # nothing current: its past lifts nothing
    assert "job" not in [h.key for h in fused.search(ns, query=q)]
