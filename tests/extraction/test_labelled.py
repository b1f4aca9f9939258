"""Precision and recall of the rule extractor on hand-labelled turns, and the
trap corpus that must yield no fact about the user.

See ``labelled.py`` for the data and the development / held-out split rule.
The floors sit just under the measured values, so a regression fails; the
held-out figures are the honest estimate for unseen phrasing."""

from __future__ import annotations

import pytest

from chronomem.extraction import RuleExtractor

from . import labelled
from .conftest import REF

FLOORS = {
    # split: (precision floor, recall floor)
    "dev": (0.995, 0.985),
    "heldout": (0.95, 0.86),
}
PREDICATES = {
    "name", "lives_in", "works_at", "job_title", "born_in", "birthday", "nationality", "age",
    "married_to", "email", "phone", "likes", "dislikes", "speaks", "allergic_to", "has",
    "plans", "working_on",
}  # fmt: skip


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_labelled_files_are_well_formed(split: str):
    rows = labelled.rows(split)
    assert rows
    for r in rows:
        assert isinstance(r["text"], str) and r["text"].strip()
        assert isinstance(r["tag"], str) and r["round"] in range(1, 20)
        for predicate, obj, op in r["expected"]:
            assert predicate in PREDICATES
            assert op in ("assert", "end")
            assert obj is None or (isinstance(obj, str) and obj.strip())


def test_the_set_is_big_and_varied():
    dev, held = labelled.rows("dev"), labelled.rows("heldout")
    assert len(dev) + len(held) >= 400
    assert len(held) >= 100
    everything = dev + held
    assert sum(not r["expected"] for r in everything) >= 150  # non-facts, support, traps
    tags = {r["tag"].split("/")[0] for r in everything}
    assert {"support", "small_talk", "job_title", "phone", "plans", "working_on"} <= tags
    texts = [" ".join(r["text"].split()).lower() for r in everything]
    assert len(texts) == len(set(texts)), "a turn is in the set twice"


def test_split_rule_holds():
    """Held-out turns are exactly the ones the hash puts there (round-1 dev
    turns, tuned on before the rule existed, stay in dev)."""
    for r in labelled.rows("heldout"):
        assert labelled.is_heldout(r["text"]), r["text"]
    for r in labelled.rows("dev"):
        if r["round"] >= 2 or r["tag"] == "heldout":
            assert not labelled.is_heldout(r["text"]), r["text"]


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_precision_and_recall(split: str, capsys: pytest.CaptureFixture[str]):
    rows = labelled.rows(split)
    s = labelled.score(rows, REF)
    with capsys.disabled():
        print(
            f"\n[rule extractor, {split}] turns={len(rows)} expected facts={s.tp + s.fn} "
            f"precision={s.precision:.3f} recall={s.recall:.3f} (tp={s.tp} fp={s.fp} fn={s.fn})"
        )
    # held-out misses are never listed: rules are not tuned on them
    detail = "\n".join(s.misses) if split == "dev" else f"{len(s.misses)} turns differ"
    p_floor, r_floor = FLOORS[split]
    assert s.precision >= p_floor, detail
    assert s.recall >= r_floor, detail


def test_trap_corpus_yields_no_user_facts():
    """Weather in a city, visits, questions, hedges, hypotheticals, quotes,
    reported speech, third persons, sarcasm, fillers, support-desk text: nothing
    the store would come to believe about the user (an end that was not said to
    have held, "I quit Facebook", may still end a value already known)."""
    extractor = RuleExtractor()
    traps = labelled.traps()
    assert len(traps) >= 100
    noisy = [(t, sorted(labelled.beliefs(extractor, t, REF), key=str)) for t in traps]
    assert [(t, f) for t, f in noisy if f] == []


def test_labelled_non_facts_yield_nothing():
    extractor = RuleExtractor()
    quiet = [r for r in labelled.rows("dev") if not r["expected"]]
    assert len(quiet) >= 80
    noisy = [(r["text"], labelled.user_facts(extractor, r["text"], REF)) for r in quiet]
    assert [(t, f) for t, f in noisy if f] == []
