"""The present outranks the past (issue #28): a user states a fact, later changes it;
asked afterwards, does memory answer with the new value, mark the old messages as past,
and still find the old value when asked about it?

    .venv/bin/python benchmarks/changes.py                       # tuning half, every surface
    .venv/bin/python benchmarks/changes.py --split heldout       # held-out half, aggregate only
    .venv/bin/python benchmarks/changes.py --split all --out changes.json

The stories (``benchmarks/change_stories.py``, at least 60, written for this benchmark):
moves, jobs, job titles, partners, pets, diets, phone numbers and e-mail, plans cancelled
or replaced, preferences reversed, projects. Per story one fresh store receives, as the
user, the messages stating the old value (several phrasings) mixed with small talk (0-2
lines, chosen by a hash of the story id), dated four days apart from 2025-01-06, then the
change message on 2025-05-06; the questions are asked at the present instant.

Stories are split by a fixed hash of their id (``common.half_of(sid, "changes")``) into a
tuning half and a held-out half; the held-out half is only ever reported in aggregate
(``--split heldout`` prints no per-story line).

Measures, per surface (every hit asked for is k=10):

* **current-first**: asked the current question, the first hit (first line of a rendered
  block) speaks of the new value (the value as a word, case-insensitive).
* **past-labelled**: every *stale* message shown for the current question (one whose facts,
  all of them, ended or were superseded by the change: the ground truth is computed from
  the extraction receipts) is marked as past: its text contains one of
  ``chronomem.render.PAST_MARKERS`` (core search: ``Hit.past_label``). The share of the
  stories that show a stale message in which every one is marked; ``n`` says how many
  stories showed one. ``false past`` counts current or unknown messages marked as past.
* **past-found**: asked about the earlier value, it is in the top 5.
* **past over present**: the number of stories in which, asked after the change, a hit
  that speaks of the old value (and not of the new) ranks above every hit that speaks of
  the new one: the promise itself, a changed fact never loses to what stated the old
  value. It counts on every surface, record stores included (there, the old value can
  only come back through another item that mentions it).

Surfaces: core ``Memory.search(include_episodes=True)`` and ``Memory.recall(
include_episodes=True)``; LangChain ``ChronomemRetriever(include_episodes=True)``;
LlamaIndex ``ChronomemRetriever(include_episodes=True)`` and ``ChronomemMemoryBlock``;
CrewAI ``ChronomemMemory.recall``; and two record stores where an item is overwritten:
CrewAI ``ChronomemStorage`` (the record updated) and the LangGraph store (the item put
again), in its default cosine mode and with ``score="fused"``. A record store's search
returns current items only, so past-labelled holds by construction there, and past-found
reads the ``history`` of the top 5 items. Peers, the same writes and embedder through the
frameworks' own stores (LangGraph ``InMemoryStore``, CrewAI ``LanceDBStorage``), show
what the embedder alone ranks first (they keep no history: past-found is not scored).

Before the stories are scored, each is checked: the old value must be extracted (a fact
that is ended after the change) and the new one live; failures are listed."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import common
from benchmarks.change_stories import SMALL_TALK, STORIES, Story
from chronomem import Memory, render
from chronomem.embedding import HashingEmbedder

SALT = "changes"
K = 10
TOP_PAST = 5
BASE = datetime(2025, 1, 6, tzinfo=timezone.utc)
CHANGE_AT = BASE + timedelta(days=120)
# present's interface (STALE_INTERFACE.md); the same strings before it lands, so the
# baseline is measured by the same rule
PAST_MARKERS: tuple[str, ...] = getattr(
    render, "PAST_MARKERS", ("since superseded", "since ended", "since retracted")
)


def mentions(text: str, value: str) -> bool:
    """``value`` as a word (plural allowed), case-insensitive: "Tom" is not "tomorrow"."""
    return re.search(rf"\b{re.escape(value)}(?:s|es)?\b", text, re.IGNORECASE) is not None


def marked_past(text: str) -> bool:
    low = text.lower()
    return any(m in low for m in PAST_MARKERS)


# -- stories in a store ---------------------------------------------------------------------


def messages_of(story: Story) -> list[tuple[str, datetime]]:
    """The user's messages before the change, small talk mixed in, with their dates."""
    h = hashlib.sha256(story.sid.encode()).digest()
    n_small = min(h[0] % 3, 5 - len(story.before))
    lines = list(story.before)
    for i in range(n_small):
        talk = SMALL_TALK[(h[1] + 5 * i) % len(SMALL_TALK)]
        lines.insert((h[2 + i] % (len(lines) + 1)), talk)
    return [(text, BASE + timedelta(days=4 * i)) for i, text in enumerate(lines)]


