"""The salience gate: drop acknowledgements and small talk before any extraction.

"ok thanks", "lol", "sounds good", "hi" carry nothing to remember. The gate is
a set lookup over the turn's words, run before any regex or model call; turns
it drops are counted as ``skipped`` on the receipt (they are still stored as
episodes)."""

from __future__ import annotations

import re

from .base import Turn
from .lexicon import words

# A turn made only of these words (at most _MAX_WORDS of them) is small talk.
SMALL_TALK_WORDS = words(
    """ok okay okey okie k kk kay thanks thank thankyou thanx thx ty tysm tyvm you u much so
    very lol lmao lmfao rofl haha hahaha hahahaha hehe heh hah hmm hm hmmm mm mmm mhm uh uhh um
    umm oh ohh ah ahh aha wow cool nice great good awesome amazing perfect sure yes yeah yep yup
    yea ya no nope nah right alright allright fine got it gotcha sounds sound noted understood
    hi hello hey heya hiya yo sup morning evening afternoon night gm gn bye goodbye cya later see
    welcome np problem worries cheers agreed exactly indeed totally absolutely definitely true
    correct makes sense same please pls plz and all for the help that's thats it's its this is
    a lot lots really appreciate appreciated love brilliant excellent wonderful neat sweet ok-ay
    done will do thumbs up good-bye bye-bye ttyl brb omg wtf idk dunno sorry oops whoops yikes
    meh welp well anyway anyways true fair enough i see makes sense we me"""
)
_MAX_WORDS = 8
_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")


def is_small_talk(text: str) -> bool:
    """True for acknowledgements and small talk ("ok thanks", "lol", "hi!", "👍")."""
    words = [w.lower() for w in _WORD.findall(text)]
    if not words:
        return True  # emoji, punctuation, whitespace only
    if len(words) > _MAX_WORDS:
        return False
    return all(w in SMALL_TALK_WORDS for w in words)


def is_salient(turn: Turn, roles: frozenset[str] = frozenset({"user"})) -> bool:
    """Whether a turn is worth extracting from: a speaker role the extractor
    reads (default: user turns) and not small talk."""
    return turn.role in roles and not is_small_talk(turn.text)
