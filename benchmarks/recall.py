"""Evidence recall with no reader model: did retrieval put the annotated evidence in the
top k? LoCoMo and LongMemEval (oracle), chronomem against memvara, same embedder.

    .venv/bin/python benchmarks/recall.py                        # everything installed
    .venv/bin/python benchmarks/recall.py --datasets locomo --embedders hashing
    .venv/bin/python benchmarks/recall.py --quick                # 2 conversations, 60 questions

What is measured (retrieval, NOT answer accuracy — no model reads the hits):

* LoCoMo (``locomo10.json``): one store per conversation; every turn is an episode
  ``"<speaker>: <text>"`` (plus ``" [shared an image: <blip_caption>]"`` when the turn has
  one), timestamped from its session's ``session_N_date_time`` (UTC). Questions of
  categories 1-4 whose evidence ids all name a turn (1,531 of 1,540; 5 name no turn, 4
  have none). Per question, R@k = the fraction of its evidence turns found in the top k
  hits; MRR = 1 / rank of the first hit that is an evidence turn. Averaged over questions,
  per category and overall, next to the chance rate of a random ranking of the same store.
* LongMemEval oracle (``longmemeval_oracle.json.gz``): the sessions of all 500 questions
  pooled into ONE store (940 distinct sessions, 10,866 turns), so other questions'
  sessions are distractors. Evidence = the question's ``answer_session_ids`` (a hit
  counts for the session its turn belongs to); a second table scores the turns marked
  ``has_answer`` (479 questions have at least one). R@1/5/10/12/20 and MRR per question
  type. Issue #28 split the questions in two by a fixed hash of the question id
  (``common.half_of``): the session table is also reported for the tuning half and the
  held-out half (the store is the same; only the questions asked differ).
  ``--longmemeval-half tuning`` asks only the tuning half's questions (for tuning runs);
  the held-out half is scored in aggregate, once per candidate. Each question is asked at
  its ``question_date`` (the search's ``asked_at``: relative times such as "a week ago"
  count from it; nothing is filtered by it); ``--no-question-date`` asks at the store's now.
* ``locomo-pooled`` (with ``--locomo-splits``): the split's conversations in ONE store,
  scored by answer session as LongMemEval is (a session = one conversation's session;
  the other conversations are distractors), plus a table of the evidence turns: a
  session-level measure on the tuning split, since LongMemEval is never tuned on.
* Arms: embedder (``hashing`` = chronomem's deterministic HashingEmbedder;
  ``minilm`` = all-MiniLM-L6-v2, offline) x (``episodes`` = turns only;
  ``facts`` = turns + facts from each system's own offline rule extractor — a fact hit
  counts as the turns it was extracted from). Every system gets the same embedder
  object (memvara through its ``Embedder`` protocol); with minilm the passages are
  embedded once up front and shared, so ingest time excludes the model (queries are not
  pre-embedded, so search latency includes them).
* ``memvara-native``: memvara with its own HashingEmbedder (512 dims), the configuration
  of memvara's published harness — a check of this harness, not a same-embedder arm.
* memvara: ``read_max_episodes`` raised to the depth (its default cap of 3 turns would
  truncate the curve, as its own harness does); ``episodes`` arm with extraction off
  (``write_evidence_roles=()``); ``facts`` arm with its rule extractor on, LoCoMo turns
  sent as role ``user`` so its first-person rules can fire.

A hit on a turn counts for every turn with the same role and text (LongMemEval repeats
1,110 turns verbatim across differently-named sessions; LoCoMo has a few "bye!"), so the
order in which a system returns exact duplicates cannot change a score.

One search per question at depth k=20; R@k reads the prefix of that ranking. Two runs
print identical numbers (``--check-determinism`` re-runs every arm on a fresh store and
compares every ranking)."""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import math
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import common

KS = (1, 5, 10, 12, 20)
DEPTH = 20
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LME_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")


# -- data sets --------------------------------------------------------------------------------


@dataclass
class Turn:
    unit: str  # what evidence names: a LoCoMo dia_id, a LongMemEval "<session>#<i>"
    session: str
    speaker: str
    role: str
    text: str
    when: datetime
    has_answer: bool = False


@dataclass
class Question:
    qid: str
    group: str  # LoCoMo category name / LongMemEval question type
    text: str
    evidence: frozenset[str]  # units (turns) or sessions, see ``by_session``
    evidence_turns: frozenset[str] = frozenset()
    half: str = ""  # LongMemEval: "tuning" or "heldout" (common.half_of the question id)
    # LongMemEval's question_date: the search's ``asked_at`` (relative times in the
    # question count from it; nothing is filtered by it). LoCoMo's questions have none.
    asked_at: datetime | None = None