@dataclass
class Told:
    """A story told to one core store: what became of its messages."""

    story: Story
    memory: Memory
    before: list[tuple[str, datetime]]
    stale: list[str]  # texts of messages whose every extracted fact is no longer live
    problems: list[str]


def tell(story: Story) -> Told:
    m = Memory()
    before = messages_of(story)
    receipts = [(text, m.add(text, occurred_at=when)) for text, when in before]
    m.add(story.change, occurred_at=CHANGE_AT)
    live = m.facts()
    live_ids = {f.id for f in live}
    stale = [
        text
        for text, r in receipts
        if r.fact_ids and not any(fid in live_ids for fid in r.fact_ids)
    ]
    everything = m.facts(states=["live", "ended", "retracted"])
    problems = []
    if not any(mentions(f.object, story.old) for f in everything):
        problems.append("old value not extracted")
    elif any(mentions(f.object, story.old) for f in live):
        problems.append("old value still live after the change")
    if not any(mentions(f.object, story.new) for f in live):
        problems.append("new value not extracted (or not live)")
    if not stale:
        problems.append("no message became stale")
    return Told(story, m, before, stale, problems)


# -- surfaces -------------------------------------------------------------------------------


@dataclass
class Item:
    text: str
    episode: bool
    labelled: bool | None = None  # the mechanism's own word (core search), else the text


Ask = Callable[[str], list[Item]]


@dataclass
class Reader:
    ask: Ask
    ask_past: Ask | None = None  # record stores: the items' histories
    by_construction: bool = False  # current items only: nothing stale can be shown
    history: bool = True  # False: a peer keeps no past versions (past-found not scored)


def _block_items(block: str) -> list[Item]:
    items, episodes = [], False
    for line in block.splitlines():
        if line in (render.HEADER_LIVE, render.HEADER_HISTORY):
            episodes = False
        elif line == render.HEADER_EPISODES:
            episodes = True
        elif line.startswith("- "):
            items.append(Item(line[2:], episodes))
    return items


def core_search(t: Told) -> Reader:
    def ask(q: str) -> list[Item]:
        out = []
        for h in t.memory.search(q, k=K, include_episodes=True):
            label = getattr(h, "past_label", None)
            text = f"[{label}] {h.text}" if label else h.text
            out.append(Item(text, h.episode is not None, bool(label) and marked_past(text)))
        return out

    return Reader(ask)


def core_recall(t: Told) -> Reader:
    return Reader(lambda q: _block_items(t.memory.recall(q, k=K, include_episodes=True)))


def langchain_retriever(t: Told) -> Reader:
    from langchain_chronomem import ChronomemRetriever

    r = ChronomemRetriever(memory=t.memory, k=K, include_episodes=True)
    return Reader(
        lambda q: [Item(d.page_content, d.metadata.get("kind") == "episode") for d in r.invoke(q)]
    )


def llamaindex_retriever(t: Told) -> Reader:
    from llama_index.memory.chronomem import ChronomemRetriever

    r = ChronomemRetriever(t.memory, k=K, include_episodes=True)
    return Reader(
        lambda q: [
            Item(n.node.get_content(), n.node.metadata.get("kind") == "episode")
            for n in r.retrieve(q)
        ]
    )


