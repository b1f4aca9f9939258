"""Relative and absolute time expressions, resolved against a reference instant.

"last month", "two weeks ago", "yesterday", "since 2019", "in March", "next
Friday", "on 2024-05-01", "for three years" ... -> an aware UTC datetime.
Day-resolution expressions resolve to midnight UTC of that day; "N hours ago"
resolves to the exact instant. Ambiguous expressions take the reading implied
by the clause's tense: "in March" said in May is this March for "I moved in
March" and next March for "I'm moving in March".

Conventions (stated, so tests and users can rely on them): weeks start on
Monday; "last week" / "this week" / "next week" are that week's Monday;
"last month" is the first of the previous month; "last Friday" is the most
recent Friday strictly before the reference day and "next Friday" the first
Friday strictly after it; "last March" is the most recent March before the
current month; seasons start on the 1st of March, June, September and
December ("last summer" said in June 2024 is June 2023); "the end of the month" is that month's last day and "the
start of next year" its first; "a couple of" is 2 and "a few" is 3."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Literal

Role = Literal["from", "until", "at"]

MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4,
    "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11,
    "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6,
}  # fmt: skip
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fifteen": 15, "twenty": 20, "thirty": 30, "a couple of": 2, "a couple": 2,
    "couple of": 2, "a few": 3, "few": 3,
}  # fmt: skip

_MON = r"(?P<mon>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_WD = r"(?P<wd>" + "|".join(WEEKDAYS) + r")"
_NUM = (
    r"(?P<n>\d{1,3}|a\s+couple\s+of|a\s+couple|couple\s+of|a\s+few|few|an|a|one|two|three|four"
    r"|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty)"
)
_UNIT = r"(?P<unit>minute|min|hour|hr|day|week|wk|fortnight|month|mo|year|yr|decade)s?"
_PREP = (
    r"(?P<prep>since|from|until|till|til|as\s+of|starting(?:\s+from|\s+on|\s+in)?|effective"
    r"|back\s+in|in|on|during|by|at)"
)
_OPT_PREP = r"(?:" + _PREP + r"\s+)?"
_REL = r"(?P<rel>last|this|next|coming|past|previous)"
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = r"(?P<season>spring|summer|autumn|winter)"

_I = re.IGNORECASE


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + pattern + r"(?![\w-])", _I)


_MOD = (
    r"(?:(?P<mod>early|mid|late|the\s+end\s+of|the\s+beginning\s+of|the\s+start\s+of"
    r"|the\s+middle\s+of)[\s-]+)?"
)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", _c(_OPT_PREP + r"(?:the\s+)?(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})")),
    (
        "dmy",
        _c(
            _OPT_PREP
            + r"(?:the\s+)?(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?"
            + _MON
            + r"(?:,?\s+(?P<y>\d{4}))?"
        ),
    ),
    (
        "mdy",
        _c(
            _OPT_PREP
            + _MON
            + r"\s+(?:the\s+)?(?P<d>\d{1,2})(?:st|nd|rd|th)?(?!\d)"
            + r"(?:,?\s+(?P<y>\d{4}))?"
        ),
    ),
    ("relmon", _c(_OPT_PREP + _REL + r"\s+" + _MON)),
    ("season", _c(_OPT_PREP + r"(?:(?P<rel>last|this|next|the)\s+)?" + _SEASON)),
    ("season", _c(_OPT_PREP + r"(?P<rel>last|this|next|the)\s+(?P<season>fall)")),
    ("month", _c(_PREP + r"\s+" + _MOD + _MON + r"(?:,?\s+(?:of\s+)?(?P<y>\d{4}))?")),
    ("month", _c(_OPT_PREP + _MOD + _MON + r",?\s+(?:of\s+)?(?P<y>(?:19|20)\d{2})")),
    ("year", _c(_PREP + r"\s+" + _MOD + r"(?P<y>(?:19|20)\d{2})")),
    ("year", _c(r"(?P<mod>early|mid|late)[\s-]+(?P<y>(?:19|20)\d{2})")),
    ("vague", _c(r"(?:many\s+|some\s+|several\s+)?(?:years|months|weeks|ages)\s+ago")),
    (
        "endof",
        _c(
            _OPT_PREP + r"the\s+(?P<edge>end|beginning|start)\s+of\s+(?P<rel>the|this|next)\s+"
            r"(?P<unit>week|month|year)"
        ),
    ),
    (
        "relunit",
        _c(
            _OPT_PREP + r"(?P<rel>last|this|next|past|previous|earlier\s+this|the\s+previous)\s+"
            r"(?P<unit>week|month|year|weekend)"
        ),
    ),
    ("weekday", _c(_OPT_PREP + r"(?:" + _REL + r"\s+)?" + _WD)),
    ("ago", _c(_OPT_PREP + _NUM + r"\s+" + _UNIT + r"\s+(?:ago|back|earlier)")),
    ("fromnow", _c(r"(?:in|within)\s+" + _NUM + r"\s+" + _UNIT + r"(?:\s+time)?(?!\s+ago)")),
    ("fromnow", _c(_NUM + r"\s+" + _UNIT + r"\s+from\s+now")),
    (
        "for",
        _c(r"(?:for|over|in|during)\s+(?:the\s+)?(?:past|last)\s+(?:" + _NUM + r"\s+)?" + _UNIT),
    ),
    ("for", _c(r"for\s+(?:about\s+|almost\s+|nearly\s+|over\s+)?" + _NUM + r"\s+" + _UNIT)),
    (
        "day",
        _c(
            _OPT_PREP + r"(?P<day>the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|"
            r"yesterday|today|tonight|tomorrow|this\s+morning|this\s+afternoon|this\s+evening|"
            r"last\s+night|earlier\s+today|the\s+new\s+year)"
        ),
    ),
]

# Cheap gate: none of the patterns can match without one of these.
_HINT = re.compile(
    r"\d|\b(?:ago|yesterday|today|tonight|tomorrow|last|this|next|since|past|previous|from|"
    r"spring|summer|autumn|winter|fall|"
    r"(?:minute|min|hour|hr|day|week|wk|fortnight|month|mo|year|yr|decade)s?|"
    + "|".join(MONTHS)
    + "|"
    + "|".join(WEEKDAYS)
    + r")\b",
    _I,
)

_FUTURE = re.compile(
    r"\b(?:will|won't|shall|going\s+to|gonna|about\s+to|plan(?:ning)?\s+to|intend\s+to|"
    r"next|tomorrow|upcoming|coming)\b|'ll\b|"
    r"\b(?:am|'m|are|'re|is|'s)\s+(?:\w+\s+)?(?:moving|starting|joining|leaving|relocating|"
    r"quitting|retiring|flying|heading|going)\b|"
    r"\b(?:I|we)\s+(?:start|begin|move|leave|join|fly|relocate)\b",
    _I,
)


def is_future(text: str) -> bool:
    """Whether a clause talks about the future ("I'm moving", "I will start")."""
    return bool(_FUTURE.search(text))


@dataclass(frozen=True)
class TimeMatch:
    """One time expression found in a text: its span, value and role.

    ``role``: ``from`` (since, from, for N years), ``until`` (until, till) or
    ``at`` (everything else: "last month", "in March")."""

    start: int
    end: int
    value: datetime | None  # None: recognised (and strippable) but not usable here
    role: Role
    text: str


def _midnight(d: date) -> datetime:
    return datetime.combine(d, time(0), tzinfo=timezone.utc)


def add_months(d: date, months: int) -> date:
    m0 = d.month - 1 + months
    y, m = d.year + m0 // 12, m0 % 12 + 1
    return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def _num(text: str) -> int:
    t = re.sub(r"\s+", " ", text.strip().lower())
    return int(t) if t.isdigit() else NUMBERS[t]


def _shift(ref: datetime, n: int, unit: str) -> datetime:
    """``ref`` moved by ``n`` units (negative: back); day units snap to midnight."""
    u = unit.lower()
    if u.endswith("s"):
        u = u[:-1]
    if u in ("minute", "min"):
        return ref + timedelta(minutes=n)
    if u in ("hour", "hr"):
        return ref + timedelta(hours=n)
    d = ref.date()
    if u == "day":
        d += timedelta(days=n)
    elif u in ("week", "wk"):
        d += timedelta(weeks=n)
    elif u == "fortnight":
        d += timedelta(weeks=2 * n)
    elif u in ("month", "mo"):
        d = add_months(d, n)
    elif u in ("year", "yr"):
        d = add_months(d, 12 * n)
    elif u == "decade":
        d = add_months(d, 120 * n)
    return _midnight(d)


def _role(prep: str | None) -> Role:
    if not prep:
        return "at"
    p = prep.lower().split()[0]
    if p in ("since", "from", "as", "starting", "effective"):
        return "from"
    if p in ("until", "till", "til"):
        return "until"
    return "at"


def _mod_day(mod: str | None) -> int:
    """Day of the month for "early/mid/late March", "the end of March"."""
    m = (mod or "").lower()
    if "end" in m:
        return 25
    if "late" in m:
        return 21
    if "mid" in m:
        return 15
    return 1


def _resolve(kind: str, g: dict[str, str | None], ref: datetime, future: bool) -> datetime | None:
    today = ref.date()
    if kind in ("iso", "dmy", "mdy"):
        if kind == "iso":
            y, m, d = int(g["y"] or 0), int(g["m"] or 0), int(g["d"] or 0)
        else:
            m, d = MONTHS[(g["mon"] or "").lower()], int(g["d"] or 0)
            if g["y"]:
                y = int(g["y"])
            else:  # no year: the nearest such day in the tense's direction
                y = today.year
                cand = date(y, m, min(d, calendar.monthrange(y, m)[1]))
                if future and cand < today:
                    y += 1
                elif not future and cand > today:
                    y -= 1
        return _midnight(date(y, m, d))
    if kind == "month":
        m = MONTHS[(g["mon"] or "").lower()]
        day = _mod_day(g.get("mod"))
        if g["y"]:
            y = int(g["y"])
        elif future:
            y = today.year if m >= today.month else today.year + 1
        else:
            y = today.year if m <= today.month else today.year - 1
        return _midnight(date(y, m, day))
    if kind == "relmon":
        m = MONTHS[(g["mon"] or "").lower()]
        rel = (g["rel"] or "").lower()
        if rel in ("last", "past", "previous"):
            y = today.year if m < today.month else today.year - 1
        elif rel in ("next", "coming"):
            y = today.year if m > today.month else today.year + 1
        else:
            y = today.year
        return _midnight(date(y, m, 1))
    if kind == "year":
        y = int(g["y"] or 0)
        mod = (g.get("mod") or "").lower()
        month = 10 if ("end" in mod or "late" in mod) else 6 if "mid" in mod else 1
        return _midnight(date(y, month, 1))
    if kind == "relunit":
        rel = re.sub(r"\s+", " ", (g["rel"] or "").lower())
        step = {"last": -1, "past": -1, "previous": -1, "the previous": -1, "next": 1}.get(rel, 0)
        unit = (g["unit"] or "").lower()
        if unit in ("week", "weekend"):
            monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
            return _midnight(monday + timedelta(days=5 if unit == "weekend" else 0))
        if unit == "month":
            return _midnight(add_months(today.replace(day=1), step))
        return _midnight(date(today.year + step, 1, 1))
    if kind == "season":  # a season starts on the 1st of its first month (winter: December)
        m = SEASONS[(g["season"] or "").lower()]
        rel = (g.get("rel") or "").lower()
        this_year = date(today.year, m, 1)
        if rel == "last":
            y = today.year if this_year < today.replace(day=1) else today.year - 1
        elif rel == "next" or (rel in ("", "the") and future):
            y = today.year if this_year > today else today.year + 1
        elif rel in ("", "the"):
            y = today.year if this_year <= today else today.year - 1
        else:  # "this summer"
            y = today.year
        return _midnight(date(y, m, 1))
    if kind == "vague":
        return None  # "years ago": a past time, but not one to date a fact by
    if kind == "endof":  # "at the end of the month": its last day; "the start of": its first
        step = 1 if (g["rel"] or "").lower() == "next" else 0
        unit = (g["unit"] or "").lower()
        start_ = end_ = today
        if unit == "week":
            start_ = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
            end_ = start_ + timedelta(days=6)
        elif unit == "month":
            start_ = add_months(today.replace(day=1), step)
            end_ = add_months(start_, 1) - timedelta(days=1)
        else:
            start_, end_ = date(today.year + step, 1, 1), date(today.year + step, 12, 31)
        return _midnight(end_ if (g["edge"] or "").lower() == "end" else start_)
    if kind == "weekday":
        wd = WEEKDAYS[(g["wd"] or "").lower()]
        rel = (g.get("rel") or "").lower()
        if rel == "this":
            return _midnight(today - timedelta(days=today.weekday()) + timedelta(days=wd))
        if rel in ("next", "coming") or (not rel and future):
            ahead = (wd - today.weekday()) % 7 or 7
            return _midnight(today + timedelta(days=ahead))
        back = (today.weekday() - wd) % 7 or 7
        return _midnight(today - timedelta(days=back))
    if kind == "ago":
        return _shift(ref, -_num(g["n"] or "1"), g["unit"] or "day")
    if kind == "fromnow":
        return _shift(ref, _num(g["n"] or "1"), g["unit"] or "day")
    if kind == "for":
        if future:
            return None  # "I'm moving there for two years": a duration ahead, not a start
        return _shift(ref, -_num(g["n"] or "1"), g["unit"] or "day")
    if kind == "day":
        word = re.sub(r"\s+", " ", (g["day"] or "").lower())
        offset = {
            "the day before yesterday": -2, "yesterday": -1, "last night": -1,
            "tomorrow": 1, "the day after tomorrow": 2,
        }.get(word, 0)  # fmt: skip
        if word == "the new year":  # "in the new year": the coming January 1
            return _midnight(date(today.year + 1, 1, 1))
        return _midnight(today + timedelta(days=offset))
    return None  # pragma: no cover - every kind is handled above


def find_times(text: str, ref: datetime, *, future: bool | None = None) -> list[TimeMatch]:
    """Every time expression in ``text`` (non-overlapping, longest first, in
    order), resolved against ``ref``. ``future``: the clause's tense (default:
    guessed from the text)."""
    if not _HINT.search(text):
        return []
    ref = ref.astimezone(timezone.utc)
    fut = is_future(text) if future is None else future
    found: list[tuple[int, int, str, re.Match[str]]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            found.append((m.start(), -(m.end() - m.start()), kind, m))
    found.sort(key=lambda x: (x[0], x[1]))
    out: list[TimeMatch] = []
    last_end = -1
    for start, _neg, kind, m in found:
        if start < last_end:
            continue
        g = m.groupdict()
        if kind == "month" and (g.get("prep") or "").lower() == "on" and not g.get("y"):
            continue  # "on February 30th" is a broken date, not "in February"
        try:
            value = _resolve(kind, g, ref, fut)
        except (ValueError, KeyError, OverflowError):
            continue  # "February 30th", a year out of range: not a date
        role: Role = "from" if kind == "for" else _role(g.get("prep"))
        out.append(TimeMatch(start, m.end(), value, role, m.group(0)))
        last_end = m.end()
    return out


def resolve(expression: str, ref: datetime, *, future: bool | None = None) -> datetime | None:
    """The value of the first time expression in ``expression`` (or ``None``)."""
    found = find_times(expression, ref, future=future)
    return found[0].value if found else None


def strip_times(text: str, matches: list[TimeMatch]) -> str:
    """``text`` with the matched expressions cut out."""
    if not matches:
        return text
    parts, pos = [], 0
    for m in matches:
        parts.append(text[pos : m.start])
        pos = m.end
    parts.append(text[pos:])
    return re.sub(r"\s{2,}", " ", " ".join(parts)).strip()
