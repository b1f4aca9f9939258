"""``querytime._time_matches`` looks for the time patterns one by one only when
their alternation (``_ANY``) matches the query somewhere: the same matches as
running every pattern over every query (the definition below), for queries naming
times, near-misses and any text."""

from __future__ import annotations

import unicodedata
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chronomem.retrieval import querytime

WORDS = [
    "7", "07", "31st", "2023", "1999", "3000", "12", "of", "in", "last", "past", "this", "on",
    "previous", "May", "may", "MAY.", "sept", "Jul", "two", "a", "few", "days", "weeks", "month",
    "year", "weekend", "ago", "yesterday", "Today", "tonight", "morning", "Saturday", "saturdays",
    "evenings", "since", "mid", "early", "quiet", "gallery", "İn", "ın", "ſince", "２０２３", "٢٠٢٣",
    ",", ".", "-", "/", ":", "2023.5",
]  # fmt: skip
queries = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=8).flatmap(
        lambda ws: st.sampled_from([" ", "  ", ", ", "-", ""]).map(lambda sep: sep.join(ws))
    ),
    st.text(max_size=40),
    st.text(alphabet="0123456789 ,.-/:ofmayjun", max_size=30),
)


def reference(query: str) -> tuple[tuple[str, int, int, dict[str, Any]], ...]:
    text = unicodedata.normalize("NFKC", query)
    return tuple(
        (kind, m.start(), m.end(), m.groupdict())
        for kind, rx in querytime._COMPILED
        for m in rx.finditer(text)
    )


@given(query=queries)
@settings(max_examples=1500)
def test_time_matches_are_every_patterns_matches(query: str) -> None:
    assert querytime._time_matches.__wrapped__(query) == reference(query)


def test_a_time_phrase_is_found_and_plain_words_are_not() -> None:
    assert querytime._time_matches.__wrapped__("quiet gallery") == ()
    for q in ("in May 2023", "two weeks ago", "last Saturday", "yesterday", "7 May", "2021"):
        found = querytime._time_matches.__wrapped__(q)
        assert found and found == reference(q)
