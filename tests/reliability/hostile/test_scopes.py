"""Hostile scope names: ``scoped`` refuses or round-trips every level's name, a
sibling tenant never sees the view's facts, and erasure works for long tenant names."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import (
    Memory,
)

from ._inputs import (
    FUZZ,
    Harness,
    maybe,
    name_texts,
    or_wrong,
)


@FUZZ
@given(data=st.data())
def test_scope_names_round_trip_or_refuse(h: Harness, data: st.DataObject) -> None:
    b = h.backend
    levels = {
        lv: data.draw(maybe(or_wrong(name_texts(b, 57 if lv == "tenant" else 255))), lv)
        for lv in ("tenant", "user", "agent", "session")
    }
    view, err = h.attempt("scoped", lambda: h.memory.scoped(**levels))
    # documented: non-empty, no surrounding blanks, no control characters (they
    # would make the scope key ambiguous), at most 255 characters
    valid = all(
        v is None
        or (
            isinstance(v, str)
            and v == v.strip()
            and v != ""
            and len(v) <= 255
            and not any(unicodedata.category(ch) in ("Cc", "Cs") for ch in v)
        )
        for v in levels.values()
    )
    assert (err is None) == valid, (levels, err)
    if view is None:
        return
    r = view.remember("ann", "likes", "tea")
    (f,) = view.get(r.fact_ids[0])
    want = {"tenant": levels["tenant"] or "default"} | {
        k: v for k, v in levels.items() if k != "tenant" and v is not None
    }
    assert f.scope == want
    assert [x.version_id for x in view.facts(subject="ann")] == [f.version_id]
    # The same names one level over never see it.
    sibling = h.memory.scoped(tenant=f"{want['tenant']}-sibling")
    assert sibling.facts(subject="ann") == []
    view.erase(r.fact_ids[0])


def test_erase_works_for_long_tenant_names(store: Memory, request: pytest.FixtureRequest) -> None:
    """Erasure must never be impossible: a tenant name of 60 characters (an e-mail
    address, a URL) is a valid scope, so erase and purge must work for it."""
    t = store.scoped(tenant="tenant-" + "x" * 53)
    fid = t.remember("ann", "likes", "tea").fact_ids[0]
    assert t.erase(fid)["versions"] == 1
    t.remember("ann", "likes", "coffee")
    assert t.purge()["versions"] == 1
