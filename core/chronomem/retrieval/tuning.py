"""Every knob of the retrieval's ranking in one place: ``SearchTuning``, and the
recipe chronomem ships, ``DEFAULT``.

The modules that rank (fusion.py, legs.py, search.py, spread.py) read their
weights, boosts and cuts from ``DEFAULT`` (their module-level names are its
fields under the old names). How each value was chosen, with the sweeps behind
it, is in benchmarks/HISTORY.md ("How the retrieval constants were chosen");
what each does is said here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SearchTuning:
    # -- fusion (fusion.py): a leg's vote is weight / (rrf_k + rank) ----------------
    rrf_k: int = 60
    # final = rrf * (1 - w + w * recency), recency halving per the predicate's half-life
    recency_weight: float = 0.2
    lexical_weight: float = 1.0
    # the fact legs' votes count this much of an episode leg's: a fact extracted from
    # a conversation restates a turn, so at equal rank the turn (the evidence) goes first
    fact_weight: float = 0.75
    # the entity-graph leg votes for every fact about a named entity: little, and only
    # its first graph_cap facts, so it can lift a fact, never flood the top k
    graph_weight: float = 0.25
    graph_cap: int = 5
    # the vector legs' weight: the offline hashing embedder only re-finds the lexical
    # leg's words (its votes order what that leg missed and break near ties); a
    # learned embedder captures meaning (an embedder's own ``vector_weight`` wins)
    hashing_vector_weight: float = 0.001
    model_vector_weight: float = 0.2
    # a query naming a time multiplies a hit inside it by 1 + time_boost (an episode
    # up to time_slack_days after it counts): a boost, not a filter
    time_boost: float = 0.5
    time_slack_days: float = 0
    # ... and when that time is short (at most window_days) and past, the episodes of
    # it (up to window_slack_days after it), ranked by cosine among themselves, vote
    # with this weight (the "episode_window" leg: the window's episodes among the
    # text index's first window_depth matches, fused with their cosine ranking)
    window_weight: float = 1.0
    window_depth: int = 1000
    window_days: float = 7
    window_slack_days: float = 0
    # -- episodes (search.py, legs.py) ------------------------------------------------
    # an episode spoken by someone the query names scores 1 + speaker_boost times
    # its votes ("what did Gina say", "what did I say")
    speaker_boost: float = 0.3
    # the conversational context: an episode found offers its next / previous
    # neighbour (within neighbour_scan positions, same scope) these shares of its votes
    next_share: float = 0.9
    prev_share: float = 0.9
    # ... except that an assistant's turn (role "assistant") offers this share instead:
    # in a chat with an assistant the user's own turns carry what the user said, and
    # the assistant's long replies, found for their own words, lifting the user turns
    # around them filled the top k with one conversation (issue #28)
    assistant_share: float = 0.0
    neighbour_scan: int = 8
    # -- the cut (spread.py) ----------------------------------------------------------
    # a counting or comparing question: beyond a conversation's first spread_free
    # hits, each further one scores spread_decay times less per hit already placed
    spread_free: int = 1
    spread_decay: float = 0.7


DEFAULT = SearchTuning()
