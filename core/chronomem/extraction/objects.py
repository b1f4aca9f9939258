"""Object validation for the rule patterns: is this the right kind of noun phrase?

Places and employers must look like names (``_proper``), people's names like
names (``_name``), tastes and projects like short noun phrases with no
discourse markers, fillers or clause tails (``_free``), languages must be
languages, possessions known kinds (``_has_object``), birthdays dates
(``_date_text``). Every validator returns ``None``/``[]`` rather than a
doubtful object: a wrong fact is worse than a missing one."""

from __future__ import annotations

import re
from datetime import datetime

from ..identity import fold
from .clauses import (
    _I,
    _rx,
)
from .lexicon import (
    CONNECTORS,
    FREE_REJECT_FIRST,
    GENERIC_NOUNS,
    HAS_KINDS,
    LANGUAGES,
    MONTH_WORDS,
    NAME_STOP,
    NATIONALITIES,
    PLACES,
    SUPPORT_WORDS,
    UI_WORDS,
    words,
)
from .timeexpr import MONTHS, find_times

# -- pattern building blocks ---------------------------------------------------------------

_ADVS = (
    r"just|recently|finally|actually|currently|now|already|also|still|officially|really|"
    r"basically|mostly|originally|eventually|then|happily|permanently|newly|totally|absolutely|"
    r"truly|genuinely|honestly|seriously|definitely|kinda|kind\s+of|sort\s+of|pretty\s+much|"
    r"literally|do|does|did|even|always|mainly|primarily|full[\s-]time|part[\s-]time|remotely|"
    r"gladly|proudly|sometimes|usually|generally|both|all|been|got|gotten|super|so|very|quite|"
    r"officially|temporarily|legally|technically|obviously|personally|definitely|be"
)
_ADV = rf"(?:\s+(?:{_ADVS}))*"
_FUT = r"(?:\s+(?:going\s+to|gonna|about\s+to|will|shall)" + _ADV + r")?"
_AUX = r"(?:'m|'ve|'re|'ll|\s+am|\s+have|\s+are|\s+will|\s+was|\s+were|\s+had)?"
HEAD = r"\b(?P<who>I|we)" + _AUX + _ADV + _FUT
_OBJ = r"\s+(?P<obj>.+)"

_PLACE_CUT = re.compile(
    r"\s*[,(:!?]|\s+[-\u2013\u2014]\s|\s+(?:[Ww]ith|for|as|because|ever\s+since|since|where|which|"
    r"who|near|"
    r"to|after|before|but|so|when|while|if|then|until|till|from|in|at|on|by|and\s+(?=[a-z])|"
    r"and\s+(?=I\b)|now|last|next|this|ago|lol|haha|btw|tho|though)\b"
)
# Discourse markers and fillers: never part of an object ("cats, by the way").
_DISCOURSE = (
    r"by\s+the\s+way|btw|just\s+so\s+you\s+know|fyi|for\s+what\s+it's\s+worth|to\s+be\s+honest|"
    r"to\s+be\s+fair|tbh|unfortunately|fortunately|luckily|sadly|thankfully|honestly|actually|"
    r"you\s+know|you\s+see|I\s+mean|as\s+you\s+know|as\s+I\s+said|of\s+course|anyway|anyways|"
    r"if\s+that\s+matters|if\s+you\s+must\s+know|in\s+case\s+you\s+(?:were\s+)?wonder\w*|"
    r"for\s+the\s+record|just\s+saying|lol|haha\w*|lmao|fwiw|imo|imho|though|tho|too|"
    r"as\s+well|in\s+fact|basically|obviously|really|remember|mind\s+you|no\s+joke|ugh|sigh|meh|"
    r"yay|oops|argh|phew|hmm+|welp|yikes|ha(?:ha)*|heh|omg|smh|literally|seriously|for\s+real"
)
_DISCOURSE_CUT = re.compile(
    r"\s*,?\s*\b(?:" + _DISCOURSE + r")\b.*$|\s*,\s*(?:" + _DISCOURSE + r")\b.*$", _I
)