def llamaindex_block(t: Told) -> Reader:
    from llama_index.core.llms import ChatMessage

    from llama_index.memory.chronomem import ChronomemMemoryBlock

    b = ChronomemMemoryBlock(t.memory, recall_k=K)
    return Reader(lambda q: _block_items(b.recall([ChatMessage(role="user", content=q)])))


def crewai_recall(t: Told) -> Reader:
    from crewai_chronomem import ChronomemMemory

    mem = ChronomemMemory(memory=t.memory)
    return Reader(
        lambda q: [
            Item(x.record.content, x.record.metadata.get("kind") == "episode")
            for x in mem.recall(q, limit=K)
        ]
    )


# the record stores' embedder (they take the caller's; ``--store-embedder``)
_EMB: Any = HashingEmbedder()


def _vectors(texts: Sequence[str]) -> list[list[float]]:
    return [[float(x) for x in row] for row in _EMB.embed(list(texts))]


def _overwrites(t: Told) -> list[tuple[str, str]]:
    """(key, text) writes for a record store: the fact's item is written with each
    message stating the old value, then overwritten with the change; small talk gets
    items of its own."""
    writes = []
    for i, (text, _when) in enumerate(t.before):
        writes.append(("fact" if text in t.story.before else f"talk-{i}", text))
    writes.append(("fact", t.story.change))
    return writes


def crewai_storage(t: Told) -> Reader:
    from crewai.memory.types import MemoryRecord

    from crewai_chronomem import ChronomemStorage

    s = ChronomemStorage(embedder=_vectors)
    for key, text in _overwrites(t):
        s.save([MemoryRecord(id=key, content=text, embedding=_vectors([text])[0])])

    def ask(q: str) -> list[Item]:
        return [Item(r.content, False) for r, _ in s.search(_vectors([q])[0], limit=K)]

    def ask_past(q: str) -> list[Item]:
        hits = s.search(_vectors([q])[0], limit=TOP_PAST)
        return [Item(v.record.content, False) for r, _ in hits for v in s.history(r.id)]

    return Reader(ask, ask_past, by_construction=True)


def langgraph_store(t: Told, score: str = "cosine") -> Reader:
    from langgraph.store.chronomem import ChronomemStore

    index = {"embed": _vectors, "dims": _EMB.dim, "fields": ["text"]}
    store = ChronomemStore(index=index, score=score)  # type: ignore[arg-type]
    ns = ("user", "memories")
    for key, text in _overwrites(t):
        store.put(ns, key, {"text": text})

    def ask(q: str) -> list[Item]:
        return [Item(str(i.value.get("text")), False) for i in store.search(ns, query=q, limit=K)]

    def ask_past(q: str) -> list[Item]:
        hits = store.search(ns, query=q, limit=TOP_PAST)
        return [Item(str(v.value), False) for i in hits for v in store.history(ns, i.key)]

    return Reader(ask, ask_past, by_construction=True)


def langgraph_fused(t: Told) -> Reader:
    return langgraph_store(t, score="fused")


# -- peers: the frameworks' own stores, the same writes and embedder (no history: their
# past-found reads the current items only)


def peer_in_memory_store(t: Told) -> Reader:
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore(index={"embed": _vectors, "dims": _EMB.dim, "fields": ["text"]})
    ns = ("user", "memories")
    for key, text in _overwrites(t):
        store.put(ns, key, {"text": text})

    def ask(q: str) -> list[Item]:
        return [Item(str(i.value.get("text")), False) for i in store.search(ns, query=q, limit=K)]

    return Reader(ask, by_construction=True, history=False)


_LANCE_DIR: Any = None  # one temporary directory for the run (removed at exit)