@dataclass
class Corpus:
    """One store's worth: its sessions of turns and the questions asked of it."""

    name: str
    sessions: list[list[Turn]]
    questions: list[Question]
    by_session: bool = False  # evidence names sessions (LongMemEval), not turns

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s]


@dataclass
class Dataset:
    name: str
    corpora: list[Corpus]
    excluded: dict[str, int] = field(default_factory=dict)
    tables: tuple[str, ...] = ("evidence",)


# LoCoMo splits (issue #13 discipline): retrieval is tuned on conversations 0-4
# only; 5-9 are held out. LongMemEval (issue #28): tuned on the questions of its tuning
# half only (LME_HALVES), the held-out half scored in aggregate.
LOCOMO_SPLITS = {"all": (0, 10), "tune": (0, 5), "heldout": (5, 10)}
LME_HALVES = ("all", *common.HALVES)
LME_SALT = "longmemeval"


def load_locomo(path: Path, limit: int = 0, split: str = "all") -> Dataset:
    raw = json.loads(path.read_text(encoding="utf-8"))
    corpora = []
    excluded: dict[str, int] = defaultdict(int)
    lo, hi = LOCOMO_SPLITS[split]
    chosen = raw[lo:hi]
    for sample in chosen[: limit or None]:
        conv = sample["conversation"]
        idx = sorted(
            int(k.split("_")[1])
            for k, v in conv.items()
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list)
        )
        sessions = []
        for i in idx:
            when = datetime.strptime(
                conv[f"session_{i}_date_time"].strip(), "%I:%M %p on %d %B, %Y"
            ).replace(tzinfo=timezone.utc)
            turns = []
            for t in conv[f"session_{i}"]:
                text = str(t.get("text") or "").strip()
                caption = str(t.get("blip_caption") or "").strip()
                if caption:
                    text = f"{text} [shared an image: {caption}]".strip()
                speaker = str(t["speaker"])
                turns.append(
                    Turn(
                        unit=str(t["dia_id"]),
                        session=f"S{i}",
                        speaker=speaker,
                        role=speaker.lower().replace(" ", "_"),
                        text=f"{speaker}: {text}",
                        when=when,
                    )
                )
            sessions.append(turns)
        known = {t.unit for s in sessions for t in s}
        questions = []
        for n, qa in enumerate(sample["qa"]):
            cat = int(qa.get("category", 0))
            if cat not in LOCOMO_CATEGORIES:
                excluded["category 5 (adversarial: no answer to find)"] += 1
                continue
            ev = frozenset(
                p for e in qa.get("evidence") or [] for p in _EVIDENCE_SPLIT.split(str(e)) if p
            )
            if not ev:
                excluded["no evidence recorded"] += 1
                continue
            if not ev <= known:
                excluded["an evidence id names no turn"] += 1
                continue
            questions.append(
                Question(
                    f"{sample['sample_id']}:{n}", LOCOMO_CATEGORIES[cat], str(qa["question"]), ev
                )
            )
        corpora.append(Corpus(str(sample["sample_id"]), sessions, questions))
    name = "locomo" if split == "all" else f"locomo-{split}"
    return Dataset(name, corpora, dict(excluded))


def half_table(table: str, half: str) -> str:
    return f"{table} · {half} half"


def lme_date(text: str) -> datetime:
    """A LongMemEval date ("2023/05/30 (Tue) 23:40"), read as UTC."""
    return datetime.strptime(text.strip(), "%Y/%m/%d (%a) %H:%M").replace(tzinfo=timezone.utc)


