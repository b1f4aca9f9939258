"""The rule table: which phrasing means which fact, and the handlers that
turn a match into candidate facts (``_Hit``), checking the object's kind.

``RULES`` run on the negation-rewritten, time-stripped clause, gated by cheap
keywords; ``_PLANS`` run on the clause with its times (their dates are part of
the object, or say when, as in "I turn 40 next week")."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from ..identity import fold
from .base import Op
from .clauses import (
    _HYPOTHETICAL,
    _I,
    _Polarity,
    _quoted,
    _rx,
)
from .lexicon import (
    CHILD_KINDS,
    FREE_REJECT_FIRST,
    GENERIC_NOUNS,
    JOB_HEADS,
    LANGUAGES,
    MONTH_WORDS,
    NAME_STOP,
    NAMED_KINDS,
    NATIONALITIES,
    PLACES,
    UI_WORDS,
    words,
)
from .objects import (
    _FREE_CUT,
    _KINDS_RX,
    _MONTH_NAMES,
    _OBJ,
    HEAD,
    _cut,
    _free,
    _has_object,
    _languages,
    _looks_like_place,
    _name,
    _proper,
    _singular,
    _tail,
)
from .timeexpr import find_times

# -- the rules -------------------------------------------------------------------------------


@dataclass
class _Ctx:
    ref: datetime
    lower: bool
    clause: str
    pol: _Polarity
    raw: str = ""  # the clause as said (before negation rewrite and time stripping)
    sentence: str = ""  # the whole sentence
    memo: dict[re.Pattern[str], bool] | None = None  # sentence-level searches, shared

    def seen(self, pattern: re.Pattern[str]) -> bool:
        """Whether ``pattern`` occurs in the sentence, searched once per sentence
        (a sentence of many clauses must not cost a search per clause)."""
        if self.memo is None:
            self.memo = {}
        if pattern not in self.memo:
            self.memo[pattern] = pattern.search(self.sentence) is not None
        return self.memo[pattern]


@dataclass
class _Hit:
    predicate: str
    obj: str | None
    op: Op = "assert"
    confidence: float = 0.9
    timed: bool = True  # the clause's time expressions apply to this fact
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    held: bool | None = None  # an end: the value held until then (None: ends from a rule do)
    subject: str | None = None  # None: the speaker; else a third person ("Lily")


Handler = Callable[[re.Match[str], _Ctx], list[_Hit]]


def _we_ok(m: re.Match[str]) -> bool:
    return (m.groupdict().get("who") or "I").lower() == "i"


def _place_hit(pred: str, op: Op = "assert", conf: float = 0.9) -> Handler:
    def handle(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
        obj = _proper(m.group("obj"), ctx.lower)
        return [_Hit(pred, obj, op, conf)] if obj else []

    return handle


def _org_hit(op: Op = "assert", conf: float = 0.9) -> Handler:
    def handle(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
        if not _we_ok(m):
            return []
        raw = m.groupdict().get("obj")
        if raw is None:
            return [_Hit("works_at", None, op, conf)] if op == "end" else []
        obj = _proper(raw, ctx.lower, org=True)
        if obj is None and op == "end" and m.groupdict().get("job"):
            return [_Hit("works_at", None, op, conf)]  # "I quit my job at the bank"
        return [_Hit("works_at", obj, op, conf)] if obj else []

    return handle


# Communities one joins or quits without working there.
_PLATFORMS = words(
    "twitter x bluesky facebook instagram tiktok reddit discord mastodon linkedin strava "
    "duolingo snapchat threads whatsapp telegram signal youtube twitch patreon substack "
    "pinterest tumblr peloton"
)


def _joined(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I joined Atlassian": an employer; "I joined Bluesky": a platform, nothing."""
    hits = _org_hit(conf=0.75)(m, ctx)
    return [h for h in hits if not (h.obj and fold(h.obj) in _PLATFORMS)]


