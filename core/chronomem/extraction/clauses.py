"""From a message to clauses the rule patterns can read.

Normalisation (typographic apostrophes, casual "im"/"dont", "my wife and I" ->
"we"), sentence and clause splitting, the gates that make a clause no
statement (questions, hypotheses, hedges, sarcasm, story frames, quotes), and
the negation rewrite: "I don't live in X anymore" -> "I live in X" with a
``_Polarity`` saying it ended. Used by ``rules.RuleExtractor``."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .lexicon import (
    words,
)

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
    # sentence starts first: with "I'm" removed first, "Hi! I'm Fatou" would make
    # "Fatou" look like a sentence start
    t = _I_FORMS.sub("", _SENTENCE_START.sub(lambda m: m.group(0)[:-1], text))
    if t != t.lower():
        return False
    # no capitals left: casual typing only if it shows ("i live in leeds", "moved to oslo");
    # "I live in constant frustration" is written with capitals and names no place
    return bool(_LOWER_SIGN.search(text))


_LOWER_SIGN = re.compile(r"(?:^|[.!?]\s+|\n\s*)[a-z]|\bi(?:'m|'ve|'d|'ll|m)?\b")


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
    r"|since\s+then|at\s+the\s+moment)\b)|"
    r",\s+(?=(?:(?:now|currently)\s+)?(?:based|living)\s+in\b)"
)


# A sentence framed as an example, a hypothesis or a request for text is not a statement.
_FRAME = _rx(
    r"^\s*(?:for\s+example|for\s+instance|e\.g\.?|imagine|suppose|supposing|let's\s+say|"
    r"pretend|hypothetically|what\s+if|if|write|translate|in\s+(?:a|my|this|the|our|your)\s+"
    r"(?:story|novel|book|game|film|movie|show|play|dream|scene|script|scenario|roleplay))\b"
)
# "I quit Acme and joined Lumen": the second verb shares the first clause's subject.
_AND_VERB = _rx(
    r",?\s+(?:and|but)\s+(?:then\s+)?(?=(?:just\s+|recently\s+|also\s+)?(?:moved|relocated|joined|"
    r"started|left|quit|live|work|love|like|speak|have|got|adopted|bought)\b)"
)
_FIRST_SUBJECT = _rx(
    r"^\s*(?:(?:so|and|but|also|then|well|oh|yeah|ok|okay|hi|hey|hello|now)[\s,!]+)*"
    r"(?:I|I'm|I've|we|we're|we've)\b"
)
_SUBJECTLESS = _rx(
    r"^\s*(?=(?:just\s+|recently\s+|finally\s+|also\s+|currently\s+)?(?:moved|relocated|"
    r"joined|started|quit|left|got|adopted|bought|turned|live|living|work|working|love|speak|"
    r"accepted|resigned|retired|finished|used\s+to)\b)"
)


# "I'm a photographer, mostly weddings, based in Bath": a subjectless tail that
# describes the speaker of an opening "I'm ..." clause inherits its subject.
_I_AM_START = _rx(r"^\s*(?:(?:so|and|well|oh|hi|hey|hello)[\s,!]+)*I(?:'m|\s+am)\b")
_STATE_TAIL = _rx(r"^\s*(?=(?:(?:now|currently)\s+)?(?:based|living)\s+in\b)")


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
        if _I_AM_START.match(out[0]):
            out[1:] = [_STATE_TAIL.sub("I'm ", c, count=1) for c in out[1:]]
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
    r"can\s+I|could\s+I|should\s+I|do\s+I|how\s+(?:do|can|would)\s+I|"
    r"(?:look|looks|looked|sound|sounds|sounded)\s+like|(?:told|tells|tell)\s+me))\b|'d\b|"
    r"(?-i:\bmay\b)"
)


# A hedge anywhere in the clause ("I like pizza, I guess", "a programmer, sort of").
_HEDGE = _rx(
    r"\b(?:I\s+guess|I\s+suppose|I\s+think|I\s+believe|I\s+reckon|I\s+assume|sort\s+of|"
    r"kind\s+of|or\s+something|or\s+whatever|not\s+sure|I'm\s+not\s+sure|probably|maybe|"
    r"perhaps|apparently|allegedly|supposedly|in\s+theory|technically|I\s+was\s+told|"
    r"(?:was|were)\s+(?:going|gonna|planning|supposed)\s+to|it's\s+complicated|or\s+at\s+least|"
    r"or\s+rather|someday|some\s+day|one\s+day|eventually|at\s+some\s+point)\b"
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
    past: bool = False  # a simple past ("I lived in X"): only an "until" time is its end


def _be(who: str) -> str:
    return "I am" if who.lower() == "i" else f"{who} are"


_NEG_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str], str]] = [
    (_rx(r"\b(I|we)\s+used\s+to\s+"), lambda m: f"{m.group(1)} ", "used_to"),
    # the simple past of a state is a past state: "I lived in Madrid for five years"
    # (not "I've lived in ...", which still holds)
    (
        _rx(
            r"\b(I|we)\s+(?:(?:once|previously|briefly|originally)\s+)?(lived|worked)\s+"
            r"(?=in|at|for)\b"
        ),
        lambda m: f"{m.group(1)} {m.group(2)[:4]} ",
        "past",
    ),
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
            r"\b(I|we)(?:\s+(?:really|just|actually|honestly|absolutely|totally|definitely|"
            r"simply|still))?\s+(?:do\s+not|don't|did\s+not|didn't|never|have\s+not|haven't|"
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


_NEG_HINT = _rx(
    r"used\s+to|lived|worked|stopped|quit|gave\s+up|no\s+longer|\bnot\b|n't|never|cannot|more\b"
)


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
            elif kind == "past":
                pol.ceased = pol.used_to = pol.past = True
            elif kind == "ceased":
                pol.ceased = True
            else:
                pol.negated = True
    if pol.negated and _ANYMORE.search(clause):
        pol.ceased = True
    clause = _ANYMORE.sub("", clause)
    return clause, pol
