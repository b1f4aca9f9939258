"""The MCP tools as plain methods over a ``Memory``: check every argument (an
``ArgumentError`` names the bad one before anything is read or written), call
the store, render the answer (``rendering``). Nothing here knows the protocol;
``server`` registers these methods as tools."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, ScopeError
from ..model import Fact, Provenance
from . import arguments as arg
from .rendering import (
    Result,
    episode_data,
    episode_line,
    fact_data,
    fact_line,
    facts_result,
    iso,
    provenance_result,
    receipt_result,
)

if TYPE_CHECKING:
    from ..memory import Memory  # the public face; only its type is named here

MAX_RESOURCE_FACTS = 1_000  # facts memory://facts lists (the rest: use search)


class MemoryTools:
    """What each tool does, over one store (already narrowed to the client's scope)."""

    def __init__(self, memory: Memory, *, extractor: Any = None):
        self.memory = memory
        self.extractor = extractor  # None: chronomem's offline rule extractor

    # -- helpers -------------------------------------------------------------------------
    def _current(self, fact_ids: list[str]) -> list[Fact]:
        return [f for fid in fact_ids for f in self.memory.get(fid)]

    def _fact_id(self, value: object) -> str:
        return self._provenance(value)[0]

    def _provenance(self, value: object) -> tuple[str, Provenance]:
        """The id as given (a fact's or a version's) and the fact it names, as ``why``
        reads it: one read both checks the id (an ``ArgumentError`` when this scope
        has no such fact) and answers ``why``."""
        fact_id = arg.text(value, "fact_id")
        try:
            return fact_id, self.memory.why(fact_id)
        except (NotFound, ScopeError):
            raise arg.ArgumentError("fact_id", f"no fact {fact_id!r} in this scope") from None

    # -- writes --------------------------------------------------------------------------
    def remember(self, text: object, occurred_at: object = None) -> Result:
        body = arg.text(text, "text", limit=arg.MAX_TEXT)
        when = arg.instant(occurred_at, "occurred_at")
        r = self.memory.add(body, extractor=self.extractor, occurred_at=when)
        out = receipt_result("remembered", r, self._current(r.fact_ids))
        out.data.update(episode_ids=list(r.episode_ids), extracted=r.extracted)
        lines = [f"stored episode {', '.join(r.episode_ids) or '-'}; {r.extracted} fact(s) read"]
        return Result(out.data, "\n".join([*lines, out.text]))

    def remember_fact(
        self,
        subject: object,
        predicate: object,
        object_: object,
        valid_from: object = None,
        valid_to: object = None,
    ) -> Result:
        s = arg.text(subject, "subject")
        p = arg.text(predicate, "predicate")
        o = arg.text(object_, "object")
        start = arg.instant(valid_from, "valid_from")
        stop = arg.instant(valid_to, "valid_to")
        if start is not None and stop is not None and stop <= start:
            raise arg.ArgumentError("valid_to", "must be after valid_from")
        r = self.memory.remember(s, p, o, valid_from=start, valid_to=stop)
        return receipt_result(
            "remembered" if r.added else "unchanged", r, self._current(r.fact_ids)
        )

    def correct(self, fact_id: object, object_: object) -> Result:
        o = arg.text(object_, "object")
        fid = self._fact_id(fact_id)
        r = self.memory.correct(fid, o)
        return receipt_result("corrected", r, self._current(r.fact_ids))

    def forget(self, fact_id: object) -> Result:
        fid, known = self._provenance(fact_id)
        r = self.memory.retract(fid)
        first = known.versions[0]  # a retraction closes versions, never renames them
        every = self.memory.history(first.subject, first.predicate, include_retracted=True)
        gone = [f for f in every if f.id == fid]
        return receipt_result("forgot (retracted; history keeps it)", r, gone)

    def end(
        self, subject: object, predicate: object, object_: object = None, at: object = None
    ) -> Result:
        s = arg.text(subject, "subject")
        p = arg.text(predicate, "predicate")
        o = None if object_ is None else arg.text(object_, "object")
        when = arg.instant(at, "at")
        r = self.memory.end(s, p, o, at=when)
        if not r.ended:
            raise arg.ArgumentError(
                "object" if o is not None else "predicate",
                f"no current value of {s!r} {p!r}{f' = {o!r}' if o else ''} to end",
            )
        return receipt_result("ended", r, self.memory.history(s, p))

    # -- reads ---------------------------------------------------------------------------
    def search(
        self,
        query: object,
        k: object = 10,
        as_of: object = None,
        valid_at: object = None,
        known_at: object = None,
        include_episodes: object = True,
    ) -> Result:
        q = arg.text(query, "query")
        n = arg.count(k, "k")
        both = arg.instant(as_of, "as_of")
        v = arg.instant(valid_at, "valid_at")
        kn = arg.instant(known_at, "known_at")
        if both is not None and (v is not None or kn is not None):
            raise arg.ArgumentError("as_of", "means valid_at and known_at at once; not with them")
        episodes = arg.flag(include_episodes, "include_episodes")
        hits = self.memory.search(
            q, k=n, as_of=both, valid_at=v, known_at=kn, include_episodes=episodes
        )
        found, lines = [], []
        for h in hits:
            if h.fact is not None:
                found.append({"score": h.score, "kind": "fact", "fact": fact_data(h.fact)})
                lines.append(f"{h.score:.3f}  {fact_line(h.fact)}")
            elif h.episode is not None:
                found.append(
                    {"score": h.score, "kind": "episode", "episode": episode_data(h.episode)}
                )
                lines.append(f"{h.score:.3f}  {episode_line(h.episode)}")
        when = {"as_of": iso(both), "valid_at": iso(v), "known_at": iso(kn)}
        head = "search " + (
            ", ".join(f"{k_}={t}" for k_, t in when.items() if t) or "now, as currently believed"
        )
        for leg, why in hits.failed_legs.items():
            lines.append(f"warning: search leg {leg} failed: {why}")
        data = {"query": q, **when, "hits": found, "failed_legs": dict(hits.failed_legs)}
        return Result(data, "\n".join([head, *(lines or ["(no hits)"])]))

    def recall(self, query: object, as_of: object = None) -> Result:
        q = arg.text(query, "query")
        both = arg.instant(as_of, "as_of")
        block = self.memory.recall(q, as_of=both)
        return Result({"query": q, "as_of": iso(both), "block": block}, block)

    def history(
        self, subject: object, predicate: object = None, include_retracted: object = False
    ) -> Result:
        s = arg.text(subject, "subject")
        p = None if predicate is None else arg.text(predicate, "predicate")
        audit = arg.flag(include_retracted, "include_retracted")
        found = self.memory.history(s, p, include_retracted=audit)
        return facts_result(found, empty="(no history)", subject=s, predicate=p)

    def why(self, fact_id: object) -> Result:
        return provenance_result(self._provenance(fact_id)[1])

    def facts(self) -> Result:
        # one more than is shown: enough to say whether the list was cut, and the
        # rows read follow the cap, not the store
        found = self.memory.facts(limit=MAX_RESOURCE_FACTS + 1)
        shown = found[:MAX_RESOURCE_FACTS]
        out = facts_result(shown, empty="(no current facts)", truncated=len(found) > len(shown))
        return out

    def timeline(self, subject: object, predicate: object = None) -> tuple[Result, bytes]:
        """The bitemporal timeline as text and rows, and as a PNG picture."""
        s = arg.text(subject, "subject")
        p = None if predicate is None else arg.text(predicate, "predicate")
        tl = self.memory.timeline(s, p)
        if not tl.versions:
            raise arg.ArgumentError("subject", f"no versions of {s!r} to draw")
        import matplotlib.pyplot as plt

        fig = tl.plot()
        try:
            buf = io.BytesIO()
            fig.savefig(buf, format="png")
        finally:
            plt.close(fig)
        data = {"subject": s, "predicate": p, "versions": tl.rows()}
        return Result(data, tl.text()), buf.getvalue()
