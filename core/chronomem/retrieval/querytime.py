"""What a user query becomes before the legs see it: plain search terms.

Query syntax is never interpreted (every term is later quoted for FTS5 or
PostgreSQL); very common English function words are dropped, because in an
OR-query they match nearly every row and drown the words that carry the
question. The text indexes stem (FTS5 ``porter``, PostgreSQL ``english``), so
the terms are left unstemmed here: each backend stems them the way it stemmed
the stored text. See docs/design.md §6."""

from __future__ import annotations

import functools
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from typing import Any

# English function words: articles, pronouns, auxiliaries, prepositions,
# conjunctions, question words and a few discourse fillers. Content words
# (nouns, verbs, names, numbers) are never listed. Kept in one place: the
# lexical legs, the entity-graph leg's n-grams and the recall tooling use it.
STOPWORDS = frozenset(
    """
    a about above across after afterwards again against ago all almost along already also
    although always am among an and another any anybody anyone anything anyway anywhere are
    around as at be became because become been before being below beside besides between
    both but by can cannot could did do does doing done down during each either else
    ever every everybody everyone everything everywhere few for from further get gets got
    had has have having he her here hers herself him himself his how however i if in
    into is it its itself just least less many may me might mine more most mostly much
    must my myself neither never no nobody none nor not nothing now of off often on once
    one ones only onto or other others otherwise our ours ourselves out over own per
    perhaps please quite rather really same shall she should since so some somebody
    someone something sometime sometimes somewhere such than that the their theirs them
    themselves then there therefore these they this those though through thus to too
    toward towards under until up upon us very was we well were what whatever when
    whenever where wherever whether which whichever while who whoever whom whose why will
    with within without would yet you your yours yourself yourselves
    s t d ll m re ve don didn doesn isn wasn aren weren haven hasn hadn won wouldn
    couldn shouldn
    oh ok okay yeah yes hey hi hello
    """.split()  # noqa: SIM905 - a word list reads better as prose
)