def peer_lancedb_storage(t: Told) -> Reader:
    import tempfile

    from crewai.memory.storage.lancedb_storage import LanceDBStorage
    from crewai.memory.types import MemoryRecord

    global _LANCE_DIR
    if _LANCE_DIR is None:
        _LANCE_DIR = tempfile.TemporaryDirectory(prefix="changes-lancedb-")
    where = Path(_LANCE_DIR.name) / t.story.sid
    s = LanceDBStorage(path=where, vector_dim=_EMB.dim, compact_every=0)
    for key, text in _overwrites(t):
        s.update(MemoryRecord(id=key, content=text, embedding=_vectors([text])[0]))

    def ask(q: str) -> list[Item]:
        return [Item(r.content, False) for r, _ in s.search(_vectors([q])[0], limit=K)]

    return Reader(ask, by_construction=True, history=False)


SURFACES: dict[str, Callable[[Told], Reader]] = {
    "core search": core_search,
    "core recall": core_recall,
    "langchain retriever": langchain_retriever,
    "llamaindex retriever": llamaindex_retriever,
    "llamaindex block": llamaindex_block,
    "crewai recall": crewai_recall,
    "crewai storage": crewai_storage,
    "langgraph store": langgraph_store,
    "langgraph store fused": langgraph_fused,
    "peer InMemoryStore": peer_in_memory_store,
    "peer LanceDBStorage": peer_lancedb_storage,
}


# -- scoring --------------------------------------------------------------------------------


@dataclass
class Score:
    current_first: bool
    past_over_present: bool
    stale_shown: int
    stale_labelled: int
    false_past: int
    past_found: bool


def score(t: Told, reader: Reader) -> Score:
    shown = reader.ask(t.story.current)
    first = shown[0].text if shown else ""
    stale = [i for i in shown if i.episode and any(flat_in(s, i.text) for s in t.stale)]
    labelled = [i for i in stale if (i.labelled if i.labelled is not None else marked_past(i.text))]
    false_past = sum(
        1
        for i in shown
        if i.episode
        and i not in stale
        and (i.labelled if i.labelled is not None else marked_past(i.text))
    )
    if reader.ask_past is not None:
        past = reader.ask_past(t.story.past)
    else:
        past = reader.ask(t.story.past)[:TOP_PAST]
    return Score(
        current_first=mentions(first, t.story.new),
        past_over_present=past_over_present(shown, t.story),
        stale_shown=len(stale),
        stale_labelled=len(labelled),
        false_past=false_past,
        past_found=any(mentions(i.text, t.story.old) for i in past),
    )


def past_over_present(shown: list[Item], story: Story) -> bool:
    """Whether a hit speaking of the old value (and not the new) comes before every
    hit speaking of the new one (or no hit speaks of the new one)."""
    for i in shown:
        if mentions(i.text, story.new):
            return False
        if mentions(i.text, story.old):
            return True
    return False


def flat_in(message: str, shown: str) -> bool:
    return render.flatten(message) in shown


@dataclass
class Tally:
    n: int = 0
    current_first: int = 0
    past_over_present: int = 0
    stale_stories: int = 0
    labelled_stories: int = 0
    false_past: int = 0
    past_found: int = 0
    by_construction: bool = False
    history: bool = True
    misses: list[str] = field(default_factory=list)

    def add(self, sid: str, s: Score) -> None:
        self.n += 1
        self.current_first += s.current_first
        self.past_over_present += s.past_over_present
        if s.stale_shown:
            self.stale_stories += 1
            self.labelled_stories += s.stale_labelled == s.stale_shown
        self.false_past += s.false_past
        self.past_found += s.past_found
        if not s.current_first:
            self.misses.append(f"{sid}: current-first")
        if s.past_over_present:
            self.misses.append(f"{sid}: past over present")
        if s.stale_labelled < s.stale_shown:
            self.misses.append(f"{sid}: {s.stale_shown - s.stale_labelled} stale unmarked")
        if not s.past_found and self.history:
            self.misses.append(f"{sid}: past-found")

    def figures(self) -> dict[str, Any]:
        pct = lambda a, b: round(100 * a / b, 1) if b else None  # noqa: E731
        return {
            "n": self.n,
            "current_first": pct(self.current_first, self.n),
            "past_over_present": self.past_over_present,
            "past_labelled": 100.0
            if self.by_construction and not self.stale_stories
            else pct(self.labelled_stories, self.stale_stories),
            "stale_shown_in": self.stale_stories,
            "false_past": self.false_past,
            "past_found": pct(self.past_found, self.n) if self.history else None,
        }