_FREE_CUT = re.compile(
    r"\s*,\s*(?=(?:but|because|since|though|although|which|who|so|if|when|while|especially|please|"
    r"nothing|not|just|only|mostly|"
    r"like|lol|haha|tbh|btw|and\s+(?:I|it|that|they))\b)|\s*[(:!?]|\s+[-\u2013\u2014]\s|"
    r"\s+(?:because|since|but|though|although|when|whenever|while|if|unless|so\s+much|which|"
    r"who|whose|especially|except|lol|haha|tbh|btw|whereas|as\s+long\s+as|than|after|before|"
    r"during|until|over|rather\s+than|instead\s+of)\b",
    _I,
)
_TRAIL = re.compile(
    r"(?:[\s,;:!?.)\"'\]]+|\s+(?:now|currently|already|again|too|though|tho|actually|lol|"
    r"haha+|btw|tbh|imo|full[\s-]time|part[\s-]time|remotely|permanently|for\s+good|these\s+days|"
    r"nowadays|at\s+the\s+moment|right\s+now|as\s+well|also|finally|recently|lately|ok|okay|"
    r"a\s+lot|so\s+much|very\s+much|more\s+than\s+anything|the\s+most|to\s+death|in\s+general|"
    r"a\s+ton|honestly|really|either|fluently|well|a\s+bit|a\s+little|here|there|today|"
    r"at\s+all|my\s+whole\s+life|all\s+my\s+life|my\s+entire\s+life|forever|for\s+ages|"
    r"ever\s+since|since\s+then|"
    r":\)|:-\)|:D|<3))+$",
    _I,
)
_LEAD_FREE = _rx(r"^(?:(?:a|an|my|some|our|all|any|both|own)\s+)+")
_LIST_SPLIT = _rx(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|as\s+well\s+as|plus)\s+")
_COMPOUNDS = words(
    "mac_and_cheese rock_and_roll fish_and_chips salt_and_pepper peanut_butter_and_jelly "
    "black_and_white bread_and_butter rhythm_and_blues r_and_b sweet_and_sour "
    "dungeons_and_dragons law_and_order pride_and_prejudice guns_and_roses "
    "simon_and_garfunkel beauty_and_the_beast tom_and_jerry tea_and_biscuits"
)


def _tail(text: str) -> str:
    prev = None
    while prev != text:
        prev, text = text, _TRAIL.sub("", text)
    return text.strip()


def _cut(text: str, pattern: re.Pattern[str]) -> str:
    text = _DISCOURSE_CUT.sub("", text)
    m = pattern.search(text)
    return _tail(text[: m.start()] if m else text)


def _is_cap(token: str) -> bool:
    return token[:1].isupper() or token[:1].isdigit() or bool(re.match(r"^[a-z][A-Z]", token))


_CALLED = _rx(
    r"^(?:(?:a|an|the|this)\s+(?:[\w-]+\s+){0,3}?(?:called|named)\s+|(?:a|an|the|our|my)\s+"
    r"(?:[\w-]+\s+){0,2}?(?:flat|apartment|house|condo|studio|loft|cottage|townhouse|place)"
    r"\s+in\s+(?:(?:the\s+)?(?:center|centre|heart|middle|suburbs|outskirts)\s+of\s+)?|"
    r"with\s+(?:my|our|a|some|two|three)\s+(?:[\w-]+\s+){0,3}?in\s+|"
    r"(?:the\s+)?(?:center|centre|heart|middle|outskirts|suburbs|north|south|east|west)\s+of\s+)"
)


_NOT_A_NAME_START = words(
    "a an my your our another two three four five six several many multiple some various few"
)


def _proper(obj: str, lower: bool, *, org: bool = False) -> str | None:
    """A place or organisation name, or None if the object does not look like one."""
    obj = _CALLED.sub("", obj.strip())  # "a startup called Lumen" -> "Lumen"
    obj = _cut(obj, _PLACE_CUT)
    tokens = obj.split()
    if tokens and tokens[0].lower() == "the":
        rest = " ".join(tokens[1:])
        if lower and rest.lower() not in PLACES:
            return None
        tokens = tokens[1:]
    if not tokens or len(tokens) > 5:
        return None
    low = [t.lower().strip(".,'") for t in tokens]
    if low[0] in MONTH_WORDS or low[0] in {"i", "me", "myself", "it", "you", "us"}:
        return None
    named_org = org and not lower and len(tokens) == 1 and tokens[0][:1].isupper()
    if (any(t in UI_WORDS for t in low) and not named_org) or low[-1] in CONNECTORS:
        return None  # "the Pro plan"; but "I work for GitLab" names a company
    if lower:
        if low[0] in FREE_REJECT_FIRST or low[0] in _NOT_A_NAME_START or low[0].endswith("ing"):
            return None  # "two companies", "teaching"
        if any(t in GENERIC_NOUNS for t in low):
            return None
        if (not org and any(ch.isdigit() for ch in obj)) or not tokens[0][:1].isalpha():
            return None
    else:
        if not (tokens[0][:1].isupper() or re.match(r"^[a-z][A-Z]|^\d[\w-]*[A-Z]", tokens[0])):
            return None
        for t, lt in zip(tokens, low, strict=True):
            if not (_is_cap(t) or lt in CONNECTORS or (org and lt in {"&", "+"})):
                return None
    result = " ".join(tokens)
    return result if re.search(r"[^\W\d_]", result) else None


