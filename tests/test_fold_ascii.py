"""``identity.fold`` strips an ASCII text's punctuation in one ``translate``: the
same key, character for character, as the per-character Unicode category rule
(the definition, below) gives, for ASCII and for any text."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from chronomem import identity


def _model_strip(text: str) -> str:
    return "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)


def _model_fold(text: str) -> str:
    base = unicodedata.normalize("NFKC", text).casefold()
    words = re.sub(r"\s+", " ", _model_strip(base)).strip().split(" ")
    while len(words) > 1 and words[-1] in identity.LEGAL_SUFFIXES:
        words.pop()
    key = " ".join(w for w in words if w)
    return key if key else re.sub(r"\s+", " ", base).strip()


@given(text=st.text(alphabet=st.characters(max_codepoint=127)))
@settings(max_examples=400)
def test_ascii_punctuation_is_stripped_as_the_category_rule_strips_it(text: str) -> None:
    assert identity._strip_punctuation(text) == _model_strip(text)
    assert identity.fold(text) == _model_fold(text)


@given(text=st.text())
@settings(max_examples=200)
def test_any_text_folds_as_the_definition(text: str) -> None:
    assert identity.fold(text) == _model_fold(text)


def test_every_ascii_character() -> None:
    every = "".join(map(chr, range(128)))
    assert identity._strip_punctuation(every) == _model_strip(every)