def load_longmemeval(
    path: Path, limit: int = 0, half: str = "all", question_date: bool = True
) -> Dataset:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        raw = json.load(fh)
    sessions: dict[str, list[Turn]] = {}
    for item in raw:
        for sid, sess, date in zip(
            item["haystack_session_ids"],
            item["haystack_sessions"],
            item["haystack_dates"],
            strict=True,
        ):
            if sid in sessions:
                continue
            when = lme_date(date)
            turns = []
            for i, t in enumerate(sess):
                content = str(t.get("content") or "").strip()
                if not content:
                    continue
                role = str(t.get("role") or "user").strip().lower()
                turns.append(
                    Turn(
                        unit=f"{sid}#{i}",
                        session=sid,
                        speaker=role,
                        role=role,
                        text=content,
                        when=when,
                        has_answer=bool(t.get("has_answer")),
                    )
                )
            sessions[sid] = turns
    answer_turns = {t.unit for s in sessions.values() for t in s if t.has_answer}
    questions = []
    for item in raw[: limit or None]:
        qid = str(item["question_id"])
        which = common.half_of(qid, LME_SALT)
        if half != "all" and which != half:
            continue
        ev = frozenset(str(s) for s in item["answer_session_ids"])
        turns = frozenset(t.unit for sid in ev for t in sessions[sid] if t.unit in answer_turns)
        asked = lme_date(item["question_date"]) if question_date else None
        questions.append(
            Question(
                qid, str(item["question_type"]), str(item["question"]), ev, turns, which, asked
            )
        )
    corpus = Corpus(
        "longmemeval-oracle-pooled", list(sessions.values()), questions, by_session=True
    )
    if half != "all":
        return Dataset(f"longmemeval-{half}", [corpus], {}, tables=("session", "has_answer turn"))
    halves = tuple(half_table("session", h) for h in common.HALVES)
    return Dataset("longmemeval", [corpus], {}, tables=("session", *halves, "has_answer turn"))


def pool_locomo(ds: Dataset) -> Dataset:
    """Every conversation of ``ds`` in ONE store, scored by answer session, as
    LongMemEval is: the other conversations' sessions are distractors, and a
    question's evidence is the sessions of its evidence turns (a second table: the
    turns). A stand-in for LongMemEval's session measure that the tuning split can
    be measured on (issue #13: LongMemEval itself is never tuned on)."""
    sessions: list[list[Turn]] = []
    questions: list[Question] = []
    for c in ds.corpora:
        where: dict[str, str] = {}
        for sess in c.sessions:
            pooled = []
            for t in sess:
                sid = f"{c.name}/{t.session}"
                where[t.unit] = sid
                pooled.append(replace(t, unit=f"{sid}#{t.unit}", session=sid))
            sessions.append(pooled)
        for q in c.questions:
            turns = frozenset(f"{where[u]}#{u}" for u in q.evidence)
            questions.append(
                replace(q, evidence=frozenset(where[u] for u in q.evidence), evidence_turns=turns)
            )
    corpus = Corpus(f"{ds.name}-pooled", sessions, questions, by_session=True)
    return Dataset(f"{ds.name}-pooled", [corpus], ds.excluded, tables=("session", "evidence turn"))


# -- systems ---------------------------------------------------------------------------------


class FixedClock:
    """Deterministic transaction time: starts at 2026-01-01, 1 ms per call."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


@dataclass
class Ranked:
    """One question's ranking: per hit, the turn units it stands for."""

    units: list[frozenset[str]]
    ms: float


