"""An item is one version (issue #32): a put writes one fact version, and a
store written in the old layout (a marker fact plus one fact per field and per
index entry) is read as it is and migrated by the item's next put."""

from __future__ import annotations

import json

from chronomem import Cardinality
from chronomem.ops import AssertOp
from chronomem.timeutil import to_us
from langgraph.store.chronomem import ChronomemStore, item_value, keys

from ..conftest import ManualClock
from .conftest import StoreFactory

ALL = ["live", "ended", "retracted"]

NS = ("users", "ada")


def _old(subject: str, predicate: str, obj: str, text: str = "") -> AssertOp:
    return AssertOp(subject, predicate, obj, None, None, bounded=True, exact=True,
                    cardinality=Cardinality.ONE, index_text=text)  # fmt: skip


def write_old_layout(store: ChronomemStore, clock: ManualClock) -> None:
    """The facts an earlier version of the package wrote for one put."""
    subject = keys.subject(NS, "profile")
    value = {"city": "Paris", "food": "ramen"}
    marker = {"created": None, "updated": to_us(clock()), "ttl": None,
              "fields": list(value), "index": ["$"]}  # fmt: skip
    text = json.dumps(value)
    store.memory.apply(
        [
            _old(subject, keys.MARKER, json.dumps(marker)),
            *(_old(subject, k, json.dumps(v)) for k, v in value.items()),
            _old(subject, keys.index_predicate("$"), keys.digest_text(text), text),
        ]
    )


def test_a_put_is_one_version(store: ChronomemStore) -> None:
    store.put(NS, "profile", {"city": "Paris", "food": "ramen"})
    # the item's own facts (the namespace index keeps its entries under "lg@ns")
    every = store.memory.facts(subject_prefix=keys.SUBJECT_PREFIX, exact=True, states=ALL)
    live = store.memory.facts(subject_prefix=keys.SUBJECT_PREFIX, exact=True)
    assert len(every) == len(live) == 1
    (doc,) = live
    assert doc.predicate == keys.DOC and item_value(doc) == {"city": "Paris", "food": "ramen"}


def test_history_is_derived_from_document_versions(
    store: ChronomemStore, clock: ManualClock
) -> None:
    store.put(NS, "profile", {"city": "Paris", "food": "ramen"})
    clock.advance(minutes=1)
    store.put(NS, "profile", {"city": "Berlin", "food": "ramen"})
    clock.advance(minutes=1)
    store.put(NS, "profile", {"city": "Berlin"})
    got = [(v.field, v.value, v.state.value) for v in store.history(NS, "profile")]
    assert got == [
        ("city", "Paris", "ended"),
        ("food", "ramen", "ended"),  # one version over both puts that kept it
        ("city", "Berlin", "live"),
    ]


def test_old_layout_is_read_and_migrated_by_the_next_put(
    make_store: StoreFactory, clock: ManualClock
) -> None:
    store = make_store(index={"dims": 16, "embed": _embed, "fields": ["$"]})
    write_old_layout(store, clock)
    created = store.get(NS, "profile")
    assert created is not None and created.value == {"city": "Paris", "food": "ramen"}
    assert store.list_namespaces() == [NS]
    assert [i.key for i in store.search(("users",), query="Paris")] == ["profile"]
    assert [(v.field, v.value) for v in store.history(NS, "profile")] == [
        ("city", "Paris"), ("food", "ramen")
    ]  # fmt: skip
    clock.advance(minutes=1)
    store.put(NS, "profile", {"city": "Berlin", "food": "ramen"})
    live = store.memory.facts(subject_prefix=keys.SUBJECT_PREFIX, exact=True)
    assert [f.predicate for f in live] == [keys.DOC]  # the old facts ended
    item = store.get(NS, "profile")
    assert item is not None and item.value == {"city": "Berlin", "food": "ramen"}
    assert item.created_at == created.created_at
    got = [(v.field, v.value, v.state.value) for v in store.history(NS, "profile")]
    assert got == [
        ("city", "Paris", "ended"),
        ("food", "ramen", "live"),  # the old field fact and the document, one version
        ("city", "Berlin", "live"),
    ]
    assert store.as_of(created.updated_at).get(NS, "profile").value == created.value  # type: ignore[union-attr]
    assert [i.key for i in store.search(("users",), query="Berlin")] == ["profile"]


def _embed(texts: list[str]) -> list[list[float]]:
    from .fakes import CharEmbeddings

    return CharEmbeddings(16).embed_documents(texts)
