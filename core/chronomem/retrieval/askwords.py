"""The words a question uses for a built-in predicate (issue #28).

A fact is indexed as ``subject predicate object`` ("user job title farmer"), so a
question that names the predicate by another word ("What's my occupation?", "Who
is my employer?", "Who is my spouse?") shares no word with the fact it asks for.
``fact_terms`` adds, for a query word that is a built-in predicate's alias
(``predicates.BUILTIN``) or one of the question words below, the words of that
predicate's name, to the fact lexical leg's terms only: the episode legs search
the words as asked (and a store that holds no facts searches exactly as before).

Only the built-in vocabulary is read (no statement is spent on the tenant's
registry); an alias a tenant registers is resolved where a predicate is named
(``predicates=``), not here."""

from __future__ import annotations

from collections.abc import Sequence

from ..predicates import BUILTIN

# question words -> the built-in predicate they ask about (beyond its aliases)
QUESTION_WORDS: dict[str, tuple[str, ...]] = {
    "job_title": ("occupation", "profession", "career"),
    "works_at": ("employer", "employers", "employs", "employed", "company", "firm"),
    "married_to": ("spouse", "wife", "husband", "married", "partner"),
    "lives_in": ("home", "city", "town", "live", "living", "reside", "based", "located"),
    "phone": ("number", "mobile", "cell", "call"),
    "email": ("mail",),
    "likes": ("favorite", "favourite", "prefer", "enjoy", "love"),
    "plans": ("plan", "planning", "planned"),
    "working_on": ("project", "projects", "working"),
}


def _vocabulary() -> dict[str, tuple[str, ...]]:
    """query word -> the words to add (the canonical names' words)."""
    out: dict[str, list[str]] = {}

    def add(word: str, name: str) -> None:
        extra = out.setdefault(word, [])
        for w in name.split("_"):
            if w not in extra and w not in ("at", "to", "in", "on"):
                extra.append(w)

    for spec in BUILTIN:
        for alias in spec.aliases:
            if "_" not in alias:  # a one-word alias a question can use
                add(alias, spec.name)
    for name, words in QUESTION_WORDS.items():
        for w in words:
            add(w, name)
    return {w: tuple(x) for w, x in out.items()}


VOCABULARY = _vocabulary()


def fact_terms(terms: Sequence[str]) -> list[str]:
    """``terms`` and, after them, the predicate words their question words name;
    the same list when none is named."""
    out = list(terms)
    for w in terms:
        for x in VOCABULARY.get(w, ()):
            if x not in out:
                out.append(x)
    return out