def stories_of(split: str) -> list[Story]:
    if split == "all":
        return list(STORIES)
    return [s for s in STORIES if common.half_of(s.sid, SALT) == split]


def run(
    stories: Sequence[Story], surfaces: Sequence[str]
) -> tuple[dict[str, dict[str, Tally]], list[str]]:
    """Every story through every surface: half -> surface -> tally, and the stories
    whose extraction check failed."""
    tallies: dict[str, dict[str, Tally]] = defaultdict(dict)
    problems = []
    for story in stories:
        half = common.half_of(story.sid, SALT)
        told = tell(story)
        if told.problems:
            problems.append(f"{story.sid}: {', '.join(told.problems)}")
        try:
            for name in surfaces:
                reader = SURFACES[name](told)
                tally = tallies[half].setdefault(
                    name, Tally(by_construction=reader.by_construction, history=reader.history)
                )
                tally.add(story.sid, score(told, reader))
        finally:
            told.memory.close()
    return tallies, problems


def table(half: str, tallies: dict[str, Tally]) -> str:
    rows = []
    for name, t in tallies.items():
        f = t.figures()
        lab = "—" if f["past_labelled"] is None else f["past_labelled"]
        rows.append(
            [
                name,
                f["n"],
                f["current_first"],
                f["past_over_present"],
                f"{lab} (n={f['stale_shown_in']})" + (" *" if t.by_construction else ""),
                f["false_past"],
                "—" if f["past_found"] is None else f["past_found"],
            ]
        )
    head = [
        "surface",
        "stories",
        "current-first %",
        "past over present",
        "past-labelled %",
        "false past",
        "past-found %",
    ]
    return f"\n{half} half\n" + common.table(head, rows)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--split", default="tuning", choices=("tuning", "heldout", "all"))
    ap.add_argument("--surfaces", default=",".join(SURFACES), help="comma list")
    ap.add_argument("--out", default=None, help="results file name under benchmarks/results/")
    ap.add_argument("--misses", action="store_true", help="list the tuning half's failing stories")
    ap.add_argument(
        "--store-embedder",
        default="hashing",
        choices=("hashing", "minilm"),
        help="the embedder the record stores are given (the core surfaces keep Memory()'s)",
    )
    args = ap.parse_args(argv)
    global _EMB
    _EMB = common.make_embedder(args.store_embedder)
    surfaces = [s for s in args.surfaces.split(",") if s]
    for s in surfaces:
        if s not in SURFACES:
            raise SystemExit(f"unknown surface {s!r} ({', '.join(SURFACES)})")
    t0 = time.perf_counter()
    tallies, problems = run(stories_of(args.split), surfaces)
    print(
        f"{len(stories_of(args.split))} stories ({args.split}), markers {PAST_MARKERS}, "
        f"{time.perf_counter() - t0:.1f} s"
    )
    for half in common.HALVES:
        if half in tallies:
            print(table(half, tallies[half]))
    print("\n* a record store's search returns current items only (past-labelled by construction)")
    for p in problems:
        print(f"extraction: {p}")
    if args.misses and "tuning" in tallies:
        for name, t in tallies["tuning"].items():
            for miss in t.misses:
                print(f"miss [{name}] {miss}")
    if args.out:
        payload = {
            **common.stamp(),
            "benchmark": "changes",
            "configuration": {
                "split": args.split,
                "surfaces": surfaces,
                "k": K,
                "store_embedder": args.store_embedder,
            },
            "past_markers": list(PAST_MARKERS),
            "extraction_problems": problems,
            "results": {
                half: {name: t.figures() for name, t in by.items()} for half, by in tallies.items()
            },
        }
        print(f"wrote {common.shown(common.write_json(args.out, payload))}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