class System:
    name: str
    unit_of: dict[str, frozenset[str]]
    facts: int = 0
    note: str = ""

    def ingest(self, corpus: Corpus, arm: str) -> None:
        raise NotImplementedError

    def search(self, q: str, depth: int, asked_at: datetime | None = None) -> Ranked:
        """``asked_at``: when the question is asked (its relative times count from it)."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class Chronomem(System):
    name = "chronomem"

    def __init__(self, embedder: Any, url: str | None, legs: Sequence[str] | None):
        from chronomem import Memory

        self.m = Memory(url, embedder=embedder, clock=FixedClock())
        self.legs = list(legs) if legs else None
        self.unit_of = {}

    def ingest(self, corpus: Corpus, arm: str) -> None:
        for sess in corpus.sessions:
            if arm == "episodes":
                eps = self.m.add_episodes(
                    [
                        {
                            "text": t.text,
                            "role": t.role,
                            "occurred_at": t.when,
                            "metadata": {"unit": t.unit},
                        }
                        for t in sess
                    ]
                )
                ids = [e.id for e in eps]
            else:
                from chronomem.extraction.ingest import add_messages

                msgs = [
                    {
                        "role": "user" if corpus.by_session is False else t.role,
                        "name": t.speaker if corpus.by_session is False else None,
                        "content": t.text,
                        "occurred_at": t.when,
                        "metadata": {"unit": t.unit},
                    }
                    for t in sess
                ]
                receipt = add_messages(self.m, msgs)
                ids = list(receipt.episode_ids)
                self.facts += int(receipt.extracted)
            for eid, t in zip(ids, sess, strict=True):
                self.unit_of[eid] = self.unit_of.get(eid, frozenset()) | {t.unit}

    def search(self, q: str, depth: int, asked_at: datetime | None = None) -> Ranked:
        t = time.perf_counter()
        if self.legs is None:
            hits = self.m.search(q, k=depth, include_episodes=True, asked_at=asked_at)
        else:
            from chronomem.retrieval.search import search as run_search

            hits = run_search(
                self.m._engine,
                self.m.scope,
                q,
                k=depth,
                include_episodes=True,
                legs_enabled=self.legs,
                asked_at=asked_at,
            )
        ms = (time.perf_counter() - t) * 1000.0
        units: list[frozenset[str]] = []
        for h in hits:
            if h.episode is not None:
                units.append(self.unit_of.get(h.episode.id, frozenset()))
            elif h.fact is not None:
                units.append(
                    frozenset().union(
                        *(self.unit_of.get(e, frozenset()) for e in h.fact.source_episode_ids)
                    )
                )
        return Ranked(units, ms)

    def close(self) -> None:
        self.m.close()


class Memvara(System):
    name = "memvara"

    def __init__(self, embedder: Any, depth: int, arm: str, native: bool = False):
        """``native``: memvara's own HashingEmbedder (512 dims, char 3-5-grams) instead
        of the shared one — the configuration memvara's own harness reports."""
        memvara, self.note = common.import_memvara()
        kwargs: dict[str, Any] = {}
        if arm == "episodes":
            kwargs["write_evidence_roles"] = ()  # store turns, extract nothing
        self.m = memvara.Memvara(
            ":memory:",
            user="bench",
            llm=memvara.NullLLM(),
            embedder=memvara.HashingEmbedder() if native else common.MemvaraEmbed(embedder),
            read_max_episodes=depth,
            **kwargs,
        )
        self.unit_of = {}

    def ingest(self, corpus: Corpus, arm: str) -> None:
        for sess in corpus.sessions:
            when = sess[0].when
            role = (
                (lambda t: "user")
                if (arm == "facts" and not corpus.by_session)
                else (lambda t: t.role)
            )
            receipt = self.m.add(
                [{"content": t.text, "role": role(t), "ts": t.when, "unit": t.unit} for t in sess],
                ts=when,
            )
            self.facts += len(receipt.added)
            for eid, t in zip(receipt.episode_ids, sess, strict=True):
                self.unit_of[eid] = self.unit_of.get(eid, frozenset()) | {t.unit}

    def search(self, q: str, depth: int, asked_at: datetime | None = None) -> Ranked:
        # memvara's search has no reference instant that does not filter (its as_of /
        # valid_at select what is searched): it is not given the question's date
        t = time.perf_counter()
        hits = self.m.search(q, k=depth, include_episodes=True)
        ms = (time.perf_counter() - t) * 1000.0
        units: list[frozenset[str]] = []
        for h in hits:
            ep = getattr(h, "episode", None)
            if ep is not None:
                units.append(self.unit_of.get(ep.id, frozenset()))
            else:
                srcs = getattr(h.claim, "sources", ()) or ()
                units.append(frozenset().union(*(self.unit_of.get(e, frozenset()) for e in srcs)))
        return Ranked(units, ms)

    def close(self) -> None:
        self.m.close()


# -- scoring ---------------------------------------------------------------------------------