def _left(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not _we_ok(m):
        return []
    obj = _proper(m.group("obj"), ctx.lower, org=True)
    if not obj:
        return []
    if _looks_like_place(obj):
        return [_Hit("lives_in", obj, "end", 0.7)]
    # "I left Google" may be a job or an app: it ends a known employer, asserts no past one
    return [_Hit("works_at", obj, "end", 0.7, held=False)]


def _quit_bare(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I quit Facebook": a job or a habit; ends a known employer only."""
    return [
        _Hit(h.predicate, h.obj, h.op, h.confidence, held=False)
        for h in _org_hit("end", 0.6)(m, ctx)
        if not (h.obj and fold(h.obj) in _PLATFORMS)  # "I quit Twitter"
    ]


_TITLE_STOP = words(
    "user customer member fan subscriber client guest patient beginner newbie regular student "
    "big huge long-time longtime loyal paying premium new first-time frequent proud happy "
    "little bit"
)


def _title(raw: str) -> str | None:
    t = _tail(raw.strip())
    words = t.lower().split()
    if not words or len(words) > 4 or words[0] in _TITLE_STOP or words[-1] in _TITLE_STOP:
        return None
    if words[0] in FREE_REJECT_FIRST or any(w in UI_WORDS for w in words):
        return None
    return t


def _title_at(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    title = _title(m.group("title"))
    if title is None:
        return []
    hits = [_Hit("job_title", title, "assert", 0.8)]
    raw = m.groupdict().get("obj")
    if raw:
        org = _proper(raw, ctx.lower, org=True)
        if org:
            hits.append(_Hit("works_at", org, "assert", 0.85))
        elif m.groupdict().get("need_org"):
            return []
    return hits


def _name_hit(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    raw = _tail(_cut(m.group("obj"), _FREE_CUT))
    if ctx.lower and len(raw.split()) > 3:
        return []  # "call me when you get a chance": no capitals to tell a name by
    obj = _name(m.group("obj"), ctx.lower)
    return [_Hit("name", obj, "assert", 0.95, timed=False)] if obj else []


_ABOUT_YOU = _rx(
    r"\byour\s+(?:[\w-]+\s+)?(?:app|apps|product|service|site|website|tool|software|platform|"
    r"team|support|company|api|docs|update|version|feature|features|design|bot|assistant)\b"
)
_NAME_TALK = _rx(r"\b(?:name|call\s+me|go\s+by)\b")
_TASTE_STOP = words(
    "job work life family wife husband kids children boyfriend girlfriend partner mom dad mum "
    "parents friends team boss city country home house it this that everything everyone you"
)
_PAST_TASTE = frozenset({"liked", "loved", "enjoyed", "adored", "preferred"})


def _taste(pred: str) -> Handler:
    def handle(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
        if not _we_ok(m):
            return []
        verb = (m.groupdict().get("verb") or "").lower()
        if (
            verb in _PAST_TASTE
            and not (ctx.pol.negated or ctx.pol.ceased)
            and "always" not in ctx.clause.lower()
        ):
            return []  # "I enjoyed the movie": an episode, not a taste
        if ctx.seen(_ABOUT_YOU):
            return []  # "I love your app but I hate the new icons": feedback, not a taste
        if re.match(r"^\s*(?:my|our)\s", m.group("obj"), _I):
            return []  # "I love my new apartment in Queens": a possession, not a taste
        said = m.re.search(ctx.raw)
        if said and said.group("obj").split()[:1] != m.group("obj").split()[:1]:
            return []  # "I love summer in Paris": a time was cut from the object's start
        living = re.match(r"^\s*living\s+(?:here\s+)?in\s+(?P<obj>.+)", m.group("obj"), _I)
        if living and pred == "likes" and not ctx.pol.negated:
            place = _proper(living.group("obj"), ctx.lower)  # "I love living in Montreal"
            return [_Hit("lives_in", place, "assert", 0.8)] if place else []
        out = []
        for o in _free(m.group("obj")):
            if o.lower() in _TASTE_STOP:
                continue  # "I love my job": no taste to remember
            if re.fullmatch(r"[A-Z][a-z]+", o) and ctx.seen(_NAME_TALK):
                continue  # "My name is Lisa but I prefer Liz"
            out.append(_Hit(pred, o, "assert", 0.85))
        return out

    return handle


def _proper_fan(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I'm a massive Arsenal fan": a name before "fan" (capitals tell it)."""
    if ctx.lower or m.group("obj").lower() in NATIONALITIES:
        return []
    return _taste("likes")(m, ctx)


def _speaks(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not _we_ok(m):
        return []
    return [_Hit("speaks", lang, "assert", 0.9) for lang in _languages(m.group("obj"))]


def _allergy(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not _we_ok(m):
        return []
    return [
        _Hit("allergic_to", o, "assert", 0.9)
        for o in _free(m.group("obj"), max_words=4)
        # "allergic to work lol", "allergic to Mondays"
        if o.lower() not in GENERIC_NOUNS and o.lower().rstrip("s") not in MONTH_WORDS
    ]


_HAS_AND = _rx(r"\s+and\s+(?=(?:a|an|one|two|three|four|five|six|\d)\s)")


def _has(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    first, *more = _HAS_AND.split(m.group("obj"), maxsplit=3)
    hits = _has_one(first, m)
    if hits:
        for part in more:
            hits += _has_one(part, m)
    return hits


def _has_one(text: str, m: re.Match[str]) -> list[_Hit]:
    parsed = _has_object(text)
    if parsed is None:
        return []
    obj, kind = parsed
    spouse = re.match(r"^(husband|wife) named (.+)$", obj)
    if spouse:
        return [_Hit("married_to", spouse.group(2), "assert", 0.8)]
    verb = (m.groupdict().get("verb") or "").lower()
    if verb == "had" and kind not in CHILD_KINDS:
        return [_Hit("has", obj, "end", 0.7, timed=False)]  # "I had a dog": not any more
    return [_Hit("has", obj, "assert", 0.85)]


_SPOUSES = frozenset({"husband", "wife"})


def _has_named(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    name = _name(m.group("name"), ctx.lower)
    if not name:
        return []
    if m.group("kind").lower() in _SPOUSES:
        return [_Hit("married_to", name, "assert", 0.85)]
    return [_Hit("has", f"{_singular(m.group('kind'))} named {name}", "assert", 0.9)]


def _has_gone(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    kind = _singular(m.group("kind"))
    name = m.groupdict().get("name")
    obj = f"{kind} named {name}" if name else kind
    return [_Hit("has", obj, "end", 0.8)]


_TO_YOU = _rx(r"\b(?:you|your|ya|u)\b")


def _plans(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if _TO_YOU.search(m.group("obj")):
        return []  # "I plan to call you tomorrow": an errand, not a plan to remember
    objs = _free(m.group("obj"), allow_list=False, max_words=10)
    return [_Hit("plans", o, "assert", 0.8, timed=False) for o in objs]


def _working_on(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not _we_ok(m):
        return []
    objs = _free(m.group("obj"), allow_list=False, max_words=8)
    return [_Hit("working_on", o, "assert", 0.8) for o in objs]


_TIME_WORDS = MONTH_WORDS | words("last next this spring summer autumn fall winter")


def _married(op: Op) -> Handler:
    def handle(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
        raw = m.groupdict().get("obj")
        bare = (raw or "").strip(" .!,").lower()
        if raw is None or bare in ("", "now", "again"):  # "I got divorced ." (a time was cut)
            return [_Hit("married_to", None, "end", 0.8)] if op == "end" else []
        appositive = re.match(r"^(?:my|a|an|the)\s+[\w\s'-]{1,40}?,\s+(?P<n>[A-Z][\w'-]+)", raw)
        if appositive and not ctx.lower:  # "my high school sweetheart, Rob"
            raw = appositive.group("n")
        name = _name(raw, ctx.lower)
        if name and fold(name.split()[0]) in _TIME_WORDS:
            return []  # "we got married last summer"
        return [_Hit("married_to", name, op, 0.85)] if name else []

    return handle


def _simple(pred: str, conf: float = 0.9, timed: bool = True) -> Handler:
    def handle(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
        obj = _tail(m.group("obj"))
        return [_Hit(pred, obj, "assert", conf, timed=timed)] if obj else []

    return handle


def _nationality(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("nationality", m.group("obj").title(), "assert", 0.85, timed=False)]


def _age(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I'm 34": from now; "I'm 30 next month": from then; "I'm 55 this year": unknown when."""
    n = int(m.group("obj"))
    if not 1 <= n <= 120:
        return []
    times = [t.value for t in find_times(ctx.raw, ctx.ref, future=True) if t.value]
    if times and times[0] <= ctx.ref and "turned" not in ctx.raw.lower():
        return []  # "turned 21 yesterday" dates it; "55 this year" does not
    start = times[0] if times else None
    return [_Hit("age", str(n), "assert", 0.85, timed=False, valid_from=start)]


# -- coverage added in round two: titles, contacts, projects, named family, "now I'm in" ----


_TITLE_NOT_YET = words("aspiring wannabe would-be future failed trainee-to-be")
_TITLE_PAST = words("former ex ex- retired")  # "a retired firefighter": was one, is no longer


def _job_title(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I'm a (freelance) photographer": the head noun must be a job."""
    tokens = m.group("title").split()  # as typed: "IT consultant", "Senior Software Engineer"
    if tokens and tokens[0].lower() in _TITLE_NOT_YET:
        return []  # "an aspiring writer", "a would-be novelist"
    past = bool(tokens) and tokens[0].lower() in _TITLE_PAST
    if past:
        tokens = tokens[1:]
    while tokens and tokens[0].lower() in _TITLE_STOP:
        tokens = tokens[1:]  # "the new office manager" -> "office manager"
    if not tokens or tokens[-1].lower() not in JOB_HEADS or len(tokens) > 4:
        return []
    for t in tokens:
        w = t.lower()
        acronym = len(t) >= 2 and t.isupper()  # "IT", "ER", "UX"
        if (w in FREE_REJECT_FIRST and not acronym) or w in UI_WORDS or w in _TITLE_STOP:
            return []
    if past:
        return [_Hit("job_title", " ".join(tokens), "end", 0.8, timed=False, held=True)]
    return [_Hit("job_title", " ".join(tokens), "assert", 0.85)]


_PHONE = r"(?P<obj>\+?\(?\d[\d\s().-]{5,18}\d)"


def _phone(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    raw = m.group("obj").strip()
    digits = sum(ch.isdigit() for ch in raw)
    if not 7 <= digits <= 15 or raw.count("(") != raw.count(")"):
        return []
    return [_Hit("phone", raw, "assert", 0.9, timed=False)]


def _email(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("email", m.group("obj").rstrip("."), "assert", 0.95, timed=False)]


# Objects of "working on a ..." that are support-desk business, not projects.
_TASK_WORDS = words(
    "ticket tickets issue issues bug bugs problem problems error errors fix export import "
    "migration refund login password account settings invoice billing subscription complaint "
    "review reply response email message comment note letter it this that something assumption "
    "request order report-back question answer weekend weekends holiday holidays saturday "
    "sunday saturdays sundays christmas night nights shift shifts"
)


# What one "finishes" that was a project ("my dissertation"; not "my coffee").
_PROJECT_NOUNS = (
    r"thesis|dissertation|novel|book|memoir|degree|course|project|app|website|paper|album|"
    r"painting|renovation|phd|masters|master's|certification|bootcamp|training|apprenticeship|"
    r"startup|game|film|documentary|podcast|quilt|garden|studies|research|manuscript"
)
_APP = frozenset({"app", "apps", "website", "site"})
_GONE_AFTER = _rx(
    r"^\s*,?\s*(?:just\s+)?(?:died|passed|ran\s+away|was\s+put|is\s+gone|went\s+missing)"
)


def _project(pred: str, op: Op = "assert") -> Handler:
    def handle(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
        if not _we_ok(m):
            return []
        raw = m.group("obj").strip().split(",")[0]  # "a side project, a budgeting app"
        article = re.match(r"^(?:a|an|my|our)\s", raw, _I) is not None
        objs = _free(raw, allow_list=False, max_words=8, support=not article)
        out = []
        for o in objs:
            ws = [w.strip(".,!?") for w in o.lower().split()]
            if any(w in _TASK_WORDS or (w in UI_WORDS and w not in _APP) for w in ws):
                continue
            if re.match(r"^\w+ing\b", o) and pred == "working_on":
                continue  # "working on getting the export to run"
            out.append(_Hit(pred, o, op, 0.8, held=False if op == "end" else None))
        return out

    return handle


_DAY_PRECISE = _rx(
    r"\b(?:today|tomorrow|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"\d{1,2}(?:st|nd|rd|th)?(?!\d)|\d{4}-\d{2}-\d{2})\b"
)
_NOT_DAY = _rx(r"\b(?:week|weekend|month|year|spring|summer|autumn|fall|winter|ago)\b")


def _turning(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I turn 40 next week": age 40 from then; a day-precise date is a birthday.
    "My daughter Lily turns 7 on Friday": Lily's birthday (and age), Lily the subject."""
    n = int(m.group("obj"))
    if not 1 <= n <= 120:
        return []
    who = m.groupdict().get("name")
    if who and (ctx.lower or who.lower() in NAME_STOP):
        return []
    times = [t for t in find_times(m.group("rest"), ctx.ref, future=True) if t.value]
    if not times:
        return []
    when, at = times[0], times[0].value
    assert at is not None
    if at <= ctx.ref:
        return []  # "I'm turning 30 this year": when is not known
    hits = [_Hit("age", str(n), "assert", 0.8, timed=False, valid_from=at, subject=who)]
    if _DAY_PRECISE.search(when.text) and not _NOT_DAY.search(when.text):
        day = f"{_MONTH_NAMES[at.month - 1]} {at.day}"
        hits.append(_Hit("birthday", day, "assert", 0.8, timed=False, subject=who))
    return hits


def _dated_plan(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I'm going to learn Spanish this summer": a plan only with a future date."""
    if not [t for t in find_times(m.group("obj"), ctx.ref, future=True) if t.value]:
        return []
    return _plans(m, ctx)


_TENURE = _rx(r"\b(?:since|for\s+(?:over\s+|almost\s+|nearly\s+|about\s+)?(?:\w+|\d+)\s+years?)\b")


def _tenure(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I've been at Intel since 2015": an employer, said with a tenure (not a visit)."""
    if not _TENURE.search(ctx.raw):
        return []
    obj = _proper(m.group("obj"), ctx.lower, org=True)
    if not obj or _looks_like_place(obj):
        return []
    return [_Hit("works_at", obj, "assert", 0.75)]


def _past_tenure(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not _TENURE.search(ctx.raw) or ctx.pol.negated:
        return []
    # the tenure says how long, not when it ended: no time applies
    return [
        _Hit(h.predicate, h.obj, "end", h.confidence, timed=False, held=True)
        for h in _tenure(m, ctx)
    ]


_HATE = frozenset({"hate", "dislike", "detest", "loathe", "can't stand"})


def _season(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not _we_ok(m):
        return []
    verb = " ".join(m.group("verb").lower().split())
    pred = "dislikes" if verb in _HATE else "likes"
    return [_Hit(pred, m.group("obj").lower(), "assert", 0.8, timed=False)]


def _plan_np(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    objs = _free(m.group("obj"), allow_list=False, max_words=10)
    return [_Hit("plans", o, "assert", 0.8, timed=False) for o in objs]


_VISIT = _rx(
    r"\b(?:for\s+(?:the|a|this|my|our|work|business)\b|visit\w*|vacation|holiday|trip|"
    r"conference|meeting|weekend|tonight|today|right\s+now|at\s+the\s+moment|layover|staying|"
    r"airport|hotel|stuck)\b"
)
_NOW = _rx(r"\b(?:now|these\s+days|nowadays|for\s+good|permanently)\b")
_LIVE_CUE = _rx(
    r"\b(?:live[ds]?|living|moved|relocated|used\s+to|settled|for\s+good|permanently)\b"
)


def _now_in(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "now I'm in Rome" after a move; never "I'm in Rome for the weekend"."""
    if not _we_ok(m) or _VISIT.search(ctx.clause) or ctx.seen(_VISIT):
        return []
    if not (ctx.pol.used_to or ctx.pol.ceased or _NOW.search(ctx.raw)):
        return []
    if not ctx.seen(_LIVE_CUE) or ctx.sentence.rstrip().endswith("?"):
        return []  # "I'm in New York now, what should I see?": a visit
    place = _proper(m.group("obj"), ctx.lower)
    if not place:
        return []
    return [_Hit("lives_in", place, "assert", 0.75)]


def _no_longer_at(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not ctx.pol.ceased:
        return []
    obj = _proper(m.group("obj"), ctx.lower, org=True)
    if not obj or _looks_like_place(obj):
        return []
    return [_Hit("works_at", obj, "assert", 0.75)]  # the polarity makes it an end


def _named_member(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "My daughter Lily ...": has daughter named Lily (married_to for a spouse)."""
    if ctx.lower:
        return []
    kind = m.group("kind").lower()
    name = m.group("name")
    low = name.lower()
    if kind not in NAMED_KINDS or low in NAME_STOP or low in MONTH_WORDS or low in PLACES:
        return []
    if low in LANGUAGES or low in NATIONALITIES:
        return []
    if _GONE_AFTER.match(ctx.clause[m.end() :]):
        return []  # "my cat Luna passed away": an end, read by another rule
    if kind in _SPOUSES:
        return [_Hit("married_to", name, "assert", 0.8, timed=False)]
    return [_Hit("has", f"{kind} named {name}", "assert", 0.85, timed=False)]


_KIND = r"(?P<kind>" + _KINDS_RX + r")"

# (pattern, handler) run on the time-stripped, negation-rewritten clause.
RULES: list[tuple[re.Pattern[str], Handler, tuple[str, ...]]] = [
    # lives_in
    (
        _rx(
            HEAD + r"\s+(?:live|lives|lived|living|reside|resides|resided|residing)"
            r"(?:\s+(?:alone|on\s+my\s+own|by\s+myself))?(?:\s+with\s+(?:my|our)(?:\s+[\w-]+){1,3}?)?"
            r"(?:\s+in\s+(?:a|an|my|our)\s+(?:[\w-]+\s+)?(?:flat|house|apartment|studio|condo|"
            r"bungalow|cottage|townhouse))?(?:\s+right|\s+just)?\s+in" + _OBJ
        ),
        _place_hit("lives_in"),
        ("liv", "resid"),
    ),
    (
        _rx(HEAD + r"\s+(?:based|located|settled|stationed)\s+(?:in|out\s+of)" + _OBJ),
        _place_hit("lives_in"),
        ("based", "located", "settled", "stationed"),
    ),
    (
        _rx(
            HEAD + r"\s+(?:move|moved|moving|relocate|relocated|relocating)"
            r"(?:\s+(?:back|over|out|away|abroad|here|there))?(?:\s+from\s+[^,;]+?)?\s+(?:to|into)"
            + _OBJ
        ),
        _place_hit("lives_in"),
        ("mov", "relocat"),
    ),
    (
        _rx(HEAD + r"\s+(?:move|moved|moving)\s+(?:out\s+of|away\s+from)" + _OBJ),
        _place_hit("lives_in", "end"),
        ("mov",),
    ),
    # works_at / job_title
    (
        _rx(
            HEAD + r"\s+(?:work|works|worked|working)(?:\s+(?:remotely|full[\s-]time|"
            r"part[\s-]time|freelance|there|now|currently))*\s+(?:at|for)" + _OBJ
        ),
        _org_hit(),
        ("work",),
    ),
    (
        _rx(HEAD + r"\s+(?:employed|hired|recruited)\s+(?:at|by)" + _OBJ),
        _org_hit(),
        ("employ", "hired", "recruit"),
    ),
    (
        _rx(
            HEAD + r"\s+(?:join|joined|joining)"
            r"(?:\s+the\s+(?:[\w-]+\s+){0,2}team\s+(?:at|of))?" + _OBJ
        ),
        _joined,
        ("join",),
    ),
    (
        _rx(
            HEAD + r"\s+(?:start|started|starting|begin|began|beginning)"
            r"(?:\s+(?:a\s+|my\s+)?(?:new\s+)?(?:job|position|role|work|working|internship))?"
            r"\s+(?:at|with)" + _OBJ
        ),
        _org_hit(conf=0.8),
        ("start", "begin", "began"),
    ),
    (
        _rx(
            HEAD + r"\s+(?:got|landed|accepted|took|have|started)\s+(?:a|an|the)\s+(?:new\s+)?"
            r"(?:full[\s-]time\s+|part[\s-]time\s+)?(?:job|position|role|internship)\s+"
            r"(?:at|with)" + _OBJ
        ),
        _org_hit(conf=0.85),
        ("job", "position", "role", "internship"),
    ),
    (
        _rx(
            r"\bI(?:'m|\s+am)(?:\s+(?:now|currently|also))?\s+(?:a|an)\s+"
            r"(?P<title>[a-z][a-z -]{1,40}?)\s+(?P<need_org>at|for|with)" + _OBJ
        ),
        _title_at,
        (" a ", " an "),
    ),
    (
        _rx(
            HEAD + r"\s+(?:work|works|worked|working)\s+as\s+(?:(?:a|an|the)\s+)?"
            r"(?P<title>[a-z][a-z -]{1,40}?)(?:\s+(?:at|for|with)" + _OBJ + r"|\s*$|\s*[,.!])"
        ),
        _title_at,
        ("work",),
    ),
    (
        _rx(
            HEAD + r"\s+(?:work|works|worked|working)\s+(?:at|for)\s+(?P<obj>.+?)\s+as\s+"
            r"(?:a|an|the)?\s*(?P<title>[a-z][a-z -]{1,40}?)\s*(?:[,.!]|$)"
        ),
        _title_at,
        ("work",),
    ),
    (
        _rx(
            HEAD + r"\s+(?:quit|left|leave|leaving|quitting|lost)\s+(?:my|our)\s+"
            r"(?P<job>job|position|role|gig)(?:\s+(?:at|with)" + _OBJ + r")?"
            r"(?:\s+(?:lol|haha|lmao|omg))?[\s.!]*$"
        ),
        _org_hit("end"),
        ("quit", "left", "leav", "lost"),
    ),
    (
        _rx(
            HEAD
            + r"\s+(?:got\s+|was\s+|been\s+)?(?:fired|laid\s+off|let\s+go|sacked|retired|resigned)"
            r"(?:\s+(?:from|by)" + _OBJ + r")?[\s.!]*$"
        ),
        _org_hit("end", 0.8),
        ("fired", "laid", "let go", "sacked", "retired", "resigned"),
    ),
    (_rx(HEAD + r"\s+(?:left|leave|leaving)" + _OBJ), _left, ("left", "leav")),
    (_rx(HEAD + r"\s+(?:quit|quitting)" + _OBJ), _quit_bare, ("quit",)),
    # name
    (
        _rx(
            r"\bmy\s+(?:first\s+|full\s+|real\s+|given\s+|legal\s+)?name(?:'s|\s+is)\s+(?P<obj>.+)"
        ),
        _name_hit,
        ("name",),
    ),
    (
        _rx(
            r"(?:^|\b(?:you\s+can|please|just|everyone|people|friends|they|most\s+people)\s+)"
            r"call(?:s|ed)?\s+me" + _OBJ
        ),
        _name_hit,
        ("call",),
    ),
    (_rx(r"\bI\s+go\s+by" + _OBJ), _name_hit, ("go by",)),
    (_rx(r"\bI(?:'m|\s+am)\s+(?:called|named)" + _OBJ), _name_hit, ("called", "named")),
    # likes / dislikes
    (
        _rx(
            HEAD
            + r"\s+(?P<verb>like|likes|liked|liking|love|loves|loved|loving|enjoy|enjoys|enjoyed|"
            r"enjoying|adore|adores|adored|prefer|prefers|preferred|dig|into|fond\s+of|"
            r"crazy\s+about|passionate\s+about|obsessed\s+with|keen\s+on|addicted\s+to)" + _OBJ
        ),
        _taste("likes"),
        (
            "lik",
            "lov",
            "enjoy",
            "ador",
            "prefer",
            "dig",
            "into",
            "fond",
            "crazy",
            "passionate",
            "obsessed",
            "keen",
            "addicted",
        ),
    ),
    (
        _rx(
            HEAD + r"\s+(?:a\s+)?(?:huge|big|great|massive|real|die-hard|long-time|longtime)?"
            r"\s*fan\s+of" + _OBJ
        ),
        _taste("likes"),
        ("fan",),
    ),
    (
        _rx(
            r"\b(?P<who>I)(?:'m|\s+am)\s+(?:a|an)\s+(?:(?:huge|big|massive|great|die-hard|lifelong|"
            r"long-time|longtime|real)\s+)?(?P<obj>(?-i:[A-Z][\w'&-]+(?:\s+[A-Z][\w'&-]+){0,2}))"
            r"\s+fan\b"
        ),
        _proper_fan,
        ("fan",),
    ),
    (
        _rx(
            r"\bmy\s+(?:all[\s-]time\s+)?favou?rite\s+(?:[a-z][a-z -]{0,30}?)\s+"
            r"(?:is|are|has\s+always\s+been)" + _OBJ
        ),
        lambda m, ctx: [_Hit("likes", o, "assert", 0.85) for o in _free(m.group("obj"))],
        ("favo",),
    ),
    (
        _rx(r"^\s*(?P<obj>[^,;]{2,40}?)\s+(?:is|are)\s+my\s+(?:all[\s-]time\s+)?favou?rite\b"),
        lambda m, ctx: [_Hit("likes", o, "assert", 0.8) for o in _free(m.group("obj"))],
        ("favo",),
    ),
    (
        _rx(
            HEAD + r"\s+(?P<verb>hate|hates|hated|dislike|dislikes|disliked|detest|detests|"
            r"loathe|loathes|despise|despises|can't\s+stand|cannot\s+stand|can't\s+bear|"
            r"can't\s+deal\s+with)" + _OBJ
        ),
        _taste("dislikes"),
        ("hat", "dislik", "detest", "loath", "despis", "stand", "bear", "deal with"),
    ),
    # speaks
    (
        _rx(
            HEAD + r"\s+(?:can\s+)?(?:speak|speaks)\s+(?:two|three|four|five|six|\d)\s+languages"
            r"\s*[:,\u2014-]+\s*(?P<obj>.+)"
        ),
        _speaks,
        ("languages",),
    ),
    (
        _rx(HEAD + r"\s+(?:can\s+)?(?:speak|speaks|spoke|speaking)" + _OBJ),
        _speaks,
        ("speak", "spoke"),
    ),
    (
        _rx(
            HEAD + r"\s+(?:fluent|native|bilingual|trilingual|conversational|proficient)"
            r"\s+(?:in\s+)?(?P<obj>.+)"
        ),
        _speaks,
        ("fluent", "native", "bilingual", "trilingual", "conversational", "proficient"),
    ),
    (_rx(r"\b(?P<who>I)(?:'m|\s+am)\s+a\s+native\s+(?P<obj>\w+)\s+speaker"), _speaks, ("native",)),
    (
        _rx(r"(?P<who>)\bmy\s+(?:native|first|mother)\s+(?:language|tongue)\s+is" + _OBJ),
        _speaks,
        ("language", "tongue"),
    ),
    (
        _rx(
            r"(?P<who>)^\s*(?P<obj>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s+is\s+my\s+(?:native|first|"
            r"mother)\s+(?:language|tongue)\b"
        ),
        _speaks,
        ("language", "tongue"),
    ),
    # allergic_to
    (
        _rx(
            HEAD + r"\s+(?:(?:very|severely|highly|deathly|mildly|slightly|extremely|super|"
            r"really|a\s+bit|a\s+little|quite|so)\s+)?allergic\s+to" + _OBJ
        ),
        _allergy,
        ("allerg",),
    ),
    (
        _rx(
            r"\b(?P<who>I)(?:\s+have|'ve\s+got|\s+have\s+got|\s+got)\s+(?:a|an)\s+"
            r"(?:(?:severe|mild|bad|serious|slight)\s+)?(?P<obj>[a-z][a-z -]{1,30}?)\s+allergy"
        ),
        _allergy,
        ("allerg",),
    ),
    (
        _rx(
            r"\b(?P<who>I)(?:\s+have|'ve\s+got|\s+have\s+got)\s+(?:an?\s+)?(?:(?:severe|mild|bad|"
            r"serious|slight)\s+)?allerg(?:y|ies)\s+to" + _OBJ
        ),
        _allergy,
        ("allerg",),
    ),
    (
        _rx(
            r"\b(?P<who>I)(?:'m|\s+am)\s+[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?\s+and\s+"
            r"(?:(?:very|severely|also|mildly|slightly|really)\s+)?allergic\s+to" + _OBJ
        ),
        _allergy,
        ("allerg",),
    ),
    (
        _rx(
            r"\b(?:my|our)\s+(?P<num>two|three|four|five|six|\d)\s+(?P<kind>kids|children|sons|"
            r"daughters|boys|girls|dogs|cats|grandchildren|grandkids|brothers|sisters)\b"
            r"(?=\s*,|\s+(?:are|were|have|both|just|love|live|go)\b)"
        ),
        lambda m, ctx: [
            _Hit("has", f"{m.group('num').lower()} {m.group('kind').lower()}", "assert", 0.8)
        ],
        ("my ", "our "),
    ),
    (
        # "I'm married with two kids", "I'm an accountant, married, with two kids"
        _rx(
            r"\bI(?:'m|\s+am)\s+(?:(?:a|an)\s+[\w-]+(?:\s+[\w-]+)?,?\s+)?(?:happily\s+)?"
            r"(?:married|divorced|single|separated|widowed),?\s+with\s+"
            r"(?P<num>two|three|four|five|six|\d)\s+"
            r"(?P<kind>kids|children|sons|daughters)\b"
        ),
        lambda m, ctx: [
            _Hit("has", f"{m.group('num').lower()} {m.group('kind').lower()}", "assert", 0.8)
        ],
        ("with",),
    ),
    # has
    (
        _rx(
            HEAD
            + r"\s+(?P<verb>have|has|had|own|owns|adopted|bought|got|'ve\s+got|have\s+got)"
            + _OBJ
        ),
        _has,
        ("have", "has", "had", "own", "adopted", "bought", "got"),
    ),
    (
        _rx(r"\bmy\s+" + _KIND + r"(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+(?P<name>\S+)"),
        _has_named,
        ("name", "call"),
    ),
    (
        _rx(
            r"\b(?:my|our)\s+"
            + _KIND
            + r"(?:\s*,?\s+(?P<name>(?-i:[A-Z][a-z]+)),?)?\s+(?:just\s+)?"
            r"(?:died|passed\s+away|passed|ran\s+away|was\s+put\s+down|is\s+gone)"
        ),
        _has_gone,
        ("died", "passed", "ran away", "put down", "gone"),
    ),
    (
        _rx(
            HEAD
            + r"\s+(?:had\s+to\s+)?(?:sold|sell|gave\s+away|give\s+away|rehomed|rehome|gave\s+up"
            r"|lost)\s+(?:my|our)\s+" + _KIND + r"(?:\s+(?P<name>(?-i:[A-Z][a-z]+)))?"
        ),
        _has_gone,
        ("sold", "sell", "gave", "give", "rehome", "lost"),
    ),
    # working_on
    (_rx(HEAD + r"\s+(?:working|work|worked)\s+on" + _OBJ), _project("working_on"), ("work",)),
    (
        _rx(r"\bmy\s+(?:current\s+|latest\s+|new\s+|side\s+|main\s+)?project\s+is" + _OBJ),
        lambda m, ctx: [
            _Hit("working_on", o, "assert", 0.8)
            for o in _free(m.group("obj"), allow_list=False, max_words=8)
        ],
        ("project",),
    ),
    # married_to
    (_rx(HEAD + r"\s+(?:married\s+to|married)" + _OBJ), _married("assert"), ("married",)),
    (
        _rx(HEAD + r"\s+(?:got\s+)?divorced(?:(?:\s+from)?" + _OBJ + r")?[\s.!]*$"),
        _married("end"),
        ("divorced",),
    ),
    # round two: job titles, projects, "now I'm in", named family members, more job changes
    (
        _rx(
            r"\b(?P<who>I)(?:'m|\s+am|'ve\s+been|\s+have\s+been|\s+be)(?:\s+(?:now|currently|also|"
            r"actually|still|just|already|officially|proudly))*\s+(?:a|an)\s+"
            r"(?P<title>[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,4}?)(?=\s*$|\s*[,.!;:)]|\s+(?:by\s+"
            r"(?:trade|profession|day|night)|at|for|with|in|of|and|who|since|from|now|here|myself|too|"
            r"full[\s-]time|part[\s-]time|on)\b)"
        ),
        _job_title,
        (" a ", " an "),
    ),
    (
        _rx(
            HEAD + r"\s+(?:writing|building|developing|designing|coding|renovating|restoring|"
            r"composing|recording|programming)\s+(?=(?:a|an|my|our)\s)" + r"(?P<obj>.+)"
        ),
        _project("working_on"),
        (
            "writ",
            "build",
            "develop",
            "design",
            "cod",
            "renovat",
            "restor",
            "compos",
            "record",
            "program",
        ),
    ),
    (
        _rx(
            HEAD + r"\s+(?:finished|completed|wrapped\s+up|submitted|shipped)\s+"
            r"(?=(?:my|our)\s+(?:[\w-]+\s+){0,2}?(?:" + _PROJECT_NOUNS + r")\b)(?P<obj>.+)"
        ),
        _project("working_on", "end"),
        ("finish", "complet", "wrapped", "submit", "shipped"),
    ),
    (
        _rx(
            r"\b(?P<who>I|we)(?:'m|\s+am|'re|\s+are|\s+be)(?:\s+(?:now|currently|back|still|"
            r"living|based|finally))*\s+in\s+(?P<obj>.+)"
        ),
        _now_in,
        (" in ",),
    ),
    (
        _rx(HEAD + r"\s+call\s+(?P<obj>.+?)\s+home\b"),
        _place_hit("lives_in", conf=0.75),
        ("home",),
    ),
    (
        _rx(r"(?P<who>)^\s*home\s+(?:for\s+me\s+|for\s+us\s+)?is\s+(?P<obj>.+)"),
        _place_hit("lives_in", conf=0.75),
        ("home",),
    ),
    (
        _rx(
            r"\b(?:my|our)\s+(?:(?:little|baby|younger|older|eldest|oldest|youngest|big|new)\s+)?"
            r"(?P<kind>" + "|".join(sorted(NAMED_KINDS, key=len, reverse=True)) + r")\s+"
            r"(?P<name>(?-i:[A-Z][a-z]+))\b(?!['\u2019]s\b)(?!\s+(?-i:[A-Z]))"
        ),
        _named_member,
        ("my ", "our "),
    ),
    (
        _rx(r"\b(?P<who>I|we)(?:'ve|\s+have)\s+been\s+(?:working\s+)?(?:at|with)" + _OBJ),
        _tenure,
        ("been",),
    ),
    (
        # "I was at McKinsey for six years": a past employer, said with a tenure
        _rx(r"\b(?P<who>I)\s+was\s+(?:at|with)" + _OBJ),
        _past_tenure,
        ("was",),
    ),
    (
        _rx(
            HEAD + r"\s+(?:joined|join|joining|started\s+at|starting\s+at|start\s+at)\s+"
            r"(?P<obj>\S+(?:\s+\S+){0,3}?)\s+as\s+(?:a|an|the)\s+"
            r"(?P<title>[a-z][a-z -]{1,40}?)\s*(?:[,.!]|$)"
        ),
        _title_at,
        ("join", "start"),
    ),
    (
        # "I'm no longer at Accenture", "I'm not at Google anymore" ("I'm at X" alone is a visit)
        _rx(r"\b(?P<who>I)(?:'m|\s+am)\s+at" + _OBJ),
        _no_longer_at,
        (" at ",),
    ),
    (
        _rx(
            HEAD + r"\s+(?:moved|relocated|came)\b[^,;]*?\bfor\s+(?:a|my|the)\s+(?:new\s+)?"
            r"(?:job|position|role)\s+(?:at|with)" + _OBJ
        ),
        _org_hit(conf=0.8),
        ("job", "position", "role"),
    ),
    (
        # "I'm on the design team at Canva"
        _rx(
            r"\b(?P<who>I|we)(?:'m|\s+am|'re|\s+are)\s+on\s+the\s+(?:[\w-]+\s+){0,2}team\s+"
            r"(?:at|of|for)" + _OBJ
        ),
        _org_hit(conf=0.75),
        ("team",),
    ),
    (
        _rx(HEAD + r"\s+(?:resigned|resign|resigning)\s+(?:from|at)" + _OBJ),
        _org_hit("end", 0.8),
        ("resign",),
    ),
    (
        _rx(
            HEAD + r"\s+(?:handed|handing|hand)\s+in\s+(?:my|our)\s+(?:notice|resignation)"
            r"\s+(?:at|to)" + _OBJ
        ),
        _org_hit("end", 0.8),
        ("hand",),
    ),
    (
        _rx(
            HEAD + r"\s+(?:accepted|accepting)\s+(?:an?\s+|the\s+)?(?:job\s+)?offer\s+"
            r"(?:from|at|with)" + _OBJ
        ),
        _org_hit(conf=0.8),
        ("accept",),
    ),
    (
        _rx(HEAD + r"\s+(?:work|works|worked|working)\s+in\s+(?:[a-z]+\s+){1,2}?(?:for|at)" + _OBJ),
        _org_hit(conf=0.8),
        ("work",),
    ),
    (
        _rx(HEAD + r"\s+(?:can't|cannot|can\s+not)\s+get\s+enough\s+of" + _OBJ),
        _taste("likes"),
        ("enough",),
    ),
    (
        _rx(HEAD + r"\s+(?:gone|went|going)\s+off" + _OBJ),
        lambda m, ctx: (
            [_Hit("likes", o, "end", 0.75) for o in _free(m.group("obj"))] if _we_ok(m) else []
        ),
        ("off",),
    ),
    (_rx(HEAD + r"\s+grew\s+up\s+speaking" + _OBJ), _speaks, ("speaking",)),
    # nationality, age, email
    (
        _rx(
            r"\bI(?:'m|\s+am)\s+(?:a\s+)?(?P<obj>"
            + "|".join(sorted(NATIONALITIES, key=len, reverse=True))
            + r")(?:\s+(?:citizen|national))?(?:,?\s+born\s+and\s+(?:raised|bred))?[\s.!]*$"
        ),
        _nationality,
        ("i'm", "i am"),
    ),
    (
        _rx(
            r"\bI(?:'m|\s+am)\s+(?P<obj>\d{1,3})(?:\s+y/?o)?(?:[\s.!]*$|\s*,(?!\s*\d)|"
            r"\s+and\s+(?!a\s+half\b|\d))"
        ),
        _age,
        ("i'm", "i am"),
    ),
    (_rx(r"\bI(?:'m|\s+am)\s+(?P<obj>\d{1,3})\s+(?:years?|yrs?)\s+old\b"), _age, ("old",)),
    (_rx(HEAD + r"\s+(?:just\s+)?turned\s+(?P<obj>\d{1,3})\b"), _age, ("turned",)),
    (
        _rx(
            r"\b(?:my\s+(?:(?:new|work|personal|current|home|private|school|other|main)\s+)*"
            r"e-?mail(?:\s+address)?(?:\s+is|'s|:|,|\s+(?:has\s+)?changed\s+to)?|"
            r"(?:reach|email|e-mail|contact|mail)\s+me"
            r"\s+(?:at|on))\s+(?P<obj>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
        ),
        _simple("email", 0.95, timed=False),
        ("@",),
    ),
]

# Cheap keyword gates: a rule's regex only runs if one of its keywords is in the clause
# (plain substring tests on the lowercased clause, far cheaper than a regex per rule).
_NEEDS = [keys for _p, _h, keys in RULES]


def _needed(keys: tuple[str, ...], low: str) -> bool:
    return any(k in low for k in keys)


# Rules that read the raw clause (their dates are the object, not the validity).
_PLANS: list[tuple[re.Pattern[str], Handler, tuple[str, ...]]] = [
    (
        # "I hate winter", "I'm not a fan of summer": a season is a taste here, not a time
        _rx(
            HEAD + r"\s+(?P<verb>love|like|enjoy|adore|hate|dislike|detest|loathe|can't\s+stand|"
            r"(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of)\s+(?P<obj>(?:the\s+)?(?:summer|winter|spring|"
            r"autumn|fall|summertime|wintertime))(?:\s+(?:time|weather|months))?[\s.!]*$"
        ),
        _season,
        ("summer", "winter", "spring", "autumn", "fall"),
    ),
    (
        _rx(
            HEAD
            + r"\s+(?:plan|plans|planning|intend|intends|intending|aim|aiming)\s+(?:to|on)"
            + _OBJ
        ),
        _plans,
        ("plan", "intend", "aim"),
    ),
    (_rx(r"(?P<who>)\bmy\s+plan\s+is\s+to" + _OBJ), _plans, ("plan",)),
    (
        # "I'm hoping to buy a house next year": a hope is a plan only with a future date
        _rx(
            HEAD + r"\s+(?:hope|hoping)\s+to\s+(?P<obj>(?:learn|visit|buy\s+(?:a|an|our|my)|travel|"
            r"study|adopt|retire|climb|hike|move\s+to|go\s+back\s+to|(?:write|build)\s+(?:a|an|my))\b"
            r"(?!.*\b(?:you|your|us)\b).+)"
        ),
        _dated_plan,
        ("hop",),
    ),
    (
        _rx(HEAD + r"\s+(?:planning|organi[sz]ing)\s+(?=(?:a|an|my|our)\s)(?P<obj>.+)"),
        _plan_np,
        ("planning", "organi"),
    ),
    (
        _rx(HEAD + r"\s+saving\s+(?:up\s+)?for\s+(?P<obj>(?:a|an|my|our)\s.+)"),
        _plan_np,
        ("saving",),
    ),
    (
        _rx(
            r"\b(?P<who>I|we)(?:'m|\s+am|'re|\s+are)\s+(?:going\s+to|gonna)\s+(?P<obj>(?:learn|"
            r"visit|run|take|buy|build|travel|study|open|launch|write|adopt|retire|attend|apply|"
            r"train|climb|hike|sell|finish|start)\b.+)"
        ),
        _dated_plan,
        ("going to", "gonna"),
    ),
    (
        _rx(
            r"(?:\bmy\s+(?:(?:new|cell|mobile|home|work|personal|direct|private|main)\s+)*"
            r"(?:phone(?:\s+number)?|cell(?:\s+phone)?(?:\s+number)?|mobile(?:\s+number)?|number|"
            r"telephone(?:\s+number)?|whatsapp)(?:\s+to\s+(?:reach|call|text|contact)\s+me(?:\s+(?:at|on))?)?"
            r"(?:\s+is|'s|:|\s+(?:has\s+)?changed[,;:]?\s+"
            r"(?:it's|it\s+is)(?:\s+now)?)?|\b(?:reach|call|text|ring|contact)"
            r"\s+me\s+(?:at|on)|\b(?:best|easiest)\s+(?:phone\s+)?number\s+to\s+(?:reach|call|text|contact)"
            r"\s+me(?:\s+(?:at|on))?\s+is)\s+" + _PHONE
        ),
        _phone,
        ("phone", "number", "cell", "mobile", "whatsapp", " me at", " me on"),
    ),
    (
        _rx(
            r"\b(?P<who>I)(?:(?:'m|\s+am)\s+(?:turning|going\s+to\s+turn|gonna\s+turn)|"
            r"'ll\s+turn|\s+will\s+turn|\s+turn|'ll\s+be|\s+will\s+be)\s+(?P<obj>\d{1,3})\b"
            r"(?!\s*(?:%|(?:percent|minutes?|mins?|hours?|hrs?|days?|weeks?|seconds?|secs?|miles?|"
            r"km)\b))"
            r"(?P<rest>.*)"
        ),
        _turning,
        ("turn", "'ll be", "will be"),
    ),
    (
        _rx(
            r"\b(?:my|our)\s+(?:[a-z]+\s+)?(?P<kind>" + "|".join(sorted(NAMED_KINDS)) + r")\s+"
            r"(?P<name>(?-i:[A-Z][a-z]+))\s+(?:turns|is\s+turning|will\s+turn|'s\s+turning)\s+"
            r"(?P<obj>\d{1,3})\b(?P<rest>.*)"
        ),
        _turning,
        ("turn",),
    ),
]
_BIRTHDAY = _rx(
    r"\bmy\s+(?:birthday|bday|b-day|birth\s*date|date\s+of\s+birth|dob)(?:\s+is|\s+was|'s|"
    r"\s+falls)(?:\s+on)?\s+(?P<obj>.+)"
)
_BORN = _rx(r"\bI\s+was\s+born\s+(?P<rest>.+)")
_BORN_PLACE = _rx(r"^(?:(?:and\s+)?raised\s+)?(?:in|at)\s+(?P<obj>.+)")
_GREETING_NAME = _rx(
    r"^\s*(?:hi|hello|hey|hiya|heya|greetings|good\s+(?:morning|afternoon|evening))\b[\s,!.]*"
    r"(?:(?:there|all|everyone|folks|guys)\b[\s,!.]*)?(?:I'm|I\s+am|this\s+is|it's|its)\s+"
    r"(?P<obj>.+)"
)
_BARE_NAME = re.compile(
    r"^\s*(?:(?:and|so|well|oh|also)\s+)?I(?:'m|\s+am)\s+"
    r"(?P<obj>[A-Z][a-z][\w'-]*(?:\s+[A-Z][a-z][\w'-]*)?)(?:\s+here)?"
    r"(?:,\s+(?:the|your|a|an)\s+(?P<title>[a-z][a-z -]{1,40}?))?"
    r"(?:\s+from\s+(?:the\s+)?[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2})?"
    r"(?:,?\s+(?i:nice|pleased|good|great|glad)\s+to\s+meet\s+you|,\s*(?i:hi|hello|hey))?"
    r"[\s.!]*$"
)
_NAMES_NAME = re.compile(r"^\s*(?i:name's)\s+(?P<obj>[A-Z][a-z][\w'-]*)[\s.!]*$")
_HERE_NAME = re.compile(
    r"^\s*(?i:hi|hello|hey|hiya|heya)\b[\s,!.]*(?P<obj>[A-Z][a-z][\w'-]*)\s+here[\s.!]*$"
)
_FIRST_PERSON = _rx(r"\b(?:I|I'm|I've|me|my|we|we're|we've|mine|our)\b")


def _gate_ok(clause: str, start: int) -> bool:
    """The text before a match makes it a hypothesis, report or quote?"""
    return not _HYPOTHETICAL.search(clause[:start]) and not _quoted(clause, start)