def _looks_like_place(obj: str) -> bool:
    return fold(obj) in PLACES


_NAME_TOKEN = re.compile(r"[^\W\d_][\w'.-]*")


_HONORIFICS = frozenset({"dr", "mr", "mrs", "ms", "miss", "prof", "sir", "madam", "mx"})


def _name(obj: str, lower: bool) -> str | None:
    first = obj.split()[0].rstrip(".,").lower() if obj.split() else ""
    if first in _HONORIFICS:
        return None  # "call me Dr. Patel": a form of address, not a name to store
    words: list[str] = []
    for tok in obj.split():
        m = _NAME_TOKEN.fullmatch(tok.rstrip(".,!?;:"))
        if m is None or tok.rstrip(".,!?;:").lower() in NAME_STOP:
            break
        words.append(m.group(0))
        if tok[-1:] in ".,!?;:" or len(words) == 3:
            break
    if not words:
        return None
    if not lower and not all(w[:1].isupper() for w in words):
        words = [w for w in words if w[:1].isupper()][:1] if words[0][:1].isupper() else []
    if not words:
        return None
    if not lower and any(p[:1].islower() for w in words for p in w.split("-")[1:]):
        return None  # "I'm Melbourne-based"
    if fold(words[0]) in LANGUAGES or fold(words[0]) in NATIONALITIES:
        return None
    return " ".join(words)


def _gerund(verb: str) -> str:
    v = verb.lower()
    if v == "be":
        return "being"
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")):
        return v[:-1] + "ing"
    if (
        len(v) <= 4
        and re.fullmatch(r"[a-z]*[^aeiou][aeiou][^aeiouwxy]", v)
        and not re.search(r"[aeiou]{2}", v)
    ):
        return v + v[-1] + "ing"
    return v + "ing"


# A preposition left dangling where a time was cut out ("the slides for [tomorrow]").
_DANGLING = _rx(r"(?:\s+(?:for|to|at|on|in|by|from|of|with|until|till))+\s*$")
_BARE_DETERMINERS = frozenset({"a", "an", "the", "my", "our", "some", "this", "that"})
_CLAUSE_VERBS = frozenset({"is", "are", "am", "was", "were", "i", "i'm", "i've", "you're"})


def _free(
    obj: str, *, allow_list: bool = True, max_words: int = 6, support: bool = True
) -> list[str]:
    """Objects of tastes and projects: noun phrases, lists split, junk refused."""
    text = _cut(obj, _FREE_CUT)
    if not text:
        return []
    key = text.lower()
    items = [text] if (not allow_list or key in _COMPOUNDS) else _LIST_SPLIT.split(text)
    out = []
    for raw in items:
        item = _DANGLING.sub("", _tail(_LEAD_FREE.sub("", raw.strip())))
        if not item or item.lower() in _BARE_DETERMINERS:
            continue  # "working on a [Saturday]": the time was the object
        m = re.match(r"^to\s+([a-z]+)\b(.*)$", item, _I)
        if m:
            if f"to_{m.group(1).lower()}" in FREE_REJECT_FIRST:
                return []
            item = _gerund(m.group(1)) + m.group(2)
        words = [w.strip(".,;:!?'\"") for w in item.lower().split()]
        if not words or len(words) > max_words:
            return []
        if any(w in _CLAUSE_VERBS for w in words):
            return []  # '"My name is Inigo Montoya"': a clause, not a noun phrase
        first_two = "_".join(words[:2])
        if words[0] in FREE_REJECT_FIRST or first_two in FREE_REJECT_FIRST:
            return []
        if support and any(w in SUPPORT_WORDS for w in words):
            return []
        if item.lower() in MONTH_WORDS:
            return []  # "I love [last] May": a time, not a taste
        out.append(item)
    return out


def _languages(obj: str) -> list[str]:
    text = _cut(obj, _FREE_CUT)
    out = []
    for raw in _LIST_SPLIT.split(text):
        words = [w.lower().strip(".,!?") for w in raw.split()]
        if not words or len(words) > 4:
            continue
        two = " ".join(words[-2:])
        if len(words) >= 2 and two in LANGUAGES:
            out.append(two.title())
        elif words[-1] in LANGUAGES:
            out.append(words[-1].upper() if words[-1] == "asl" else words[-1].title())
        elif words[0] in LANGUAGES:  # "French fluently"
            out.append(words[0].title())
    return out