def score(ranked: Sequence[frozenset[str]], evidence: frozenset[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    seen: set[str] = set()
    first = 0
    for i, u in enumerate(ranked, start=1):
        if not first and u & evidence:
            first = i
    for k in KS:
        seen = set().union(*ranked[:k]) if ranked[:k] else set()
        out[f"R@{k}"] = len(seen & evidence) / len(evidence)
    out["MRR"] = 1.0 / first if first else 0.0
    return out


def _first_hit_mrr(pool: int, good: int) -> float:
    """E[1/rank of the first of ``good`` items] under a uniformly random ranking of ``pool``."""
    if good <= 0 or pool <= 0:
        return 0.0
    p_none_before = 1.0  # P(no good item in ranks 1..r-1)
    total = 0.0
    for r in range(1, pool - good + 2):
        p_here = p_none_before * good / (pool - r + 1)
        total += p_here / r
        p_none_before *= (pool - r + 1 - good) / (pool - r + 1)
        if p_none_before < 1e-12:
            break
    return total


def _p_hit(pool: int, size: int, k: int) -> float:
    """P(a random top-k of ``pool`` items contains at least one of ``size`` given items)."""
    if k >= pool:
        return 1.0
    # 1 - C(pool-size, k) / C(pool, k), in logs
    if pool - size < k:
        return 1.0
    lg = math.lgamma
    log_miss = lg(pool - size + 1) - lg(pool - size - k + 1) - lg(pool + 1) + lg(pool - k + 1)
    return 1.0 - math.exp(log_miss)


def chance(corpus: Corpus, q: Question, table: str) -> dict[str, float]:
    """The same metrics for a uniformly random ranking of the store's turns."""
    turns = corpus.turns
    pool = len(turns)
    out: dict[str, float] = {}
    if table == "session":
        sizes = defaultdict(int)
        for t in turns:
            sizes[t.session] += 1
        for k in KS:
            out[f"R@{k}"] = sum(_p_hit(pool, sizes[s], k) for s in q.evidence) / len(q.evidence)
        out["MRR"] = _first_hit_mrr(pool, sum(sizes[s] for s in q.evidence))
        return out
    ev = q.evidence if table == "evidence" else q.evidence_turns
    for k in KS:
        out[f"R@{k}"] = min(k, pool) / pool
    out["MRR"] = _first_hit_mrr(pool, len(ev))
    return out


def to_sessions(ranked: Sequence[frozenset[str]]) -> list[frozenset[str]]:
    return [frozenset(u.split("#", 1)[0] for u in units) for units in ranked]


def mean(xs: Iterable[float]) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """rows: {'group', metric...} -> overall and per group means (in %)."""
    metrics = [f"R@{k}" for k in KS] + ["MRR"]
    out: dict[str, Any] = {"n": len(rows), **{m: 100 * mean(r[m] for r in rows) for m in metrics}}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["group"]].append(r)
    out["by_group"] = {
        g: {"n": len(rs), **{m: 100 * mean(r[m] for r in rs) for m in metrics}}
        for g, rs in sorted(groups.items())
    }
    return out


# -- running an arm --------------------------------------------------------------------------


def duplicates(corpus: Corpus) -> dict[str, frozenset[str]]:
    """unit -> the units of every turn with the same role and text (only where > 1)."""
    by_text: dict[tuple[str, str], set[str]] = defaultdict(set)
    for t in corpus.turns:
        by_text[(t.role, t.text)].add(t.unit)
    return {u: frozenset(us) for us in by_text.values() if len(us) > 1 for u in us}


@dataclass
class ArmResult:
    system: str
    embedder: str
    arm: str
    ingest_s: float
    search_ms: list[float]
    facts: int
    tables: dict[str, Any]
    rankings: dict[str, list[list[str]]]
    note: str = ""


def progress(iterable: Iterable[Any], total: int, desc: str, enabled: bool) -> Iterable[Any]:
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, total=total, desc=desc, unit="q", leave=False, mininterval=1.0)


def run_arm(
    ds: Dataset,
    system_name: str,
    make: Callable[[], System],
    embedder_name: str,
    arm: str,
    depth: int,
    show: bool,
) -> ArmResult:
    per_table: dict[str, list[dict[str, Any]]] = defaultdict(list)
    chance_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    search_ms: list[float] = []
    rankings: dict[str, list[list[str]]] = {}
    ingest_s = 0.0
    facts = 0
    note = ""
    for corpus in ds.corpora:
        twins = duplicates(corpus)
        t = time.perf_counter()
        sys_ = make()
        sys_.ingest(corpus, arm)
        ingest_s += time.perf_counter() - t
        facts += sys_.facts
        note = sys_.note or note
        try:
            desc = f"{ds.name}/{corpus.name} {system_name}/{embedder_name}/{arm}"
            for q in progress(corpus.questions, len(corpus.questions), desc, show):
                r = sys_.search(q.text, depth, q.asked_at)
                search_ms.append(r.ms)
                # a hit on a turn counts for every turn of the store with the same role
                # and text (LongMemEval repeats 1,110 turns across sessions): the order of
                # exact duplicates is then irrelevant, in every system alike
                r.units = [frozenset().union(*(twins.get(x, {x}) for x in u)) for u in r.units]
                rankings[q.qid] = [sorted(u) for u in r.units]
                if corpus.by_session:
                    row = score(to_sessions(r.units), q.evidence)
                    odds = chance(corpus, q, "session")
                    tables = ["session"]
                    if q.half and half_table("session", q.half) in ds.tables:
                        tables.append(half_table("session", q.half))
                    for table in tables:
                        per_table[table].append({"group": q.group, **row})
                        chance_rows[table].append({"group": q.group, **odds})
                    if q.evidence_turns:
                        turn_table = ds.tables[-1]
                        row = score(r.units, q.evidence_turns)
                        per_table[turn_table].append({"group": q.group, **row})
                        chance_rows[turn_table].append(
                            {"group": q.group, **chance(corpus, q, turn_table)}
                        )
                else:
                    per_table["evidence"].append({"group": q.group, **score(r.units, q.evidence)})
                    chance_rows["evidence"].append(
                        {"group": q.group, **chance(corpus, q, "evidence")}
                    )
        finally:
            sys_.close()
    tables = {
        name: {"result": aggregate(rows), "chance": aggregate(chance_rows[name])}
        for name, rows in per_table.items()
    }
    return ArmResult(
        system_name, embedder_name, arm, ingest_s, search_ms, facts, tables, rankings, note
    )