MAX_TERMS = 32
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """The words of a text, NFKC-normalized and casefolded."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def query_terms(query: str) -> list[str]:
    """The distinct content words of a query, in order (at most ``MAX_TERMS``).
    A query made only of stopwords keeps its words: something is still searched."""
    all_words = words(query)
    terms = [w for w in all_words if w not in STOPWORDS] or all_words
    return list(dict.fromkeys(terms))[:MAX_TERMS]


# -- dates and relative times in the query -------------------------------------------
#
# "in 2023", "in July 2023", "on 7 May 2023", "May 7, 2023", "last May", "yesterday",
# "last week", "two months ago" become a time window [start, end) in UTC
# microseconds; relative phrases are taken relative to the search's valid time (the
# store's now unless the caller passed ``valid_at``/``as_of``). The window is a
# boost, never a filter (search.py): a conversation often mentions an event after
# it happened, so the hits inside the window move up and the others stay.
# A month name counts as a date only next to a day, a year, or "in/last/since/
# during/of/early/late": "may" alone is a modal verb.

MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()  # noqa: SIM905
    )
} | {"a": 1, "an": 1, "couple": 2, "few": 3, "several": 3}
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}

_MONTH = r"(?P<{g}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<{g}>(?:1[89]|2\d)\d\d)"
_DAY = r"(?P<{g}>[0-3]?\d)(?:st|nd|rd|th)?"
_PATTERNS = [
    # 7 May 2023, 7th of May, 2023
    (
        "dmy",
        _DAY.format(g="d")
        + r"\s+(?:of\s+)?"
        + _MONTH.format(g="m")
        + r",?\s+"
        + _YEAR.format(g="y"),
    ),
    # May 7, 2023
    ("mdy", _MONTH.format(g="m") + r"\s+" + _DAY.format(g="d") + r",?\s+" + _YEAR.format(g="y")),
    # May 2023, May of 2023
    ("my", _MONTH.format(g="m") + r",?\s+(?:of\s+)?" + _YEAR.format(g="y")),
    # 7 May, May 7 (the latest such day on or before now)
    ("dm", _DAY.format(g="d") + r"\s+(?:of\s+)?" + _MONTH.format(g="m")),
    ("md", _MONTH.format(g="m") + r"\s+" + _DAY.format(g="d") + r"(?!\d)"),
    # last May, in May (the latest such month, this one included unless "last")
    ("rel_m", r"(?P<w>last|in|since|during|of|early|late|mid)\s+" + _MONTH.format(g="m")),
    # 2023 (a year on its own)
    ("y", r"(?<![\d.,:/-])" + _YEAR.format(g="y") + r"(?![\d.,:/-]\d)"),
    (
        "ago",
        r"(?P<n>\d{1,3}|"
        + "|".join(_NUMBERS)
        + r")\s+(?:of\s+)?(?P<u>day|week|month|year)s?\s+ago",
    ),
    # the last two weeks, the past few months: that many units back to today
    (
        "last_n",
        r"(?:last|past)\s+(?P<n>\d{1,3}|"
        + "|".join(_NUMBERS)
        + r")\s+(?:of\s+)?(?P<u>day|week|month|year)s",
    ),
    ("last_u", r"(?P<w>last|this|past|previous)\s+(?P<u>day|week|weekend|month|year)"),
    # "on Saturday" (not "on Saturdays", "on Saturday mornings": a habit, no date)
    (
        "last_wd",
        r"(?P<w>last|this|on)\s+(?P<wd>"
        + "|".join(WEEKDAYS)
        + r")(?!s\b|\s+(?:morning|afternoon|evening|night)s\b)",
    ),
    ("yesterday", r"(?P<w>yesterday|today|tonight|this morning)"),
]
_COMPILED = [(kind, re.compile(r"\b" + p + r"\b", re.IGNORECASE)) for kind, p in _PATTERNS]
# every pattern as one alternation (its groups unnamed): it matches a text exactly when
# one of ``_COMPILED`` does somewhere in it, in one scan (most queries name no time)
_ANY = re.compile(
    "|".join(r"(?:\b" + re.sub(r"\(\?P<\w+>", "(?:", p) + r"\b)" for _, p in _PATTERNS),
    re.IGNORECASE,
)

_DAY_US = 86_400_000_000


def _us(d: datetime) -> int:
    return int((d - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1))


def _month_window(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)
    return start, end


def _day(year: int, month: int, day: int) -> tuple[datetime, datetime] | None:
    try:
        start = datetime(year, month, day, tzinfo=timezone.utc)
    except ValueError:
        return None
    return start, start + timedelta(days=1)


def _latest_day(now: datetime, month: int, day: int) -> tuple[datetime, datetime] | None:
    for year in (now.year, now.year - 1):
        w = _day(year, month, day)
        if w is not None and w[0] <= now:
            return w
    return None


def _window(kind: str, g: dict[str, str], now: datetime) -> tuple[datetime, datetime] | None:
    today = datetime(now.year, now.month, now.day, tzinfo=timezone.utc)
    month = MONTHS.get((g.get("m") or "").casefold())
    year = int(g["y"]) if g.get("y") else None
    day = int(g["d"]) if g.get("d") else None
    if kind in ("dmy", "mdy"):
        assert year is not None and month is not None and day is not None
        return _day(year, month, day)
    if kind == "my":
        assert year is not None and month is not None
        return _month_window(year, month)
    if kind in ("dm", "md"):
        assert month is not None and day is not None
        return _latest_day(now, month, day)
    if kind == "rel_m":
        assert month is not None
        y = (
            now.year
            if month < now.month or (month == now.month and g["w"].casefold() != "last")
            else now.year - 1
        )
        return _month_window(y, month)
    if kind == "y":
        assert year is not None
        return datetime(year, 1, 1, tzinfo=timezone.utc), datetime(
            year + 1, 1, 1, tzinfo=timezone.utc
        )
    if kind == "ago":
        raw = g["n"].casefold()
        count = int(raw) if raw.isdigit() else _NUMBERS[raw]
        unit = _UNITS[g["u"].casefold()]
        centre = today - timedelta(days=count * unit)
        half = timedelta(days=max(1, unit // 2 if count > 1 or unit > 1 else 1))
        return centre - half, centre + half + timedelta(days=1)
    if kind == "last_n":
        raw = g["n"].casefold()
        count = int(raw) if raw.isdigit() else _NUMBERS[raw]
        return today - timedelta(days=count * _UNITS[g["u"].casefold()]), today + timedelta(days=1)
    if kind == "last_u":
        u, w = g["u"].casefold(), g["w"].casefold()
        if u == "day":
            return today - timedelta(days=1), today + timedelta(days=1)
        if u in ("week", "weekend"):
            return (
                (today - timedelta(days=7), today + timedelta(days=1))
                if w == "this"
                else (
                    today - timedelta(days=14),
                    today + timedelta(days=1),
                )
            )
        if w == "past":  # "the past month": the last 30 days, today included
            return today - timedelta(days=_UNITS[u]), today + timedelta(days=1)
        if u == "month":
            if w == "this":
                return _month_window(now.year, now.month)
            prev = (now.year, now.month - 1) if now.month > 1 else (now.year - 1, 12)
            return _month_window(*prev)
        y = now.year if w == "this" else now.year - 1
        return datetime(y, 1, 1, tzinfo=timezone.utc), datetime(y + 1, 1, 1, tzinfo=timezone.utc)
    if kind == "last_wd":
        back = (today.weekday() - WEEKDAYS.index(g["wd"].casefold())) % 7
        if back == 0 and g["w"].casefold() == "last":
            back = 7
        start = today - timedelta(days=back)
        return start, start + timedelta(days=1)
    w = g["w"].casefold()
    start = today - timedelta(days=1) if w == "yesterday" else today
    return start, start + timedelta(days=1)


@functools.lru_cache(maxsize=4096)
def _time_matches(query: str) -> tuple[tuple[str, int, int, dict[str, Any]], ...]:
    """Every match of every time pattern in the query's NFKC text, in the order
    ``time_window`` tries them (kind, start, end, groups): what the query alone
    decides, so a query asked again (or naming no time, the usual case) is not
    matched again."""
    text = unicodedata.normalize("NFKC", query)
    if _ANY.search(text) is None:  # no pattern matches anywhere
        return ()
    return tuple(
        (kind, m.start(), m.end(), m.groupdict())
        for kind, rx in _COMPILED
        for m in rx.finditer(text)
    )


def time_window(query: str, now_us: int) -> tuple[int, int] | None:
    """The time the query names, as [start, end) µs UTC, or None when it names none.
    Several expressions: the smallest window that covers them all (the first
    match of each span wins: "7 May 2023" is a day, not also a month and a year)."""
    matches = _time_matches(query)
    if not matches:
        return None
    try:
        now = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=now_us)
    except OverflowError:
        return None
    taken: list[tuple[int, int]] = []
    found: list[tuple[datetime, datetime]] = []
    for kind, start, end, groups in matches:
        if any(start < b and a < end for a, b in taken):
            continue
        try:
            w = _window(kind, dict(groups), now)
        except (OverflowError, ValueError):
            w = None
        if w is not None and w[0] < w[1]:
            taken.append((start, end))
            found.append(w)
    if not found:
        return None
    return _us(min(a for a, _ in found)), _us(max(b for _, b in found))
