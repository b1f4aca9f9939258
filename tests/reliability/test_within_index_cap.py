"""Issue #31, item 9: the within-prefix search reads an item's indexed text only
up to the text indexes' cap (``INDEX_MAX_CHARS``): one huge item costs a namespace
search no more than that (counted: characters tokenised, not seconds), and a word
past the cap is not found there, as it is found nowhere else. Both backends."""

from __future__ import annotations

import pytest

from chronomem import Memory
from chronomem.retrieval import within
from chronomem.schema import INDEX_MAX_CHARS


def test_a_huge_item_is_read_only_up_to_the_index_cap(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    filler = "lorem ipsum dolor " * (2 * INDEX_MAX_CHARS // 18)
    huge = "early marker " + filler + " zanzibar"  # "zanzibar" lies past the cap
    assert len(huge) > 2 * INDEX_MAX_CHARS and huge.index("zanzibar") > INDEX_MAX_CHARS
    memory.apply([memory.assertion("doc:big", "body", "big", index_text=huge, exact=True)])
    memory.apply([memory.assertion("doc:small", "body", "small", exact=True)])
    memory.remember("elsewhere", "mentions", "zanzibar")

    seen: list[int] = []
    real = within.words

    def counting(text: str) -> list[str]:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(within, "words", counting)
    within._terms.cache_clear()  # texts are tokenised once per process: count this search's
    memory.search("zanzibar", k=5, subject_prefix="doc:")
    assert seen, "the search ran within the prefix"
    assert max(seen) <= INDEX_MAX_CHARS  # no text read past the cap
    assert sum(seen) <= INDEX_MAX_CHARS + 1000


def test_a_word_past_the_cap_is_not_found_within_a_prefix() -> None:
    filler = "lorem ipsum dolor " * (INDEX_MAX_CHARS // 18 + 10)
    rows = [
        {"id": "a", "content_hash": "a", "index_text": "early " + filler + " zanzibar"},
        {"id": "b", "content_hash": "b", "index_text": "a short note on zanzibar"},
    ]
    assert [i for i, _ in within.lexical(rows, ["zanzibar"], 5)] == ["b"]
    assert [i for i, _ in within.lexical(rows, ["early"], 5)] == ["a"]
