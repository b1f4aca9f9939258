"""What a user query becomes before the legs see it: plain search terms.

Query syntax is never interpreted (every term is later quoted for FTS5 or
PostgreSQL); very common English function words are dropped, because in an
OR-query they match nearly every row and drown the words that carry the
question. The text indexes stem (FTS5 ``porter``, PostgreSQL ``english``), so
the terms are left unstemmed here: each backend stems them the way it stemmed
the stored text. See docs/design.md §6."""

from __future__ import annotations

import re
import unicodedata

# English function words: articles, pronouns, auxiliaries, prepositions,
# conjunctions, question words and a few discourse fillers. Content words
# (nouns, verbs, names, numbers) are never listed. Kept in one place: the
# lexical legs, the entity-graph leg's n-grams and the recall tooling use it.
STOPWORDS = frozenset(
    """
    a about above across after afterwards again against ago all almost along already also
    although always am among an and another any anybody anyone anything anyway anywhere are
    around as at be became because become been before being below beside besides between
    both but by can cannot could did do does doing done down during each either else
    ever every everybody everyone everything everywhere few for from further get gets got
    had has have having he her here hers herself him himself his how however i if in
    into is it its itself just least less many may me might mine more most mostly much
    must my myself neither never no nobody none nor not nothing now of off often on once
    one ones only onto or other others otherwise our ours ourselves out over own per
    perhaps please quite rather really same shall she should since so some somebody
    someone something sometime sometimes somewhere such than that the their theirs them
    themselves then there therefore these they this those though through thus to too
    toward towards under until up upon us very was we well were what whatever when
    whenever where wherever whether which whichever while who whoever whom whose why will
    with within without would yet you your yours yourself yourselves
    s t d ll m re ve don didn doesn isn wasn aren weren haven hasn hadn won wouldn
    couldn shouldn
    oh ok okay yeah yes hey hi hello
    """.split()  # noqa: SIM905 - a word list reads better as prose
)

MAX_TERMS = 32
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """The words of a text, NFKC-normalized and casefolded."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def query_terms(query: str) -> list[str]:
    """The distinct content words of a query, in order (at most ``MAX_TERMS``).
    A query made only of stopwords keeps its words: something is still searched."""
    all_words = words(query)
    terms = [w for w in all_words if w not in STOPWORDS] or all_words
    return list(dict.fromkeys(terms))[:MAX_TERMS]
