"""The hand-labelled turns, their development / held-out split, and scoring.

Each line of ``labelled_dev.jsonl`` and ``labelled_heldout.jsonl`` is one turn
with the facts a careful human would record *about the speaker*, as
``[predicate, object, op]`` (object ``null``: "ends whatever value", as in
"I quit my job"), a ``tag`` (what the turn exercises) and a ``round`` (when it
was written). Objects are compared by identity key (``fold``); only facts whose
subject is the speaker are scored (a fact about "my brother" is not a fact
about the user).

The split rule, enforced by ``test_split_rule_holds``:

- a turn is *held-out* iff the first hex digit of ``sha256`` of its text
  (whitespace collapsed, lowercased) is one of ``0``-``5`` (6/16 of turns).
  The author of a turn does not choose its side, so the held-out part is not
  easier or harder than the rest;
- exception: turns of round 1 that were development turns before this rule
  existed stay in ``dev`` (rules were tuned on them, so they cannot be held out);
- rule changes are tuned on ``dev`` only. Held-out failures are reported as
  counts, never listed (``test_precision_and_recall`` prints misses for dev
  only), so nobody tunes a rule on a held-out sentence by accident. To grow
  the set, write new turns (next ``round``), and let the hash place them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from chronomem.extraction import RuleExtractor, Turn
from chronomem.identity import fold

HERE = Path(__file__).parent
FILES = {"dev": HERE / "labelled_dev.jsonl", "heldout": HERE / "labelled_heldout.jsonl"}
TRAPS = HERE / "traps.txt"


def is_heldout(text: str) -> bool:
    """The split rule: the hash of the text decides, not the author."""
    digest = hashlib.sha256(" ".join(text.split()).lower().encode()).hexdigest()
    return digest[0] in "012345"


def rows(split: str) -> list[dict]:
    lines = FILES[split].read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def traps() -> list[str]:
    lines = TRAPS.read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]


def key(fact: list | tuple) -> tuple[str, str | None, str]:
    predicate, obj, op = fact
    return predicate, (fold(obj) if obj else None), op


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def beliefs(extractor: RuleExtractor, text: str, at: datetime) -> set[tuple]:
    """What a text would make the store believe about the user: assertions and
    held ends (a plain end only ends what is already known, so it adds none)."""
    (result,) = extractor.extract([Turn(text, occurred_at=at)])
    return {
        key((f.predicate, f.obj, f.op))
        for f in result.facts
        if f.subject == "user" and (f.op == "assert" or f.held)
    }


def user_facts(extractor: RuleExtractor, text: str, at: datetime) -> set[tuple]:
    (result,) = extractor.extract([Turn(text, occurred_at=at)])
    return {key((f.predicate, f.obj, f.op)) for f in result.facts if f.subject == "user"}


def score(labelled: list[dict], at: datetime, extractor: RuleExtractor | None = None) -> Score:
    extractor = extractor or RuleExtractor()
    s = Score()
    for row in labelled:
        expected = {key(f) for f in row["expected"]}
        got = user_facts(extractor, row["text"], at)
        s.tp += len(expected & got)
        s.fp += len(got - expected)
        s.fn += len(expected - got)
        if expected != got:
            s.misses.append(
                f"{row['text']!r}: missing {sorted(expected - got, key=str)}, "
                f"extra {sorted(got - expected, key=str)}"
            )
    return s
