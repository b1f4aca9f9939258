"""Hostile input to the multi-row writes: ``remember_many`` (one transaction: all
or nothing), ``add`` (messages -> episodes -> extracted facts) and
``erase_subject``, fuzzed; and the deterministic cases (two values for one ONE
slot in one batch, case-folding letters in a chat message)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import (
    InvalidInput,
    InvalidType,
    Memory,
    NotFound,
)
from chronomem.identity import fold

from .._support import check_invariants
from ._inputs import (
    ALL_STATES,
    AVOID,
    FUZZ,
    WRONG,
    Harness,
    is_text,
    or_wrong,
    texts,
)

CASEFOLD_CHARS = "\u0130\u0131\u017f"  # İ ı ſ


def _strip_casefold_chars(msgs: Any) -> Any:
    table = str.maketrans("", "", CASEFOLD_CHARS)
    if isinstance(msgs, str):
        return msgs.translate(table)
    if isinstance(msgs, list):
        return [_strip_casefold_chars(x) for x in msgs]
    if isinstance(msgs, dict):
        return {k: _strip_casefold_chars(v) for k, v in msgs.items()}
    return msgs


@FUZZ
@given(data=st.data())
def test_batches_and_extraction_refuse_or_apply(h: Harness, data: st.DataObject) -> None:
    """remember_many (one transaction: all or nothing), add (messages -> episodes ->
    extracted facts) and erase_subject with hostile values."""
    b = h.backend
    m = h.fresh()
    rows = data.draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "subject": or_wrong(texts(b)),
                    "predicate": st.just("likes"),
                    "obj": or_wrong(texts(b)),
                }
            ),
            min_size=1,
            max_size=4,
        ),
        "rows",
    )
    r, err = h.attempt("remember_many", lambda: m.remember_many(rows))
    valid = all(is_text(x["subject"]) and is_text(x["obj"]) for x in rows)
    assert (err is None) == valid, (rows, err)
    if r is not None:
        # Rows naming the same (folded) fact are one fact; every row is stored as given
        # or as an equal-keyed row of the same batch.
        stored = {(f.subject, f.object) for f in m.facts(states=ALL_STATES)}
        assert stored <= {(x["subject"], x["obj"]) for x in rows}
        for x in rows:
            assert any(
                fold(sub) == fold(x["subject"]) and fold(ob) == fold(x["obj"]) for sub, ob in stored
            )

    msgs = data.draw(
        st.one_of(
            texts(b),
            st.lists(
                st.fixed_dictionaries(
                    {
                        "role": st.sampled_from(["user", "assistant", "system", "tool"]),
                        "content": texts(b),
                    }
                ),
                max_size=3,
            ),
            st.lists(texts(b), max_size=3),
            WRONG,
        ),
        "messages",
    )
    if AVOID["casefold_chars"]:
        msgs = _strip_casefold_chars(msgs)
    out, err = h.attempt("add", lambda: m.add(msgs))
    if err is None:
        assert out is not None
        for eid in out.episode_ids:
            m.get_episode(eid)  # every episode it reports exists and reads back

    subject = data.draw(or_wrong(texts(b)), "erase_subject")
    gone, err = h.attempt("erase_subject", lambda: m.erase_subject(subject))
    if err is None:
        assert gone is not None and gone["versions"] >= 1
        assert m.facts(subject=subject, states=ALL_STATES) == []
    else:
        assert isinstance(err, NotFound | InvalidType | InvalidInput), err


def test_batch_writes_to_one_slot_leave_no_dangling_successor(store: Memory) -> None:
    """``remember_many`` with two values for one ONE slot: the version the first
    write creates is closed by the second in the same transaction, so it is never
    stored; the old value's ``superseded_by`` must not point at it. (Fixed in core;
    kept as a regression test.)"""
    store.remember("ann", "lives_in", "oslo")
    store.remember_many(
        [
            {"subject": "ann", "predicate": "lives_in", "obj": "paris"},
            {"subject": "ann", "predicate": "lives_in", "obj": "rome"},
        ]
    )
    assert [f.object for f in store.facts(subject="ann")] == ["rome"]
    check_invariants(store.url)


def test_batch_receipt_names_only_stored_facts(store: Memory) -> None:
    """Same batch: the receipt must not name a fact that has no stored version
    (a caller would get NotFound from why()/get() for an id the write returned)."""
    r = store.remember_many(
        [
            {"subject": "ann", "predicate": "lives_in", "obj": "paris"},
            {"subject": "ann", "predicate": "lives_in", "obj": "rome"},
        ]
    )
    for fid in r.fact_ids:
        assert store.get(fid), f"the receipt names fact {fid}, which has no version"


@pytest.mark.parametrize("text", ["İ am from Paris", "ı live in Rome", "I doeſnt like tea"])
def test_add_with_case_folding_letters(store: Memory, text: str) -> None:
    """Turkish dotted/dotless i and the long s in a chat message: extracted or not,
    never a crash of the ingestion path."""
    r = store.add(text)
    assert len(r.episode_ids) == 1
