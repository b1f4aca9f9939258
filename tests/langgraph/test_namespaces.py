"""list_namespaces: prefix and suffix matching with ``*``, max_depth, paging —
LangGraph's own scenarios, run against InMemoryStore too and compared exactly."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph.store.chronomem import ChronomemStore

NAMESPACES = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("b", "a", "f"),
    ("users", "123"),
    ("users", "456", "settings"),
    ("admin", "users", "789"),
]

QUERIES: list[dict[str, Any]] = [
    {},
    {"prefix": ("a", "b")},
    {"suffix": ("f",)},
    {"prefix": ("a",), "suffix": ("f",)},
    {"prefix": ("a", "b"), "max_depth": 3},
    {"prefix": ("a", "b"), "limit": 2},
    {"prefix": ("a", "b"), "offset": 2},
    {"prefix": ("a", "*", "f")},
    {"suffix": ("*", "f")},
    {"prefix": ("nonexistent",)},
    {"prefix": ("users", "123")},
    {"prefix": ("users", "*")},
    {"prefix": ("*", "users"), "suffix": ("*", "settings")},
    {"max_depth": 2},
    {"max_depth": 1, "limit": 2, "offset": 1},
    {"prefix": ("a",), "max_depth": 10},
]


def _fill(s: BaseStore) -> None:
    for i, ns in enumerate(NAMESPACES):
        s.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})
    s.put(("a", "b", "c"), "second", {"data": "same namespace twice"})


def test_list_namespaces_matches_in_memory_store(store: ChronomemStore) -> None:
    theirs = InMemoryStore()
    _fill(store)
    _fill(theirs)
    for q in QUERIES:
        assert store.list_namespaces(**q) == theirs.list_namespaces(**q), q


def test_pagination(store: ChronomemStore) -> None:
    for i in range(20):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i})
    pages = [store.list_namespaces(prefix=("namespace",), limit=5, offset=o) for o in (0, 5, 15)]
    assert pages == [[("namespace", f"sub_{i:02d}") for i in range(a, a + 5)] for a in (0, 5, 15)]


def test_empty_store_and_deleted_items(store: ChronomemStore) -> None:
    assert store.list_namespaces() == []
    store.put(("x", "y"), "k", {"v": 1})
    store.put(("x", "z"), "k", {"v": 1})
    store.delete(("x", "y"), "k")
    assert store.list_namespaces() == [("x", "z")]


def test_special_characters_are_labels_not_patterns(store: ChronomemStore) -> None:
    for ns in [("a%",), ("a_",), ("ab",), ("a\\",), ("a'; drop",), ("a*b",)]:
        store.put(ns, "k", {"v": ns[0]})
    assert store.list_namespaces(prefix=("a%",)) == [("a%",)]
    assert store.list_namespaces(prefix=("a_",)) == [("a_",)]
    assert store.list_namespaces(suffix=("a\\",)) == [("a\\",)]
    assert store.list_namespaces(prefix=("a*b",)) == [("a*b",)]
    # a whole-label "*" is LangGraph's wildcard
    assert len(store.list_namespaces(prefix=("*",))) == 6


def test_documented_difference_no_empty_namespaces(store: ChronomemStore) -> None:
    """InMemoryStore lists namespaces a ``get`` touched or whose last item was
    deleted; this store lists namespaces that hold a live item (README)."""
    theirs = InMemoryStore()
    for s in (store, theirs):
        s.get(("touched",), "missing")
        s.put(("gone",), "k", {"v": 1})
        s.delete(("gone",), "k")
        s.put(("kept",), "k", {"v": 1})
    assert theirs.list_namespaces() == [("gone",), ("kept",), ("touched",)]
    assert store.list_namespaces() == [("kept",)]
