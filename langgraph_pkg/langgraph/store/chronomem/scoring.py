"""``SearchItem.score`` as LangGraph's stores mean it: the cosine similarity of
the query to the item's best-matching indexed field.

chronomem's search finds the candidates (lexical, vector and entity legs fused
by reciprocal rank, the temporal predicate inside each leg); the score an item
reports is then the best cosine similarity between the query's embedding and
the stored embeddings of the item's index entries (the same vectors the vector
leg ranks, compared by core: ``Memory.similarities``). Every item the search
reaches gets its cosine, negative included, as LangGraph's ``InMemoryStore``
does; an item without index entries (``index=False``) has no score. Identical texts
have identical vectors, so they get identical scores. Items the
search returned come first, ordered by that score, ties by the fused relevance;
the rest follow newest first (``score="fused"`` on the store reports and
orders by the fused score instead).

An item put again keeps its earlier versions, stale at the search's instant
(ended, replaced by the item's live version). With ``score="fused"`` the search
reaches them too and an item scores at least what its stale versions score
(``chronomem.retrieval.staleness.lift_records``, the rule core applies to a stale
message): the current item answers a question its earlier value matched. The
cosine score keeps LangGraph's meaning (``InMemoryStore``'s number: the item's
fields as they are now, so putting new text lowers the old text's score), and
results are ordered by it, so the cosine mode searches live versions only. Only
live items are returned."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chronomem import Memory, State
from chronomem.model import Held

SCORE_MODES = ("cosine", "fused")
DIGITS = 6  # scores are rounded: the same text scores the same whatever the float noise
SCALE = 10.0**DIGITS  # exact
MAGIC = 1.5 * 2.0**52  # y + MAGIC - MAGIC: y rounded to an integer, ties to even


def rounded(x: float) -> float:
    """``round(x, DIGITS)``, the same float, without its decimal conversion (a
    string built and parsed back: most of a search's rounding cost). ``round``
    gives the double nearest to ``n / 10**DIGITS``, ``n`` the integer nearest to
    ``x * 10**DIGITS`` exactly (ties to even); so does ``n / SCALE`` (``n`` exact
    as a float, an exact divisor, one correctly rounded division) whenever the
    computed product ``y`` is more than 0.0001 from a half: its own rounding
    error is below 1e-6 for ``|x| < 1000``, so the integer nearest to it (``y``
    plus and minus ``MAGIC``: float arithmetic rounds it to an integer, exactly,
    for ``|y| < 2**51``) is then ``n``. Near a half, for ``n == 0`` (``round``
    keeps a negative zero's sign) or large or non-finite ``x``: ``round`` itself."""
    return rounded_all((x,))[0]


def rounded_all(xs: Iterable[float]) -> list[float]:
    """``rounded`` of each of ``xs``, in one loop (a search rounds each hit's cosine:
    no call per hit)."""
    out: list[float] = []
    append = out.append
    for x in xs:
        y = x * SCALE
        if -1e9 < y < 1e9:
            n = (y + MAGIC) - MAGIC
            if n and -0.4999 < y - n < 0.4999:
                append(n / SCALE)
                continue
        append(round(x, DIGITS))
    return out


def searched_states(mode: str) -> tuple[State, ...] | None:
    """What a search reaches: the live versions (``None``: core's default, read
    without a states argument to parse), and with ``score="fused"`` the earlier
    versions items were put over (their scores lift their items')."""
    return (State.LIVE, State.ENDED) if mode == "fused" else None


def leg_cosine(explain: Mapping[str, Any]) -> float | None:
    """The cosine the search already computed for a hit (its query embedding, the
    stored vector): the ``cosine`` a search inside a namespace gives every hit
    (retrieval/within.py: the very value its vector leg scores the hit with, when
    that leg returned it; looked up first, one lookup), else the fact vector
    leg's, when that leg returned the hit."""
    known = explain.get("cosine")
    if known is not None:
        return rounded(float(known))
    legs = explain.get("legs")
    leg = legs.get("fact_vector") if legs else None
    if leg:
        score = leg.get("score")
        if score is not None:
            return rounded(float(score))
    return None


def cosines(
    memory: Memory, query: str, version_ids: Iterable[str], held: Held | None = None
) -> dict[str, float]:
    """The cosine similarity of ``query`` to each version's stored embedding
    (a version without one is left out), rounded: core's ``Memory.similarities``.
    Embeds the query (``held``: unless the lean search held it, with the versions
    it read): only for hits the vector leg did not return (``leg_cosine``) and for
    the items under the prefix no hit reached."""
    ids = set(version_ids)
    if not ids:
        return {}
    found = memory.similarities(query, ids, held=held)
    return dict(zip(found, rounded_all(found.values()), strict=True))


def best(cos: Mapping[str, float], version_ids: Iterable[str]) -> float | None:
    """An item's score: the best cosine of its index entries (``None``: none has one)."""
    return max((cos[v] for v in version_ids if v in cos), default=None)
