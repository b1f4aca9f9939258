"""get / put / delete, items as documents, batch semantics and validation —
each scenario run against LangGraph's InMemoryStore too, results compared."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from chronomem import InvalidType
from langgraph.store.chronomem import ChronomemStore, InvalidFilter

from ..conftest import ManualClock
from .conftest import snapshot


def _parity(store: ChronomemStore, scenario: Any) -> Any:
    ours, theirs = scenario(store), scenario(InMemoryStore())
    assert ours == theirs
    return ours


def test_put_get_delete(store: ChronomemStore) -> None:
    def scenario(s: BaseStore) -> list[Any]:
        out = [snapshot(s.get(("a",), "k"))]
        s.put(("a",), "k", {"city": "Paris", "n": 1, "tags": ["x", "y"], "nested": {"z": None}})
        out.append(snapshot(s.get(("a",), "k")))
        s.put(("a",), "k", {"city": "Berlin", "n": 1})
        out.append(snapshot(s.get(("a",), "k")))
        out.append(snapshot(s.get(("a", "b"), "k")))
        s.delete(("a",), "k")
        out.append(snapshot(s.get(("a",), "k")))
        s.delete(("a",), "never")
        s.put(("a",), "k", {})
        out.append(snapshot(s.get(("a",), "k")))
        return out

    got = _parity(store, scenario)
    assert got[2] == (("a",), "k", {"city": "Berlin", "n": 1})
    assert got[-1] == (("a",), "k", {})


def test_created_at_kept_updated_at_moves(store: ChronomemStore, clock: ManualClock) -> None:
    store.put(("a",), "k", {"v": 1})
    first = store.get(("a",), "k")
    clock.advance(minutes=5)
    store.put(("a",), "k", {"v": 1})  # unchanged value: still an update
    second = store.get(("a",), "k")
    assert first is not None and second is not None
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert first.created_at.tzinfo is not None
    store.delete(("a",), "k")
    clock.advance(minutes=5)
    store.put(("a",), "k", {"v": 2})
    third = store.get(("a",), "k")
    assert third is not None and third.created_at > second.created_at


def test_values_round_trip_exactly(store: ChronomemStore) -> None:
    value = {
        "unicode": "naïve — 你好 👋",
        "big": 2**62,
        "float": 0.1,
        "bool": True,
        "none": None,
        "list": [1, "2", {"3": [4]}],
        "": "empty field name",
        " ": "blank field name",
        "@item": "reserved-looking name",
        "\\x": "escape-looking name",
        "n" * 300: "very long field name",
        "nul\x00name": "NUL in a field name",
    }
    store.put(("docs",), "weird key with . and \x00 and \\0", value)
    item = store.get(("docs",), "weird key with . and \x00 and \\0")
    assert item is not None
    assert item.value == value
    assert list(item.value) == list(value), "field order is kept"
    assert store.get(("docs",), "weird key with . and \x00 and \\\\0") is None


def test_field_changes_end_exactly_that_field(store: ChronomemStore) -> None:
    store.put(("u",), "p", {"city": "Paris", "lang": "fr", "pet": "cat"})
    store.put(("u",), "p", {"city": "Berlin", "lang": "fr"})
    hist = store.history(("u",), "p")
    by_field: dict[str, list[tuple[Any, str]]] = {}
    for v in hist:
        by_field.setdefault(v.field, []).append((v.value, v.state.value))
    assert by_field == {
        "city": [("Paris", "ended"), ("Berlin", "live")],
        "lang": [("fr", "live")],  # unchanged: one version, never rewritten
        "pet": [("cat", "ended")],  # removed: ended, kept in history
    }
    lang = [v for v in hist if v.field == "lang"]
    assert len(lang) == 1 and lang[0].valid_to is None


def test_batch_reads_see_the_state_before_its_puts(store: ChronomemStore) -> None:
    def scenario(s: BaseStore) -> list[Any]:
        s.put(("a",), "x", {"v": 0})
        results = s.batch(
            [
                GetOp(("a",), "x"),
                PutOp(("a",), "x", {"v": 1}),
                GetOp(("a",), "x"),
                PutOp(("a",), "y", {"v": 2}),
                SearchOp(("a",)),
                ListNamespacesOp(),
                PutOp(("a",), "x", {"v": 3}),  # the last put of a key wins
                PutOp(("b",), "z", {"v": 4}),
                PutOp(("b",), "z", None),
                GetOp(("b",), "z"),
            ]
        )
        after = [snapshot(s.get(("a",), "x")), snapshot(s.get(("a",), "y"))]
        after.append(snapshot(s.get(("b",), "z")))
        return [snapshot(r) for r in results] + after

    got = _parity(store, scenario)
    assert got[0] == got[2] == (("a",), "x", {"v": 0})
    assert got[-3:] == [(("a",), "x", {"v": 3}), (("a",), "y", {"v": 2}), None]


def test_a_batch_is_one_transaction_time(store: ChronomemStore) -> None:
    store.batch([PutOp(("a",), str(i), {"i": i}) for i in range(5)])
    recorded = {v.recorded_at for i in range(5) for v in store.history(("a",), str(i))}
    assert len(recorded) == 1


@pytest.mark.parametrize(
    "namespace",
    [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo"), ("a", 1)],
)
def test_put_validates_namespace(store: ChronomemStore, namespace: tuple[Any, ...]) -> None:
    for s in (store, InMemoryStore()):
        with pytest.raises(InvalidNamespaceError):
            s.put(namespace, "k", {"v": 1})


def test_langgraph_root_allowed_through_batch_and_deeper(store: ChronomemStore) -> None:
    def scenario(s: BaseStore) -> list[Any]:
        doc = {"foo": "bar"}
        s.put(("foo", "langgraph", "foo"), "bar", doc)
        s.batch([PutOp(("langgraph", "foo"), "bar", doc)])
        out = [
            snapshot(s.get(("foo", "langgraph", "foo"), "bar")),
            snapshot(s.get(("langgraph", "foo"), "bar")),
            snapshot(s.search(("langgraph", "foo"))),
        ]
        s.delete(("langgraph", "foo"), "bar")
        out.append(snapshot(s.get(("langgraph", "foo"), "bar")))
        return out

    _parity(store, scenario)


def test_invalid_op_anywhere_applies_nothing(store: ChronomemStore) -> None:
    bad_ops: list[Any] = [
        GetOp(("a.b",), "k"),
        PutOp(("ok",), "k", {"v": object()}),
        PutOp(("ok",), "k", {1: "int key"}),  # type: ignore[dict-item]
        PutOp(("ok",), "k", ["not", "a", "dict"]),  # type: ignore[arg-type]
        PutOp(("ok",), "k", {"v": 1}, ttl=-1),
        PutOp(("ok",), 7, {"v": 1}),  # type: ignore[arg-type]
        SearchOp(("a",), filter={"n": {"$regex": "x"}}),
        SearchOp(("a",), limit=-1),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("a.b",)),)),
        ListNamespacesOp(max_depth=0),
        "not an op",
    ]
    for bad in bad_ops:
        with pytest.raises((ValueError, TypeError)):
            store.batch([PutOp(("ok",), "first", {"v": 1}), bad])
    assert store.get(("ok",), "first") is None
    assert store.list_namespaces() == []


def test_unknown_filter_operator_is_a_clear_error(store: ChronomemStore) -> None:
    with pytest.raises(InvalidFilter, match=r"unsupported filter operator '\$in'"):
        store.search(("a",), filter={"n": {"$in": [1, 2]}})


def test_non_json_value_names_the_field(store: ChronomemStore) -> None:
    with pytest.raises(InvalidType, match="field 'when'"):
        store.put(("a",), "k", {"when": object()})


def test_a_batch_reads_all_its_items_in_one_query(
    store: ChronomemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.batch([PutOp(("m",), f"k{i}", {"i": i}) for i in range(30)])
    calls: list[dict[str, Any]] = []
    facts = store.memory.facts

    def counting(**kw: Any) -> Any:
        calls.append(kw)
        return facts(**kw)

    monkeypatch.setattr(store.memory, "facts", counting)
    ops: list[Any] = [GetOp(("m",), f"k{i}") for i in range(0, 40, 2)]
    ops += [PutOp(("m",), f"k{i}", {"i": -i}) for i in range(1, 40, 2)]
    ops += [PutOp(("m",), f"k{i}", None) for i in range(20, 30)]
    results = store.batch(ops)
    assert len(calls) == 1  # every item the batch gets or puts, each once
    assert sorted(calls[0]["subjects"]) == sorted({f"lg:m..k{i}" for i in range(40)})
    assert [r.value if r is not None else None for r in results[:20]] == [
        {"i": i} if i < 30 else None for i in range(0, 40, 2)
    ]
    monkeypatch.undo()
    after = {i.key: i.value["i"] for i in store.search(("m",), limit=100)}
    expected = {f"k{i}": (-i if i % 2 else i) for i in range(40) if i < 20 or (i >= 30 and i % 2)}
    assert after == expected


def test_batch_reads_are_chunked(store: ChronomemStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph.store.chronomem import reading

    store.batch([PutOp(("c",), f"k{i}", {"i": i}) for i in range(20)])
    monkeypatch.setattr(reading, "SUBJECTS_PER_QUERY", 7)
    got = store.batch([GetOp(("c",), f"k{i}") for i in range(25)])
    assert [r.value["i"] if r is not None else None for r in got] == [
        *range(20),
        *[None] * 5,
    ]


def test_a_value_changed_by_its_reader_is_not_what_the_next_read_returns(
    store: ChronomemStore,
) -> None:
    """Documents are decoded once when their values hold atoms alone
    (``records.Marker.decode``); a caller changing what a read returned, flat or
    nested, never changes what a later read returns."""
    ns = ("guard",)
    store.put(ns, "flat", {"a": 1, "b": "x"})
    store.put(ns, "nested", {"a": [1, 2], "b": {"c": 3}})
    for _ in range(2):
        for item in [store.get(ns, "flat"), store.get(ns, "nested"), *store.search(ns)]:
            assert item is not None
            item.value["a"] = "changed"
            if isinstance(item.value.get("b"), dict):
                item.value["b"]["c"] = "changed"
    assert store.get(ns, "flat").value == {"a": 1, "b": "x"}  # type: ignore[union-attr]
    assert store.get(ns, "nested").value == {"a": [1, 2], "b": {"c": 3}}  # type: ignore[union-attr]
    assert {i.key: i.value for i in store.search(ns)} == {
        "flat": {"a": 1, "b": "x"},
        "nested": {"a": [1, 2], "b": {"c": 3}},
    }
