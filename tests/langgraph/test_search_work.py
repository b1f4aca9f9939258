"""The Python-level work of a LangGraph search inside one namespace (issue #32:
``benchmarks/peers.py``'s "search inside one namespace of 100 items" row),
counted, never timed: the calls chronomem's own code makes (its functions, and
the builtins and methods they call), per search, over searches of a namespace
whose rows are held (``retrieval/within.py``)."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.store.base import PutOp

from chronomem.embedding import HashingEmbedder
from langgraph.store.chronomem import ChronomemStore

NS = ("bench", "ns100")
ADJ = ["red", "quiet", "spring", "violet", "wild", "old", "bright", "cold", "green", "late"]
NOUN = ["gallery", "village", "baking", "garden", "river", "music", "harbor", "lamp", "trail"]
# Per search: 574 at the change that set this (issue #32, round fifteen: a query's
# words' spans in the hashing table kept as ints, a query of a few words added word
# by word; the TTL refresh not called when no returned item has a TTL), 581
# before it (round twelve: the hits'
# cosines rounded in one loop, scoring.rounded_all, no call per hit; a held
# namespace's statement outside a transaction; fused votes from kept tuples; a
# graph leg without n-grams when no entity key can match), 593 before it
# (round eleven: the hits' cosines
# rounded without ``round``'s decimal round trip, a page's records built with their
# documents decoded, its ``SearchItem``s filled in directly; a shorter loop for
# items with one hit each, 566, was a second copy of the scoring loop and was
# dropped), 590 before it, 600 at the
# change before (round ten: the query's vector
# converted and normalized once, the vector leg's cosines read by place, ASCII
# punctuation folded in one translate, a store.search straight to the reader),
# 708 before it, 778 before that (each hit item's
# document decoded again by every search: ``Marker.decode`` keeps a small flat
# one; each page item's document looked up thrice: ``Record.item_parts``), 1,188
# before that (core built a
# ``Fact``, a ``Hit`` and an explanation per kept hit, and a ``Fused`` value with
# per-leg dicts per candidate, that the adapter threw away: now
# ``Memory.search_scored``'s rows and scores; the vector leg's sort key tuples
# per row: ``np.lexsort``; BM25's length normalisation per row and search: once
# per lexicon; ``is_doc`` per hit: per page item), 1,457 before that (the closing
# read run, and its statement built, though the tenant's clock stamp had not
# moved: ``HeldRows.stamped``; a sort key call per scored row in the lexical and
# vector legs and a generator resume per term; a half-life call and a ``get``
# per fused hit; ``leg_cosine``'s calls per hit in the adapter), 1,859
# the round before (sources read though the tenant cites no episode, and bound
# value by value; a sort key call per fused hit; the adapter's per-hit lookups of
# the vector leg's score, a dict lookup per hit for each item's best, a key call
# per hit item).
CEILING = 574


def _ours(frame: Any) -> bool:
    name = frame.f_code.co_filename
    return f"{os.sep}chronomem{os.sep}" in name


def test_a_namespace_search_stays_within_its_python_work(tmp_path: Path) -> None:
    inner = HashingEmbedder()

    def embed(texts: Any) -> list[list[float]]:
        return np.asarray(inner.embed(list(texts))).tolist()  # type: ignore[no-any-return]

    store = ChronomemStore(
        str(tmp_path / "s.db"), index={"dims": inner.dim, "embed": embed, "fields": ["text"]}
    )
    try:
        rng = random.Random(5)
        texts = [f"{rng.choice(ADJ)} {rng.choice(NOUN)} note {j}" for j in range(100)]
        store.batch([PutOp(NS, f"k{j}", {"text": t}) for j, t in enumerate(texts)])
        queries = [" ".join(t.split()[:2]) for t in texts[:20]]
        for q in queries:  # the namespace's rows held, its statements compiled
            store.search(NS, query=q, limit=10)
        calls = 0

        def count(frame: Any, event: str, arg: Any) -> None:
            nonlocal calls
            if event in ("call", "c_call") and _ours(frame):
                calls += 1

        sys.setprofile(count)
        try:
            for q in queries:
                store.search(NS, query=q, limit=10)
        finally:
            sys.setprofile(None)
        assert calls / len(queries) <= CEILING, calls / len(queries)
    finally:
        store.close()
