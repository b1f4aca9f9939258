"""What a batch of puts costs the client in Python calls per item (issue #32).

A batch of puts is validated, encoded and planned item by item in the adapter;
work that is the same for every item of a namespace (its labels' check, its
subject prefix, its index entries) is done once per namespace, not once per put.
Counted: the calls cProfile sees made by the adapter's own functions (Python
functions of ``langgraph.store.chronomem`` and the calls they make), for the
marginal item of a batch of new items. Timings are measured in
``benchmarks/peers.py``. Any bad input is still refused, all or nothing."""

from __future__ import annotations

import cProfile
import os
import pstats
from typing import Any

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp

import langgraph.store.chronomem as package
from chronomem import InvalidInput, InvalidType
from langgraph.store.chronomem import ChronomemStore
from langgraph.store.chronomem import store as store_module

from .conftest import StoreFactory
from .fakes import CharEmbeddings

ADAPTER = os.path.dirname(package.__file__)


def _puts(start: int, n: int) -> list[PutOp]:
    """``n`` new items over five namespaces, each with a text to index."""
    return [
        PutOp(("bench", f"ns{i % 5}"), f"k{i}", {"text": f"note {i}", "n": i})
        for i in range(start, start + n)
    ]


def _adapter_calls(store: ChronomemStore, ops: list[PutOp]) -> int:
    """The calls made by the adapter's functions while ``store`` runs ``ops``."""
    prof = cProfile.Profile()
    prof.enable()
    store.batch(ops)
    prof.disable()
    total = 0
    for (_file, _line, _name), (_cc, _nc, _tt, _ct, callers) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
        for (caller_file, _l, _n), counts in callers.items():
            if caller_file.startswith(ADAPTER):
                total += counts[0] if isinstance(counts, tuple) else counts
    return total


def test_adapter_calls_per_put(make_store: StoreFactory) -> None:
    store = make_store(index={"dims": 8, "embed": CharEmbeddings(8), "fields": ["text"]})
    store.batch(_puts(0, 50))  # warm: caches, the namespace index, prepared statements
    small = _adapter_calls(store, _puts(1000, 100))
    large = _adapter_calls(store, _puts(2000, 300))
    per_item = (large - small) / 200
    # 33 now; 50 before: the namespace's labels checked, its prefix joined, the index
    # entry's predicate named, the item's namespace collected, its value's keys checked
    # in a list, its key and TTL checked by calls, and the op's type tested again, per put
    assert per_item <= 38, per_item


def test_a_batch_checks_each_namespace_once(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store()
    checked: list[Any] = []
    real = store_module.validate_op_namespace

    def counting(op: Any) -> None:
        checked.append(op.namespace)
        real(op)

    monkeypatch.setattr(store_module, "validate_op_namespace", counting)
    store.batch(_puts(0, 40))
    assert sorted(checked) == sorted({("bench", f"ns{i}") for i in range(5)})
    assert store.get(("bench", "ns3"), "k8") is not None


class _Label(str):
    """A label of a ``str`` subclass: a valid label."""


BAD: list[tuple[Any, type[Exception], str]] = [
    (PutOp(("bench", "a.b"), "k", {"text": "x"}), InvalidNamespaceError, "periods"),
    (PutOp(("bench", ""), "k", {"text": "x"}), InvalidNamespaceError, "empty"),
    (PutOp(("bench", "x\x00"), "k", {"text": "x"}), InvalidNamespaceError, "NUL"),
    (PutOp(("bench", 1), "k", {"text": "x"}), InvalidNamespaceError, "must be strings"),  # type: ignore[arg-type]
    (PutOp(("bench", ["ns0"]), "k", {"text": "x"}), InvalidNamespaceError, "must be strings"),  # type: ignore[arg-type]
    (PutOp(["bench", "a.b"], "k", {"text": "x"}), InvalidNamespaceError, "periods"),  # type: ignore[arg-type]
    (PutOp(("bench", "ns0"), 7, {"text": "x"}), InvalidType, "key must be a str"),  # type: ignore[arg-type]
    (PutOp(("bench", "ns0"), "k", ["x"]), InvalidType, "value must be a dict"),  # type: ignore[arg-type]
    (PutOp(("bench", "ns0"), "k", {1: "x"}), InvalidType, "value keys must be str"),  # type: ignore[dict-item]
    (PutOp(("bench", "ns0"), "k", {"text": object()}), InvalidType, "not JSON"),
    (PutOp(("bench", "ns0"), "k", {"text": "\ud800"}), InvalidInput, "surrogate"),
    (PutOp(("bench", "ns0"), "k", {"text": "x"}, ttl=-1), InvalidInput, "ttl"),
    (PutOp(("bench", "ns0"), "k", {"text": "x"}, index=3), InvalidType, "index must be"),  # type: ignore[arg-type]
    (GetOp(("bench", "a.b"), "k"), InvalidNamespaceError, "periods"),
]


@pytest.mark.parametrize(("bad", "error", "says"), BAD)
def test_bad_input_after_good_puts_is_refused(
    store: ChronomemStore, bad: Any, error: type[Exception], says: str
) -> None:
    """A bad op after puts into the same namespaces (already checked in this batch)
    is refused as before, and the batch writes nothing."""
    with pytest.raises(error, match=says):
        store.batch([*_puts(0, 10), bad])
    assert store.get(("bench", "ns0"), "k0") is None
    assert store.search(("bench",), limit=5) == []


def test_a_str_subclass_label_is_a_label(store: ChronomemStore) -> None:
    store.batch([*_puts(0, 5), PutOp(("bench", _Label("ns1")), "sub", {"text": "y"})])
    item = store.get(("bench", "ns1"), "sub")
    assert item is not None and item.value == {"text": "y"}
