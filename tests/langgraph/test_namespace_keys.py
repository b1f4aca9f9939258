"""The namespace index's keys read back as namespaces: a page of keys is split in
one pass (``namespace_index.namespaces_of``), which must give what ``namespace_of``
gives key by key, escaped labels and texts that are no key included; and a
listing of namespaces whose labels hold the key's separator and escape
characters agrees with ``InMemoryStore``."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from langgraph.store.chronomem import ChronomemStore, namespace_index

_label = st.text(alphabet=["a", "b", "\x01", "\x02", "\x03", "é"], min_size=1, max_size=4)
_namespace = st.lists(_label, min_size=1, max_size=3).map(tuple)
_not_key = st.text(alphabet=["a", "\x01", "\x02"], max_size=4)  # may or may not be one


@given(st.lists(st.one_of(_namespace.map(namespace_index.key), _not_key), max_size=8))
@example(["aa\x01"])  # ends as a key does, but does not start as one
@example(["\x01a\x01", "a\x01a\x01"])
@example(["\x01a", "\x01\x01b\x01"])  # joined, they split as two keys would
@example(["\x01a\x01\x01b\x01"])  # an empty label: splits at the "boundary"
def test_a_page_of_keys_reads_as_each_key_does(texts: list[str]) -> None:
    one_by_one = [ns for t in texts if (ns := namespace_index.namespace_of(t)) is not None]
    assert namespace_index.namespaces_of(texts) == one_by_one


@given(st.lists(_namespace, max_size=8))
def test_keys_read_back_as_their_namespaces(namespaces: list[tuple[str, ...]]) -> None:
    keys = [namespace_index.key(ns) for ns in namespaces]
    assert namespace_index.namespaces_of(keys) == namespaces


def test_labels_with_the_separators_list_as_in_memory(store: ChronomemStore) -> None:
    theirs = InMemoryStore()
    namespaces = [("a\x01", "b"), ("a",), ("a", "\x02c"), ("a\x02", "\x01"), ("b", "c\x03")]
    for s in (store, theirs):
        s.batch([PutOp(ns, "k", {"n": i}) for i, ns in enumerate(namespaces)])
    for q in [{}, {"max_depth": 1}, {"prefix": ("a",)}, {"suffix": ("\x01",)}, {"offset": 2}]:
        assert store.list_namespaces(**q) == theirs.list_namespaces(**q), q  # type: ignore[arg-type]
