"""A deterministic, offline rule extractor for common first-person statements.

It reads what a speaker says about themself -- "I live in Paris", "I moved to
Berlin last month", "my name is Ada", "I no longer like coffee", "I have a dog
named Rex" -- and nothing else: questions ("do you live in Paris?"),
hypotheticals ("if I moved to Berlin..."), third-person text ("the user lives
in the settings page"), quotes and support-desk chatter are left alone.
Precision first: a fact it misses can be said again, a wrong fact misleads.

Pipeline per turn: role and salience gate -> sentences -> clauses -> question /
hypothesis gates -> negation rewrite ("I don't live in X anymore" -> "I live
in X" + ended) -> time expressions cut out and resolved against the turn's
``occurred_at`` -> precompiled patterns -> object validation (places and
employers look like names, languages are languages, pets are pets).

Modules: ``clauses`` (normalisation, sentences, clauses, gates, negation),
``objects`` (is the object the right kind of noun phrase), ``patterns`` (the
rule table and its handlers), this one (the pipeline and the validity of each
fact: scheduled, ended, held)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone

from ..identity import fold
from .base import DEFAULT_SPEAKER, Extracted, ExtractionResult, Turn
from .clauses import (
    _FRAME,
    _HEDGE,
    _I,
    _QUESTION_START,
    _SARCASM,
    _clauses,
    _is_question,
    _lowercase_mode,
    _normalise,
    _Polarity,
    _rewrite_negation,
    _sentences,
)
from .lexicon import (
    PLACES,
)
from .objects import (
    _DATE_MONTH,
    _date_text,
    _name,
    _proper,
)
from .patterns import (
    _BARE_NAME,
    _BIRTHDAY,
    _BORN,
    _BORN_PLACE,
    _FIRST_PERSON,
    _GREETING_NAME,
    _HERE_NAME,
    _NAMES_NAME,
    _NEEDS,
    _PLANS,
    RULES,
    _Ctx,
    _gate_ok,
    _Hit,
    _job_title,
    _needed,
)
from .salience import is_small_talk
from .timeexpr import TimeMatch, find_times, is_future, strip_times

# -- the extractor -------------------------------------------------------------------------


# Statements about oneself are short; a longer run without punctuation is a paste or a log.
_MAX_CLAUSE = 400

_INTENT = {"lives_in": ("move to", "move out of"), "works_at": ("work at", "leave")}


def _longest_titles(hits: list[_Hit]) -> list[_Hit]:
    """ "I'm a professor of history at Yale": one title, the longest reading
    ("professor of history"), not also its head ("professor")."""
    titles = [h.obj.lower() for h in hits if h.predicate == "job_title" and h.obj]
    if len(titles) < 2:
        return hits
    return [
        h
        for h in hits
        if not (
            h.predicate == "job_title"
            and h.obj
            and any(t != h.obj.lower() and t.startswith(h.obj.lower() + " ") for t in titles)
        )
    ]


class RuleExtractor:
    """Deterministic first-person fact extraction: offline, fast, explainable.

    ``roles``: which turns are read (default: user turns; assistant text is
    never taken as facts about the user)."""

    name = "rules"
    version = "1"

    def __init__(self, *, roles: Sequence[str] = ("user",)):
        self.roles = frozenset(roles)

    def extract(self, turns: Sequence[Turn]) -> list[ExtractionResult]:
        out = []
        for turn in turns:
            if turn.role not in self.roles or is_small_talk(turn.text):
                out.append(ExtractionResult(turn, [], skipped=True))
                continue
            out.append(ExtractionResult(turn, self.extract_text(
                turn.text, occurred_at=turn.occurred_at, speaker=turn.speaker
            )))  # fmt: skip
        return out

    def extract_text(
        self,
        text: str,
        *,
        occurred_at: datetime | None = None,
        speaker: str = DEFAULT_SPEAKER,
    ) -> list[Extracted]:
        """The facts in one message (no salience gate)."""
        ref = (occurred_at or datetime.now(timezone.utc)).astimezone(timezone.utc)
        lower = _lowercase_mode(text)
        norm = _normalise(text)
        facts: list[Extracted] = []
        seen: set[tuple[str, str, str, str]] = set()
        for sentence in _sentences(norm):
            if _FRAME.match(sentence) or _SARCASM.match(sentence):
                continue
            clauses = _clauses(sentence)
            if not clauses:
                continue
            if sentence.rstrip().endswith("?") and _QUESTION_START.match(clauses[0]):
                continue  # "Do you think I should move to Berlin, or stay?"
            hits = self._sentence_hits(sentence, clauses, ref, lower)
            for hit, evidence in hits:
                key = (hit.subject or "", hit.predicate, fold(hit.obj) if hit.obj else "", hit.op)
                if key in seen:
                    continue
                seen.add(key)
                facts.append(self._fact(hit, evidence, speaker))
        return facts

    # -- internals -------------------------------------------------------------------------
    def _fact(self, hit: _Hit, evidence: str, speaker: str) -> Extracted:
        return Extracted(
            subject=hit.subject or speaker,
            predicate=hit.predicate,
            obj=hit.obj,
            op=hit.op,
            valid_from=hit.valid_from,
            valid_to=hit.valid_to,
            confidence=hit.confidence,
            evidence=evidence.strip(),
            held=bool(hit.held) and hit.op == "end",
        )

    def _sentence_hits(
        self, sentence: str, clauses: list[str], ref: datetime, lower: bool
    ) -> list[tuple[_Hit, str]]:
        out: list[tuple[_Hit, str]] = []
        memo: dict[re.Pattern[str], bool] = {}  # sentence-level searches, once per sentence
        g = (
            _GREETING_NAME.match(sentence)
            or _HERE_NAME.match(sentence)
            or _NAMES_NAME.match(sentence)  # "Name's Vic."
        )
        if g:
            name = _name(g.group("obj"), lower)
            if name:
                out.append((_Hit("name", name, "assert", 0.85, timed=False), sentence))
        for i, clause in enumerate(clauses):
            after = clauses[i + 1] if i + 1 < len(clauses) else ""
            if _HEDGE.match(after) and len(after.split()) <= 4:
                continue  # "I like pizza, I guess."
            if (
                len(clause) > _MAX_CLAUSE
                or not _FIRST_PERSON.search(clause)
                or _is_question(clause)
                or _HEDGE.search(clause)
            ):
                continue
            out += [(h, clause) for h in self._clause_hits(clause, ref, lower, sentence, memo)]
        return out

    def _clause_hits(
        self,
        clause: str,
        ref: datetime,
        lower: bool,
        sentence: str = "",
        memo: dict[re.Pattern[str], bool] | None = None,
    ) -> list[_Hit]:
        hits: list[_Hit] = []
        # birthdays and birthplaces: their dates are the object
        m = _BIRTHDAY.search(clause)
        if m and _gate_ok(clause, m.start()):
            date = _date_text(m.group("obj"), ref)
            if date:
                hits.append(_Hit("birthday", date, "assert", 0.95, timed=False))
        m = _BORN.search(clause)
        if m and _gate_ok(clause, m.start()):
            hits += self._born(m.group("rest"), ref, lower)
        if not lower:
            bare = _BARE_NAME.match(clause)
            if bare:
                name = _name(bare.group("obj"), lower)
                if name and fold(name) not in PLACES:
                    hits.append(_Hit("name", name, "assert", 0.7, timed=False))
                    if bare.group("title"):  # "I'm Dana, the new office manager."
                        hits += _job_title(bare, _Ctx(ref, lower, clause, _Polarity()))
        rewritten, pol = _rewrite_negation(clause)
        fut = is_future(rewritten)
        rewritten_low = rewritten.lower()
        for pattern, handler, keys in _PLANS:
            if not _needed(keys, rewritten_low):
                continue
            m = pattern.search(rewritten)
            if m and _gate_ok(rewritten, m.start()):
                hits += self._polarise(
                    handler(m, _Ctx(ref, lower, rewritten, pol, clause, sentence, memo)),
                    pol,
                    [],
                    ref,
                    fut=False,
                )
        times = find_times(rewritten, ref, future=fut)
        stripped = strip_times(rewritten, times)
        ctx = _Ctx(ref, lower, stripped, pol, clause, sentence, memo)
        low = stripped.lower()
        for (pattern, handler, _keys), needs in zip(RULES, _NEEDS, strict=True):
            if not _needed(needs, low):
                continue
            m = pattern.search(stripped)
            if m is None or not _gate_ok(stripped, m.start()):
                continue
            hits += self._polarise(handler(m, ctx), pol, times, ref, fut=fut)
        return _longest_titles(hits)

    def _born(self, rest: str, ref: datetime, lower: bool) -> list[_Hit]:
        hits: list[_Hit] = []
        rest = rest.strip()
        date = _date_text(rest, ref)
        if date:
            return [_Hit("birthday", date, "assert", 0.9, timed=False)]
        p = _BORN_PLACE.match(rest)
        if p:
            place = _proper(p.group("obj"), lower)
            if place:
                hits.append(_Hit("born_in", place, "assert", 0.9, timed=False))
            tail = re.search(r"\b(?:in|on)\s+(?=\S*\d|" + _DATE_MONTH + r")", p.group("obj"), _I)
            if tail:
                date = _date_text(p.group("obj")[tail.start() :], ref)
                if date:
                    hits.append(_Hit("birthday", date, "assert", 0.9, timed=False))
        return hits

    @staticmethod
    def _polarise(
        hits: list[_Hit], pol: _Polarity, times: list[TimeMatch], ref: datetime, *, fut: bool
    ) -> list[_Hit]:
        out = []
        usable = [t for t in times if t.value is not None]
        ended_at = pol.past and any(t.role == "until" for t in usable)
        if ended_at:  # "I lived in Oslo until 2020": the until is the end
            usable = [t for t in usable if t.role == "until"]
        for h in hits:
            if fut and pol.negated and not usable and h.predicate in _INTENT and h.op == "assert":
                # "I'm not moving to Berlin after all": a plan dropped, nothing about Berlin
                verb = _INTENT[h.predicate][0]
                out.append(_Hit("plans", f"{verb} {h.obj}", "end", 0.7, timed=False, held=False))
                continue
            if h.op == "assert" and (pol.negated or pol.ceased):
                if h.predicate == "likes" and not pol.ceased:
                    h = _Hit("dislikes", h.obj, "assert", h.confidence * 0.9, h.timed)
                elif h.predicate in ("birthday", "born_in", "name", "age", "nationality"):
                    continue  # "my name isn't ...": nothing to end reliably
                else:
                    # "I no longer work at IBM" says it held; "I don't speak German" does not
                    h = _Hit(h.predicate, h.obj, "end", h.confidence, h.timed, held=pol.ceased)
            elif h.op == "end" and (pol.negated or pol.ceased):
                continue  # "I didn't quit my job", "I never left Paris"
            elif h.op == "end" and h.held is None:
                h.held = True  # "I quit Deloitte", "I moved out of London"
            if fut and not usable and h.predicate in _INTENT and not pol.negated:
                # "I'm moving to Berlin" with no date: an intention, not yet a fact
                verb = _INTENT[h.predicate][0 if h.op == "assert" else 1]
                h = _Hit("plans", f"{verb} {h.obj or 'my job'}", "assert", 0.7, timed=False)
            vf = vt = None
            if h.timed and usable and (ended_at or not pol.used_to):
                if h.op == "end":
                    vt = usable[0].value
                else:
                    starts = [t.value for t in usable if t.role != "until"]
                    ends = [t.value for t in usable if t.role == "until"]
                    vf = starts[0] if starts else None
                    vt = ends[0] if ends else None
                    if vt is not None and vf is not None and vt <= vf:
                        vt = None
                    if vt is not None and vf is None and vt <= ref:
                        h = _Hit(h.predicate, h.obj, "end", h.confidence, h.timed, held=True)
            if h.timed:
                h.valid_from, h.valid_to = vf, vt
            out.append(h)
        return out