_KINDS_RX = "|".join(
    sorted({re.escape(k) for k in HAS_KINDS} | {re.escape(v) for v in HAS_KINDS.values()},
           key=len, reverse=True)
)  # fmt: skip
_NUMWORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_HAS_OBJ = re.compile(
    r"^(?:(?P<num>a|an|one|two|three|four|five|six|\d)\s+)?(?:(?:new|little|old|young|small|big"
    r"|cute|lovely|beautiful|rescue|grown|adult|baby|newborn|infant|teenage|black|white|brown"
    r"|grey|gray|red|blue|tabby|ginger|electric|used|vintage|[\w-]*year-old|[\w-]*month-old"
    r"|[\w-]*week-old|pet|family|twin|younger|older|big|little)\s+){0,3}"
    r"(?P<kind>" + _KINDS_RX + r")\b(?P<rest>.*)$",
    _I,
)
_HAS_NAME = re.compile(
    r"^\s*(?:,\s*)?(?:(?:who\s+is\s+|who's\s+|that\s+is\s+)?(?:named|called)\s+|,\s*)"
    r"(?P<name>[A-Z][\w'-]+)",
)
_HAS_REST_OK = _rx(
    r"^\s*(?:$|,|\.|!|(?:and|but|though|so|because|since|who|that|which|named|called|at|in|too|"
    r"as|with|now|back|whom|"
    r"of\s+my\s+own|already|still|again|lol|haha|btw|:\))\b)"
)


def _singular(kind: str) -> str:
    k = kind.lower()
    for s, p in HAS_KINDS.items():
        if k == p:
            return s
    return k


def _has_object(obj: str) -> tuple[str, str] | None:
    """("dog named Rex", kind) from "a dog named Rex and a cat"; None if not a known kind."""
    m = _HAS_OBJ.match(obj.strip())
    if m is None:
        return None
    kind, rest = m.group("kind").lower(), m.group("rest")
    nm = _HAS_NAME.match(rest)
    num_word = (m.group("num") or "a").lower()
    if nm is not None and num_word in ("a", "an", "one"):
        return f"{_singular(kind)} named {nm.group('name')}", kind
    if not _HAS_REST_OK.match(rest):
        return None  # "a dog allergy", "a car problem"
    num = (m.group("num") or "a").lower()
    n = int(num) if num.isdigit() else _NUMWORDS.get(num, 1)
    if n > 1 or kind not in HAS_KINDS:
        return (f"{num} {kind}" if n > 1 else kind), kind
    return kind, kind


_DATE_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))


def _date_text(text: str, ref: datetime) -> str | None:
    """A birthday as text: ``1990-05-03``, ``1990-05``, ``1990`` or ``May 3``."""
    t = text.strip()
    m = re.match(r"^(?:on\s+)?(?:the\s+)?(\d{4})-(\d{1,2})-(\d{1,2})\b", t)
    if m:
        return f"{int(m.group(1)):04d}-{int(m.group(2)):02d}-{int(m.group(3)):02d}"
    m = re.match(
        r"^(?:on\s+|in\s+)?(?:the\s+)?(?:(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?("
        + _DATE_MONTH
        + r")|("
        + _DATE_MONTH
        + r")\.?\s+(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?(?!\d))"
        + r"(?:,?\s+(\d{4}))?\b",
        t,
        _I,
    )
    if m:
        day = int(m.group(1) or m.group(4))
        month = MONTHS[(m.group(2) or m.group(3)).lower()]
        if not 1 <= day <= 31:
            return None
        if m.group(5):
            return f"{int(m.group(5)):04d}-{month:02d}-{day:02d}"
        return f"{_MONTH_NAMES[month - 1]} {day}"
    m = re.match(r"^(?:in\s+)?(" + _DATE_MONTH + r")\.?,?\s+(?:of\s+)?(\d{4})\b", t, _I)
    if m:
        return f"{int(m.group(2)):04d}-{MONTHS[m.group(1).lower()]:02d}"
    m = re.match(r"^(?:in\s+)?((?:19|20)\d{2})\b", t)
    if m:
        return m.group(1)
    found = find_times(t, ref, future=True)
    if found and found[0].start == 0 and found[0].value is not None:
        d = found[0].value
        return f"{_MONTH_NAMES[d.month - 1]} {d.day}"
    return None


_MONTH_NAMES = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip
