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
employers look like names, languages are languages, pets are pets)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from ..identity import fold
from .base import DEFAULT_SPEAKER, Extracted, ExtractionResult, Op, Turn
from .lexicon import (
    CHILD_KINDS,
    CONNECTORS,
    FREE_REJECT_FIRST,
    GENERIC_NOUNS,
    HAS_KINDS,
    JOB_HEADS,
    LANGUAGES,
    MONTH_WORDS,
    NAME_STOP,
    NAMED_KINDS,
    NATIONALITIES,
    PLACES,
    SUPPORT_WORDS,
    UI_WORDS,
    words,
)
from .salience import is_small_talk
from .timeexpr import MONTHS, TimeMatch, find_times, is_future, strip_times

_I = re.IGNORECASE


def _rx(pattern: str, flags: int = _I) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# -- text normalisation ------------------------------------------------------------------

_APOS = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'", "\u201c": '"',
                       "\u201d": '"', "\u00a0": " "})  # fmt: skip
_CASUAL_WORDS = {
    "im": "I'm", "ive": "I've", "i": "I", "dont": "don't", "didnt": "didn't",
    "havent": "haven't", "cant": "can't", "doesnt": "doesn't",
}  # fmt: skip
_CASUAL = _rx(r"\b(?:" + "|".join(_CASUAL_WORDS) + r")\b")
_I_FORMS = re.compile(r"\bI(?:'m|'ve|'d|'ll)?\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n\s*)([A-Z])")


def _lowercase_mode(text: str) -> bool:
    """Casual all-lowercase typing: capitals cannot tell names from nouns."""
    t = _SENTENCE_START.sub(lambda m: m.group(0)[:-1], _I_FORMS.sub("", text))
    return t == t.lower()


_WE = _rx(
    r"\b(?:me\s+and\s+my\s+[\w-]+|my\s+[\w-]+\s+and\s+(?:I|me))\s+"
    r"(?=(?:are|were|have|'ve|live|lived|moved|just|recently|both)\b)"
)


def _normalise(text: str) -> str:
    # .get: a case-insensitive match can be a character whose .lower() is no key ("İ", "ſ")
    t = _CASUAL.sub(
        lambda m: _CASUAL_WORDS.get(m.group(0).lower(), m.group(0)), text.translate(_APOS)
    )
    t = _WE.sub("we ", t)  # "my wife and I live in ..." -> "we live in ..."
    return re.sub(r"[ \t]+", " ", t).strip()


# -- sentences and clauses -----------------------------------------------------------------

_SENT = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_ABBREV = words(
    "st mr mrs ms dr jr sr inc co corp ltd mt ave no vs etc e.g i.e approx dept prof ft"
)
_CLAUSE = _rx(
    r"\s*;\s*|\s+[-\u2013\u2014]+\s+|"
    r",?\s+(?:and|but|so|although|though|because|cause|'cause|cos|since|while|whereas|plus|yet)"
    r"\s+(?=(?:I|I'm|I've|I'd|I'll|my|we|we're|we've|now\s+I)\b)|"
    r",\s+(?=(?:I|I'm|I've|I'd|I'll|my|we|we're|we've|but|and|so|what|where|when|why|how|who"
    r"|which|do|does|did|are|is|can|could|would|will|should|right|ok|okay|though|btw|anyway"
    r"|because|now|also|any|thanks|thank|these\s+days|nowadays|currently|lately|recently"
    r"|since\s+then|at\s+the\s+moment)\b)"
)


# A sentence framed as an example, a hypothesis or a request for text is not a statement.
_FRAME = _rx(
    r"^\s*(?:for\s+example|for\s+instance|e\.g\.?|imagine|suppose|supposing|let's\s+say|"
    r"pretend|hypothetically|what\s+if|if|write|translate|in\s+(?:a|my|this|the|our|your)\s+"
    r"(?:story|novel|book|game|film|movie|show|play|dream|scene|script|scenario|roleplay))\b"
)
# "I quit Acme and joined Lumen": the second verb shares the first clause's subject.
_AND_VERB = _rx(
    r",?\s+and\s+(?:then\s+)?(?=(?:just\s+|recently\s+|also\s+)?(?:moved|relocated|joined|"
    r"started|left|quit|live|work|love|like|speak|have|got|adopted|bought)\b)"
)
_FIRST_SUBJECT = _rx(
    r"^\s*(?:(?:so|and|but|also|then|well|oh|yeah|ok|okay|hi|hey|hello|now)[\s,!]+)*"
    r"(?:I|I'm|I've|we|we're|we've)\b"
)
_SUBJECTLESS = _rx(
    r"^\s*(?=(?:just\s+|recently\s+|finally\s+|also\s+)?(?:moved|relocated|joined|started|"
    r"quit|left|got|adopted|bought|turned|live|work|love|speak|accepted|resigned|retired|"
    r"finished|used\s+to)\b)"
)


def _clauses(sentence: str) -> list[str]:
    out: list[str] = []
    for clause in _CLAUSE.split(sentence):
        if not clause or not clause.strip():
            continue
        parts = _AND_VERB.split(clause)
        if len(parts) > 1 and _FIRST_SUBJECT.match(parts[0]):
            out.append(parts[0])
            out += [_SUBJECTLESS.sub("I ", p, count=1) for p in parts[1:]]
        else:
            out.append(clause)
    if out:
        out[0] = _SUBJECTLESS.sub("I ", out[0], count=1)  # "Just moved to Berlin!"
    return out


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for piece in _SENT.split(text):
        if not piece:
            continue
        if out and out[-1].endswith("."):
            last = out[-1].rsplit(None, 1)[-1].rstrip(".").lower()
            if last in _ABBREV or (len(last) == 1 and last.isalpha()):
                out[-1] += " " + piece
                continue
        out.append(piece)
    return out


_QUESTION_START = _rx(
    r"^\s*(?:do|does|did|are|is|am|can|could|would|will|should|shall|have|has|what|where|when"
    r"|why|how|who|which|whose|whom|isn't|aren't|don't|doesn't|didn't|won't|wouldn't"
    r"|shouldn't|can't|may|might)\b"
)
_HYPOTHETICAL = re.compile(
    r"(?i:\b(?:if|whether|would|could|might|should|wish|wished|imagine|imagining|suppose|"
    r"supposing|pretend|pretending|hypothetically|assuming|assume|unless|in\s+case|what\s+if|"
    r"maybe|perhaps|probably|possibly|thinking\s+(?:about|of)|considering|dream(?:ing|t|ed)?|"
    r"wonder(?:ing|ed)?|not\s+sure|let's\s+say|say|once|want\s+to|wanna|wants\s+to|hope|hoping|"
    r"trying\s+to|try\s+to|tried\s+to|need\s+to|needs\s+to|have\s+to|has\s+to|had\s+to|"
    r"supposed\s+to|thinks|thought|believes|believed|said|says|claims|claimed|wrote|writes|"
    r"translate|translation|example|e\.g|test|testing|roleplay|role-play|character|pretend|"
    r"fictional|story|fake|sentence|phrase|quote|means|meaning|instead\s+of|rather\s+than|"
    r"ask(?:ed|ing)?\s+(?:me|you|if|whether)|someday|one\s+day|eventually|"
    r"can\s+I|could\s+I|should\s+I|do\s+I|how\s+(?:do|can|would)\s+I))\b|'d\b|(?-i:\bmay\b)"
)


# A hedge anywhere in the clause ("I like pizza, I guess", "a programmer, sort of").
_HEDGE = _rx(
    r"\b(?:I\s+guess|I\s+suppose|I\s+think|I\s+believe|I\s+reckon|I\s+assume|sort\s+of|"
    r"kind\s+of|or\s+something|or\s+whatever|not\s+sure|I'm\s+not\s+sure|probably|maybe|"
    r"perhaps|apparently|allegedly|supposedly|in\s+theory|technically|I\s+was\s+told|"
    r"(?:was|were)\s+(?:going|gonna|planning|supposed)\s+to|it's\s+complicated|or\s+at\s+least|"
    r"or\s+rather)\b"
)
# Sarcasm openers: "Oh sure, I just love waiting", "Yeah right, I'm the Queen of England".
_SARCASM = _rx(
    r"^\s*(?:oh\s+)?(?:sure|great|fantastic|wonderful|brilliant|perfect|lovely|yeah\s+right|"
    r"right|yeah,?\s+sure|as\s+if)\s*[,!.]"
)


def _is_question(clause: str) -> bool:
    return clause.rstrip().endswith("?") or bool(_QUESTION_START.match(clause))


def _quoted(clause: str, pos: int) -> bool:
    return clause.count('"', 0, pos) % 2 == 1


# -- negation ------------------------------------------------------------------------------


@dataclass
class _Polarity:
    negated: bool = False  # "I don't live in X", "I never liked X"
    ceased: bool = False  # "no longer", "anymore", "used to", "stopped": it was true, isn't now
    used_to: bool = False  # the clause's times describe the past state, not its end


def _be(who: str) -> str:
    return "I am" if who.lower() == "i" else f"{who} are"


_NEG_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str], str]] = [
    (_rx(r"\b(I|we)\s+used\s+to\s+"), lambda m: f"{m.group(1)} ", "used_to"),
    (
        _rx(r"\b(I|we)(?:\s+have|'ve)?\s+(?:stopped|quit|gave\s+up(?:\s+on)?)\s+(?=\w+ing\b)"),
        lambda m: f"{_be(m.group(1))} ",
        "ceased",
    ),
    (
        _rx(r"\b(I|we)((?:'m|'re|'ve|\s+am|\s+are|\s+have)?)\s+no\s+longer\s+"),
        lambda m: f"{m.group(1)}{m.group(2)} ",
        "ceased",
    ),
    (
        _rx(
            r"\b(I|we)\s+(?:do\s+not|don't|did\s+not|didn't|never|have\s+not|haven't|"
            r"can't(?!\s+(?:stand|bear|deal|get\s+enough))|cannot(?!\s+(?:stand|bear|get\s+enough))|"
            r"can\s+not)\s+"
        ),
        lambda m: f"{m.group(1)} ",
        "negated",
    ),
    (
        _rx(r"\b(I|we)('m|'re|'ve|\s+am|\s+are|\s+have)\s+(?:not|never)\s+"),
        lambda m: f"{m.group(1)}{m.group(2)} ",
        "negated",
    ),
]
_ANYMORE = _rx(r"\s*\b(?:any\s?more|no\s+more)\b")


_NEG_HINT = _rx(r"used\s+to|stopped|quit|gave\s+up|no\s+longer|\bnot\b|n't|never|cannot|more\b")


def _rewrite_negation(clause: str) -> tuple[str, _Polarity]:
    pol = _Polarity()
    if not _NEG_HINT.search(clause):
        return clause, pol
    for pattern, repl, kind in _NEG_RULES:
        new = pattern.sub(repl, clause, count=1)
        if new != clause:
            clause = new
            if kind == "used_to":
                pol.ceased = pol.used_to = True
            elif kind == "ceased":
                pol.ceased = True
            else:
                pol.negated = True
    if pol.negated and _ANYMORE.search(clause):
        pol.ceased = True
    clause = _ANYMORE.sub("", clause)
    return clause, pol


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
    r"\s*[,(:!?]|\s+[-\u2013\u2014]\s|\s+(?:[Ww]ith|for|as|because|since|where|which|who|near|"
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
    r"yay|oops|argh|phew|hmm+|welp|yikes|ha(?:ha)*|heh|omg|smh"
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
    r":\)|:-\)|:D|<3))+$",
    _I,
)
_LEAD_FREE = _rx(r"^(?:(?:a|an|my|some|our|all|any|both)\s+)+")
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
    r"with\s+(?:my|our|a|some|two|three)\s+(?:[\w-]+\s+){0,3}?in\s+)"
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


def _name(obj: str, lower: bool) -> str | None:
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
        if item.lower() in MONTH_WORDS or item.lower()[:-1] in MONTH_WORDS:
            return []  # "allergic to Mondays"
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
    r"|grey|gray|golden|red|blue|tabby|ginger|electric|used|vintage|[\w-]*year-old|[\w-]*month-old"
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
        out = []
        for o in _free(m.group("obj")):
            if o.lower() in _TASTE_STOP:
                continue  # "I love my job": no taste to remember
            if re.fullmatch(r"[A-Z][a-z]+", o) and ctx.seen(_NAME_TALK):
                continue  # "My name is Lisa but I prefer Liz"
            out.append(_Hit(pred, o, "assert", 0.85))
        return out

    return handle


def _speaks(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not _we_ok(m):
        return []
    return [_Hit("speaks", lang, "assert", 0.9) for lang in _languages(m.group("obj"))]


def _allergy(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not _we_ok(m):
        return []
    return [_Hit("allergic_to", o, "assert", 0.9) for o in _free(m.group("obj"), max_words=4)]


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


def _plans(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
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
        if raw is None or not raw.strip(" .!,"):  # "I got divorced ." (a time was cut out)
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
    n = int(m.group("obj"))
    return [_Hit("age", str(n), "assert", 0.85, timed=False)] if 1 <= n <= 120 else []


# -- coverage added in round two: titles, contacts, projects, named family, "now I'm in" ----


_TITLE_NOT_YET = words("aspiring wannabe would-be future former ex ex- failed trainee-to-be")


def _job_title(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I'm a (freelance) photographer": the head noun must be a job."""
    words = m.group("title").lower().split()
    if words and words[0] in _TITLE_NOT_YET:
        return []  # "an aspiring writer", "a former nurse"
    while words and words[0] in _TITLE_STOP:
        words = words[1:]  # "the new office manager" -> "office manager"
    if not words or words[-1] not in JOB_HEADS or len(words) > 4:
        return []
    if any(w in FREE_REJECT_FIRST or w in UI_WORDS or w in _TITLE_STOP for w in words):
        return []
    return [_Hit("job_title", " ".join(words), "assert", 0.85)]


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
        raw = m.group("obj").strip()
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
            r"(?:\s+with\s+(?:my|our)(?:\s+[\w-]+){1,3}?)?\s+in" + _OBJ
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
        _org_hit(conf=0.75),
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
            r"(?P<job>job|position|role|gig)(?:\s+(?:at|with)" + _OBJ + r")?[\s.!]*$"
        ),
        _org_hit("end"),
        ("quit", "left", "leav", "lost"),
    ),
    (
        _rx(
            HEAD + r"\s+(?:got\s+|was\s+|been\s+)?(?:fired|laid\s+off|let\s+go|sacked|retired)"
            r"(?:\s+(?:from|by)" + _OBJ + r")?[\s.!]*$"
        ),
        _org_hit("end", 0.8),
        ("fired", "laid", "let go", "sacked", "retired"),
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
    # allergic_to
    (
        _rx(
            HEAD + r"\s+(?:(?:very|severely|highly|deathly|mildly|slightly|extremely|super|"
            r"really)\s+)?allergic\s+to" + _OBJ
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
            r"\b(?:my|our)\s+" + _KIND + r"(?:\s*,?\s+(?P<name>[A-Z][a-z]+),?)?\s+(?:just\s+)?"
            r"(?:died|passed\s+away|passed|ran\s+away|was\s+put\s+down|is\s+gone)"
        ),
        _has_gone,
        ("died", "passed", "ran away", "put down", "gone"),
    ),
    (
        _rx(
            HEAD
            + r"\s+(?:had\s+to\s+)?(?:sold|sell|gave\s+away|give\s+away|rehomed|rehome|gave\s+up"
            r"|lost)\s+(?:my|our)\s+" + _KIND + r"(?:\s+(?P<name>[A-Z][a-z]+))?"
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
            r"\b(?P<who>I)(?:'m|\s+am|'ve\s+been|\s+have\s+been)(?:\s+(?:now|currently|also|"
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
            + r")(?:\s+(?:citizen|national))?[\s.!]*$"
        ),
        _nationality,
        ("i'm", "i am"),
    ),
    (_rx(r"\bI(?:'m|\s+am)\s+(?P<obj>\d{1,3})(?:\s+y/?o)?[\s.!]*$"), _age, ("i'm", "i am")),
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
            r"telephone(?:\s+number)?|whatsapp)(?:\s+is|'s|:|\s+(?:has\s+)?changed[,;:]?\s+"
            r"(?:it's|it\s+is)(?:\s+now)?)?|\b(?:reach|call|text|ring|contact)"
            r"\s+me\s+(?:at|on))\s+" + _PHONE
        ),
        _phone,
        ("phone", "number", "cell", "mobile", "whatsapp", " me at", " me on"),
    ),
    (
        _rx(
            r"\b(?P<who>I)(?:(?:'m|\s+am)\s+(?:turning|going\s+to\s+turn|gonna\s+turn)|"
            r"'ll\s+turn|\s+will\s+turn|\s+turn)\s+(?P<obj>\d{1,3})\b(?P<rest>.*)"
        ),
        _turning,
        ("turn",),
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
    r"(?:,?\s+(?i:nice|pleased|good|great|glad)\s+to\s+meet\s+you)?[\s.!]*$"
)
_HERE_NAME = re.compile(
    r"^\s*(?i:hi|hello|hey|hiya|heya)\b[\s,!.]*(?P<obj>[A-Z][a-z][\w'-]*)\s+here[\s.!]*$"
)
_FIRST_PERSON = _rx(r"\b(?:I|I'm|I've|me|my|we|we're|we've|mine|our)\b")


def _gate_ok(clause: str, start: int) -> bool:
    """The text before a match makes it a hypothesis, report or quote?"""
    return not _HYPOTHETICAL.search(clause[:start]) and not _quoted(clause, start)


# -- the extractor -------------------------------------------------------------------------


# Statements about oneself are short; a longer run without punctuation is a paste or a log.
_MAX_CLAUSE = 400

_INTENT = {"lives_in": ("move to", "move out of"), "works_at": ("work at", "leave")}


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
        g = _GREETING_NAME.match(sentence) or _HERE_NAME.match(sentence)
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
        return hits

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
        for h in hits:
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
            if h.timed and usable and not pol.used_to:
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
