"""Why is chronomem's evidence recall what it is? Ablations on the recall benchmark.

    .venv/bin/python benchmarks/ablate.py                       # LoCoMo, hashing, the standard set
    .venv/bin/python benchmarks/ablate.py --dataset longmemeval --embedder minilm
    .venv/bin/python benchmarks/ablate.py --variants default,lexonly,porter+stopx+wvec0.5

Each variant is a ``+``-joined list of patches applied IN THIS PROCESS ONLY (core is
not edited): monkeypatches of the fusion, the stopword list, the FTS5 tokenizer or
the embedder, so a suggestion for core comes with a measured effect. Patches:

    lexonly / veconly   only the lexical / only the vector legs (``legs_enabled``)
    nograph             every leg but entity_graph
    rrfkN               RRF k = N (default 60)
    wvecX               weighted RRF: vector legs weigh X, lexical legs 1
    wfactX              weighted RRF: fact legs weigh X, episode legs 1
    blend               memvara-style score blend instead of RRF: mean over the legs that
                        ran of absolute relevance (cosine clamped to [0,1]; BM25 per
                        query term mapped by x / (x + 1.5)); a leg that ran without
                        returning the item counts 0
    porter              (no-op: FTS5 'porter unicode61 remove_diacritics 2' is the default since schema v3)
    stopx               a larger stopword list for the lexical legs (memvara's)
    hashN               HashingEmbedder(dim=N) instead of 256
    hashstop            the hashing embedder skips stopwords
    nospeaker           (LoCoMo) episode text without the "<speaker>: " prefix
    ctxN                each turn indexed with the N turns before it in its session
                        (prepended to the episode text: what an episode ``index_text``
                        with a context window would do)"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import common, recall

DEFAULT_VARIANTS = (
    "default,lexonly,veconly,rrfk10,rrfk120,wvec0.5,wvec0.25,blend,porter,stopx,"
    "porter+stopx,porter+stopx+wvec0.5,porter+stopx+blend,hash1024,hashstop,hash1024+hashstop"
)

MEMVARA_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "such",
        "other",
        "another",
        "all",
        "any",
        "both",
        "each",
        "either",
        "every",
        "few",
        "many",
        "most",
        "neither",
        "no",
        "none",
        "some",
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "us",
        "our",
        "ours",
        "ourselves",
        "you",
        "your",
        "yours",
        "yourself",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "it",
        "its",
        "they",
        "them",
        "their",
        "theirs",
        "one",
        "ones",
        "who",
        "whom",
        "whose",
        "what",
        "which",
        "whatever",
        "whichever",
        "when",
        "where",
        "why",
        "how",
        "whether",
        "anyone",
        "anything",
        "everyone",
        "everything",
        "someone",
        "something",
        "nothing",
        "nobody",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "doing",
        "done",
        "have",
        "has",
        "had",
        "having",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "of",
        "to",
        "in",
        "into",
        "on",
        "onto",
        "at",
        "for",
        "from",
        "by",
        "with",
        "without",
        "within",
        "about",
        "above",
        "below",
        "over",
        "under",
        "between",
        "through",
        "during",
        "after",
        "before",
        "again",
        "further",
        "up",
        "down",
        "out",
        "off",
        "and",
        "or",
        "but",
        "if",
        "then",
        "than",
        "so",
        "as",
        "because",
        "while",
        "until",
        "unless",
        "though",
        "although",
        "there",
        "here",
        "also",
        "just",
        "only",
        "very",
        "too",
        "much",
        "more",
        "less",
        "least",
        "same",
    ]
)
LEXICAL = ("fact_lexical", "episode_lexical")
VECTOR = ("fact_vector", "episode_vector")
FACT_LEGS = ("fact_lexical", "fact_vector", "entity_graph")


class Variant:
    def __init__(self, spec: str):
        self.spec = spec
        self.patches = [p for p in spec.split("+") if p and p != "default"]
        self.legs: list[str] | None = None
        self.embed_dim = 256
        self.embed_stop = False
        self.porter = False
        self.speaker = True
        self.ctx = 0
        self.fuse: Any = None
        self.rrf_k: int | None = None
        self.stopx = False
        weights: dict[str, float] = {}
        all_legs = (
            "fact_lexical",
            "fact_vector",
            "entity_graph",
            "episode_lexical",
            "episode_vector",
        )
        for p in self.patches:
            if p == "lexonly":
                self.legs = [*LEXICAL]
            elif p == "veconly":
                self.legs = [*VECTOR]
            elif p == "nograph":
                self.legs = [x for x in all_legs if x != "entity_graph"]
            elif p.startswith("rrfk"):
                self.rrf_k = int(p[4:])
            elif p.startswith("wvec"):
                for leg in VECTOR:
                    weights[leg] = float(p[4:])
            elif p.startswith("wfact"):
                for leg in FACT_LEGS:
                    weights[leg] = float(p[5:])
            elif p == "blend":
                self.fuse = "blend"
            elif p == "porter":
                self.porter = True
            elif p == "stopx":
                self.stopx = True
            elif p == "hashstop":
                self.embed_stop = True
            elif p.startswith("hash"):
                self.embed_dim = int(p[4:])
            elif p == "nospeaker":
                self.speaker = False
            elif p.startswith("ctx"):
                self.ctx = int(p[3:])
            else:
                raise SystemExit(f"unknown patch {p!r}")
        if weights and self.fuse is None:
            self.fuse = weights

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        import importlib

        from chronomem.retrieval import fusion, legs, querytime

        # the package re-exports the function ``search``; the module is wanted here
        search_mod = importlib.import_module("chronomem.retrieval.search")

        saved = (fusion.RRF_K, querytime.STOPWORDS, search_mod.fuse, search_mod.legs.query_terms)
        try:
            if self.rrf_k is not None:
                fusion.RRF_K = self.rrf_k
            if self.stopx:
                querytime.STOPWORDS = frozenset(querytime.STOPWORDS | MEMVARA_STOPWORDS)
            if isinstance(self.fuse, dict):
                search_mod.fuse = weighted_fuse(self.fuse)
            elif self.fuse == "blend":
                search_mod.fuse, legs.query_terms = blend_fuse(saved[3])
            yield
        finally:
            fusion.RRF_K, querytime.STOPWORDS, search_mod.fuse, legs.query_terms = saved


def weighted_fuse(weights: dict[str, float]) -> Any:
    from chronomem.retrieval import fusion

    def fuse(rankings: Any, _weights: Any = None) -> dict[tuple[str, str], Any]:
        out: dict[tuple[str, str], Any] = {}
        for leg, (kind, ranked) in rankings.items():
            w = weights.get(leg, 1.0)
            for rank, (item_id, score) in enumerate(ranked, start=1):
                f = out.setdefault((kind, item_id), fusion.Fused(kind, item_id))
                f.rrf += w / (fusion.RRF_K + rank)
                f.legs[leg] = {"rank": rank, "score": score}
        return out

    return fuse


def blend_fuse(query_terms: Any) -> tuple[Any, Any]:
    from chronomem.retrieval import fusion

    state = {"terms": 1}

    def terms(query: str) -> list[str]:
        out: list[str] = query_terms(query)
        state["terms"] = max(1, len(out))
        return out

    def rel(leg: str, score: float) -> float:
        if "lexical" in leg:
            per = max(0.0, score) / state["terms"]
            return per / (per + 1.5)
        if "vector" in leg:
            return max(0.0, min(1.0, score))
        return max(0.0, min(1.0, score))  # graph: 1 or 0.5

    def fuse(rankings: Any, _weights: Any = None) -> dict[tuple[str, str], Any]:
        out: dict[tuple[str, str], Any] = {}
        ran: dict[str, list[str]] = {}
        for leg, (kind, ranked) in rankings.items():
            if ranked:
                ran.setdefault(kind, []).append(leg)
            for rank, (item_id, score) in enumerate(ranked, start=1):
                f = out.setdefault((kind, item_id), fusion.Fused(kind, item_id))
                f.legs[leg] = {"rank": rank, "score": score}
        for f in out.values():
            legs_ = ran.get(f.kind, [])
            vals = [rel(leg, f.legs[leg]["score"]) if leg in f.legs else 0.0 for leg in legs_]
            f.rrf = sum(vals) / len(vals) if vals else 0.0
        return out

    return fuse, terms


class StopHashing:
    def __init__(self, dim: int, stop: bool):
        from chronomem.embedding import HashingEmbedder
        from chronomem.retrieval import legs

        self.inner = HashingEmbedder(dim=dim)
        self.dim = dim
        self.stop = frozenset(legs.STOPWORDS | MEMVARA_STOPWORDS) if stop else frozenset()
        self.name = f"hashing-v1-{dim}" + ("-stop" if stop else "")

    def embed(self, texts: Sequence[str]) -> Any:
        import re

        if self.stop:
            word = re.compile(r"\w+", re.UNICODE)
            texts = [
                " ".join(w for w in word.findall(t.casefold()) if w not in self.stop) or t
                for t in texts
            ]
        return self.inner.embed(list(texts))


def porterize(mem: Any) -> None:
    """Rebuild the (empty) FTS5 tables with the porter stemmer in front of unicode61."""
    with mem.backend.write() as conn:
        for fts in ("cm_versions_fts", "cm_episodes_fts"):
            conn.exec_driver_sql(f"DROP TABLE {fts}")
            conn.exec_driver_sql(
                f"CREATE VIRTUAL TABLE {fts} USING fts5(body, content='', "
                "tokenize='porter unicode61 remove_diacritics 2')"
            )


def _texts_after(ds: recall.Dataset, v: Variant) -> list[str]:
    """The episode texts a variant will ingest (to pre-embed them for a model embedder)."""
    out = []
    for c in ds.corpora:
        for sess in c.sessions:
            texts = [t.text if v.speaker else t.text.split(": ", 1)[-1] for t in sess]
            for i in range(len(texts)):
                out.append(" \n ".join(texts[max(0, i - v.ctx) : i + 1]) if v.ctx else texts[i])
    return out


def run_variant(
    ds: recall.Dataset, v: Variant, embedder_kind: str, arm: str, base_emb: Any
) -> dict[str, Any]:
    if embedder_kind == "hashing" and (v.embed_dim != 256 or v.embed_stop):
        emb: Any = StopHashing(v.embed_dim, v.embed_stop)
    else:
        emb = base_emb
    if not v.speaker:
        for c in ds.corpora:
            for t in c.turns:
                t.text = t.text.split(": ", 1)[-1]
    if v.ctx:
        for c in ds.corpora:
            for sess in c.sessions:
                texts = [t.text for t in sess]
                for i, t in enumerate(sess):
                    t.text = " \n ".join(texts[max(0, i - v.ctx) : i + 1])
    legs = v.legs
    if legs is not None and arm == "episodes":
        legs = [x for x in legs if x.startswith("episode")]

    def make() -> recall.System:
        s = recall.Chronomem(emb, None, legs)
        if v.porter:  # the default since schema v3: only a store older than that lacks it
            pass
        return s

    with v.applied():
        t = time.perf_counter()
        res = recall.run_arm(ds, "chronomem", make, embedder_kind, arm, recall.DEPTH, show=False)
        wall = time.perf_counter() - t
    return {"variant": v.spec, "result": res, "wall_s": wall}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--dataset", default="locomo", choices=("locomo", "longmemeval"))
    ap.add_argument("--embedder", default="hashing", choices=("hashing", "minilm"))
    ap.add_argument("--arm", default="episodes", choices=("episodes", "facts"))
    ap.add_argument("--variants", default=DEFAULT_VARIANTS)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)

    loader = recall.load_locomo if args.dataset == "locomo" else recall.load_longmemeval
    path = common.DATA / (
        "locomo10.json" if args.dataset == "locomo" else "longmemeval_oracle.json.gz"
    )
    base_emb: Any = common.make_embedder(args.embedder)
    if args.embedder != "hashing":
        base_emb = common.CachedEmbedder(base_emb)
        base_emb.warm([t.text for c in loader(path, args.limit).corpora for t in c.turns])
    table = "evidence" if args.dataset == "locomo" else "session"
    rows = []
    out = []
    for spec in [s for s in args.variants.split(",") if s]:
        ds = loader(path, args.limit)  # fresh (nospeaker edits texts)
        if args.embedder != "hashing" and ("nospeaker" in spec or "ctx" in spec):
            probe = Variant(spec)
            probe_ds = loader(path, args.limit)
            run_texts = _texts_after(probe_ds, probe)
            base_emb.warm(run_texts)
        r = run_variant(ds, Variant(spec), args.embedder, args.arm, base_emb)
        a: recall.ArmResult = r["result"]
        agg = a.tables[table]["result"]
        rows.append(
            [
                spec,
                *[agg[f"R@{k}"] for k in recall.KS],
                agg["MRR"],
                common.percentile(a.search_ms, 50),
                r["wall_s"],
            ]
        )
        out.append(
            {
                "variant": spec,
                "tables": a.tables,
                "search_p50_ms": common.percentile(a.search_ms, 50),
            }
        )
        print(f"  {spec}: R@10 {agg['R@10']:.2f}  MRR {agg['MRR']:.2f}", flush=True)
    print()
    print(
        f"chronomem ablations — {args.dataset}, {args.embedder}, {args.arm} arm, evidence = {table} (in %)"
    )
    print(
        common.table(
            ["variant", *[f"R@{k}" for k in recall.KS], "MRR", "search p50 ms", "run s"], rows
        )
    )
    if not args.no_write:
        path_ = common.write_json(
            f"ablate-{args.dataset}-{args.embedder}-{args.arm}.json",
            {
                **common.stamp(),
                "benchmark": "ablate",
                "configuration": vars(args),
                "variants": out,
            },
        )
        print(f"wrote {common.shown(path_)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