# -- report ----------------------------------------------------------------------------------


def arm_label(a: ArmResult) -> str:
    return f"{a.system} {a.arm}"


def report(ds: Dataset, arms: list[ArmResult]) -> str:
    out = []
    metrics = [f"R@{k}" for k in KS] + ["MRR"]
    for emb in dict.fromkeys(a.embedder for a in arms):
        mine = [a for a in arms if a.embedder == emb]
        for table in ds.tables:
            have = [a for a in mine if table in a.tables]
            if not have:
                continue
            n = have[0].tables[table]["result"]["n"]
            what = {"evidence": "evidence turns", "session": "answer sessions"}.get(
                table, table + "s" if "·" not in table else "answer sessions, " + table
            )
            out.append(f"\n{ds.name} — evidence = {what}, {n:,} questions, embedder {emb} (in %)")
            rows = []
            for a in have:
                r = a.tables[table]["result"]
                rows.append(
                    [
                        arm_label(a),
                        *[r[m] for m in metrics],
                        a.facts,
                        a.ingest_s,
                        common.percentile(a.search_ms, 50),
                        common.percentile(a.search_ms, 95),
                    ]
                )
            c = have[0].tables[table]["chance"]
            rows.append(["chance (random ranking)", *[c[m] for m in metrics], "", "", "", ""])
            out.append(
                common.table(
                    ["system arm", *metrics, "facts", "ingest s", "search p50 ms", "p95 ms"], rows
                )
            )
            groups = list(have[0].tables[table]["result"]["by_group"])
            head = [
                f"{g[:18]} (n={have[0].tables[table]['result']['by_group'][g]['n']})"
                for g in groups
            ]
            for m in ("R@12" if corpus_by_session(ds) else "R@10", "MRR"):
                rows = []
                for a in have:
                    bg = a.tables[table]["result"]["by_group"]
                    rows.append([arm_label(a), *[bg[g][m] for g in groups]])
                cbg = have[0].tables[table]["chance"]["by_group"]
                rows.append(["chance", *[cbg[g][m] for g in groups]])
                out.append(
                    f"\n  {m} by {'category' if ds.name.startswith('locomo') else 'question type'}:"
                )
                out.append(common.table(["system arm", *head], rows))
    return "\n".join(out)


def corpus_by_session(ds: Dataset) -> bool:
    return any(c.by_session for c in ds.corpora)


def compare_rankings(a: ArmResult, b: ArmResult) -> int:
    return sum(1 for q in a.rankings if a.rankings[q] != b.rankings.get(q))


