"""The mirror's entity codes: the codes of the names under a subject prefix (the
mask of a prefix-bounded search) are exactly the names that start with it."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from chronomem.retrieval import cache
from chronomem.retrieval.cache import Codes

# few letters, so that prefixes are shared; the largest code point, whose run
# continues past ``prefix + chr(0x10FFFF)``
ALPHABET = st.sampled_from(["a", "b", "ab", "\U0010ffff", "é", "/"])
NAME = st.lists(ALPHABET, max_size=5).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(NAME, max_size=60),
    st.lists(NAME, max_size=60),
    NAME,
    st.integers(min_value=0, max_value=8),
)
def test_with_prefix_is_every_name_that_starts_with_it(first, later, prefix, tail) -> None:
    old = cache.TAIL
    cache.TAIL = tail  # small: the sorted part is rebuilt, and a tail scanned, within one test
    try:
        codes = Codes()
        for name in first:
            codes.code(name)
        codes.with_prefix(prefix)  # sorts what is there
        for name in later:
            codes.code(name)
        got = sorted(int(c) for c in codes.with_prefix(prefix))
    finally:
        cache.TAIL = old
    want = sorted(c for c, name in enumerate(codes.names) if name.startswith(prefix))
    assert got == want