def override(assignments: Sequence[str]) -> dict[str, Any]:
    """``--set fusion.RECENCY_WEIGHT=0.1``: replace a retrieval constant for this run only
    (tuning experiments; the source is untouched). ``fusion`` names a module of
    ``chronomem.retrieval``; every chronomem module that imported the same constant gets
    the new value too. Returns what was set."""
    import ast
    import importlib

    done: dict[str, Any] = {}
    for a in assignments:
        target, _, raw = a.partition("=")
        mod_name, _, attr = target.strip().rpartition(".")
        if not mod_name or not attr or not raw:
            raise SystemExit(f"--set wants module.NAME=value, not {a!r}")
        mod = importlib.import_module(f"chronomem.retrieval.{mod_name}")
        if not hasattr(mod, attr):
            raise SystemExit(f"chronomem.retrieval.{mod_name} has no {attr}")
        old, new = getattr(mod, attr), ast.literal_eval(raw.strip())
        for m in list(sys.modules.values()):
            if (m.__name__ or "").startswith("chronomem.") and getattr(m, attr, None) is old:
                setattr(m, attr, new)
        done[target.strip()] = new
    return done


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--datasets", default="locomo,longmemeval")
    ap.add_argument(
        "--locomo-splits",
        default="all",
        help="comma list of all (conversations 0-9), tune (0-4), heldout (5-9)",
    )
    ap.add_argument(
        "--longmemeval-half",
        default="all",
        choices=LME_HALVES,
        help="ask only this half's questions (all: every question, halves reported too)",
    )
    ap.add_argument(
        "--no-question-date",
        action="store_true",
        help="do not pass LongMemEval's question_date as the search's asked_at (before #28)",
    )
    ap.add_argument("--embedders", default="hashing,minilm")
    ap.add_argument("--arms", default="episodes,facts")
    ap.add_argument("--systems", default="chronomem,memvara")
    ap.add_argument("--url", default=None, help="chronomem store URL (default: in-memory SQLite)")
    ap.add_argument("--depth", type=int, default=DEPTH)
    ap.add_argument(
        "--limit", type=int, default=0, help="LoCoMo conversations / LongMemEval questions"
    )
    ap.add_argument(
        "--quick", action="store_true", help="2 LoCoMo conversations, 60 LongMemEval questions"
    )
    ap.add_argument("--legs", default=None, help="chronomem legs to enable (ablation), comma list")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="MODULE.NAME=VALUE",
        help="override a chronomem.retrieval constant for this run (tuning experiments)",
    )
    ap.add_argument("--check-determinism", action="store_true")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--out", default=None, help="results file name under benchmarks/results/")
    ap.add_argument("--dump", default=None, help="write per-question rankings (JSONL) here")
    args = ap.parse_args(argv)

    show = not args.no_progress and sys.stderr.isatty()
    datasets = [d for d in args.datasets.split(",") if d]
    embedders = [e for e in args.embedders.split(",") if e]
    arms = [a for a in args.arms.split(",") if a]
    systems = [s for s in args.systems.split(",") if s]
    legs = [x for x in args.legs.split(",") if x] if args.legs else None
    overrides = override(args.set)
    skipped: list[str] = []
    notes: list[str] = []

    for name in ("memvara", "memvara-native"):
        if name in systems and not common.have("memvara"):
            skipped.append(f"{name}: not installed (pip install memvara pysqlite3-binary)")
            systems.remove(name)
    if "facts" in arms and not common.have("chronomem.extraction.ingest"):
        skipped.append(
            "chronomem facts arm: chronomem.extraction.ingest.add_messages is not available"
        )
    if "minilm" in embedders:
        why = common.minilm_available()
        if why:
            skipped.append(f"minilm embedder: {why}")
            embedders.remove("minilm")

    loaded = []
    for d in datasets:
        if d in ("locomo", "locomo-pooled"):
            for split in [x for x in args.locomo_splits.split(",") if x]:
                if split not in LOCOMO_SPLITS:
                    raise SystemExit(f"unknown LoCoMo split {split!r} ({', '.join(LOCOMO_SPLITS)})")
                ds = load_locomo(
                    common.DATA / "locomo10.json", 2 if args.quick else args.limit, split
                )
                loaded.append(ds if d == "locomo" else pool_locomo(ds))
        elif d == "longmemeval":
            loaded.append(
                load_longmemeval(
                    common.DATA / "longmemeval_oracle.json.gz",
                    60 if args.quick else args.limit,
                    args.longmemeval_half,
                    not args.no_question_date,
                )
            )
        else:
            raise SystemExit(f"unknown dataset {d!r} (locomo, locomo-pooled, longmemeval)")

    results: dict[str, list[ArmResult]] = {ds.name: [] for ds in loaded}
    determinism: dict[str, Any] = {}
    for ds in loaded:
        nq = sum(len(c.questions) for c in ds.corpora)
        nt = sum(len(c.turns) for c in ds.corpora)
        print(
            f"{ds.name}: {len(ds.corpora)} store(s), {nt:,} turns, {nq:,} questions"
            + (f"; excluded: {ds.excluded}" if ds.excluded else ""),
            flush=True,
        )
    embedders_by: dict[tuple[str, str], Any] = {}

    def embedder_for(ds: Dataset, emb_name: str) -> Any:
        key = (ds.name, emb_name)
        if key not in embedders_by:
            emb: Any = common.make_embedder(emb_name)
            if emb_name != "hashing":
                emb = common.CachedEmbedder(emb)
                t = time.perf_counter()
                n = emb.warm([t_.text for c in ds.corpora for t_ in c.turns], progress=show)
                notes.append(
                    f"{ds.name}/{emb_name}: {n:,} passages embedded once up front in "
                    f"{time.perf_counter() - t:.1f} s, shared by every system (not in ingest time)"
                )
            embedders_by[key] = emb
        return embedders_by[key]

    # Every chronomem arm runs before memvara is imported: memvara needs pysqlite3
    # aliased as sqlite3, and chronomem must be measured on the stdlib SQLite it ships on.
    order = sorted(systems, key=lambda s: s != "chronomem")
    stdlib_sqlite = sys.modules.get("sqlite3")
    for system in order:
        for ds in loaded:
            for emb_name in embedders:
                if system == "memvara-native" and emb_name != "hashing":
                    continue  # its own embedder: one row, reported with the hashing arm
                emb = embedder_for(ds, emb_name)
                for arm in arms:
                    if (
                        system == "chronomem"
                        and arm == "facts"
                        and not common.have("chronomem.extraction.ingest")
                    ):
                        continue
                    if system == "chronomem":
                        import sqlite3

                        assert stdlib_sqlite is None or sqlite3 is stdlib_sqlite, "sqlite3 aliased"

                    def make(system: str = system, arm: str = arm, emb: Any = emb) -> System:
                        if system == "chronomem":
                            return Chronomem(emb, args.url, legs)
                        if system == "memvara":
                            return Memvara(emb, args.depth, arm)
                        if system == "memvara-native":
                            return Memvara(emb, args.depth, arm, native=True)
                        raise SystemExit(f"unknown system {system!r}")

                    t0 = time.perf_counter()
                    res = run_arm(ds, system, make, emb_name, arm, args.depth, show)
                    print(
                        f"  {ds.name} {system}/{emb_name}/{arm}: {time.perf_counter() - t0:.1f} s",
                        flush=True,
                    )
                    if res.note:
                        notes.append(res.note)
                    results[ds.name].append(res)
                    if args.check_determinism and system != "memvara-native":
                        again = run_arm(ds, system, make, emb_name, arm, args.depth, show)
                        diff = compare_rankings(res, again)
                        same = json.dumps(res.tables, sort_keys=True) == json.dumps(
                            again.tables, sort_keys=True
                        )
                        determinism[f"{ds.name}/{system}/{emb_name}/{arm}"] = {
                            "rankings_differing": diff,
                            "of": len(res.rankings),
                            "metrics_identical": same,
                        }
                        print(
                            f"    determinism: {diff} of {len(res.rankings)} rankings differ on a "
                            f"re-run; metrics {'identical' if same else 'DIFFER'}",
                            flush=True,
                        )
    for ds in loaded:
        print(report(ds, results[ds.name]), flush=True)

    for n in dict.fromkeys(notes):
        print(f"note: {n}")
    for s in skipped:
        print(f"skipped: {s}")
    if legs:
        print(f"note: chronomem legs enabled: {legs}")
    if overrides:
        print(f"note: retrieval constants overridden for this run: {overrides}")

    if args.dump:
        with open(args.dump, "w") as fh:
            for name, arms_ in results.items():
                for a in arms_:
                    for q, r in a.rankings.items():
                        fh.write(
                            json.dumps(
                                {
                                    "dataset": name,
                                    "system": a.system,
                                    "embedder": a.embedder,
                                    "arm": a.arm,
                                    "qid": q,
                                    "ranking": r,
                                }
                            )
                            + "\n"
                        )
    if not args.no_write:
        payload = {
            **common.stamp(),
            "benchmark": "recall",
            "what": "evidence recall of retrieval (no reader model); not answer accuracy",
            "configuration": {
                "datasets": datasets,
                "embedders": embedders,
                "arms": arms,
                "systems": systems,
                "depth": args.depth,
                "ks": KS,
                "limit": args.limit,
                "quick": args.quick,
                "legs": legs,
                "longmemeval_half": args.longmemeval_half,
                "question_date": not args.no_question_date,
                "overrides": overrides or None,
                "chronomem_url": args.url or "in-memory SQLite",
            },
            "skipped": skipped,
            "notes": list(dict.fromkeys(notes)),
            "determinism": determinism or None,
            "results": {
                name: [
                    {
                        "system": a.system,
                        "embedder": a.embedder,
                        "arm": a.arm,
                        "facts": a.facts,
                        "ingest_s": a.ingest_s,
                        "search_ms": {
                            "p50": common.percentile(a.search_ms, 50),
                            "p95": common.percentile(a.search_ms, 95),
                            "n": len(a.search_ms),
                        },
                        "tables": a.tables,
                    }
                    for a in arms_
                ]
                for name, arms_ in results.items()
            },
        }
        name = args.out or ("recall-quick.json" if args.quick else "recall.json")
        path = common.write_json(name, payload)
        print(f"wrote {common.shown(path)}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
