"""``Memory.live_prefixes``: which of a caller's subject prefixes hold a live fact,
checked against ``facts()`` (random keys around the edges of code point order,
NUL and backslash, prefixes longer than the indexed head, ended and retracted
facts, past instants, scopes), on every backend."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem.ops import EndOp
from chronomem.schema import SUBJECT_HEAD

from .conftest import ManualClock
from .test_subject_prefix import EDGES

chars = st.one_of(st.sampled_from([*EDGES, "\x00", "\\"]), st.sampled_from("abc"))
keys = st.text(chars, min_size=1, max_size=5)
LONG = "L" * (SUBJECT_HEAD - 2)


def expected(memory: Memory, prefixes: list[str], **at: object) -> list[str]:
    live = [f.subject_key for f in memory.facts(exact=True, **at)]  # type: ignore[arg-type]
    return [p for p in dict.fromkeys(prefixes) if any(k.startswith(p) for k in live)]


def test_live_prefixes_agree_with_facts(memory: Memory, clock: ManualClock) -> None:
    user = memory.scoped(user="u")
    past: list[object] = []

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        written=st.lists(
            st.tuples(keys, st.booleans(), st.sampled_from(["keep", "end", "retract"])), max_size=6
        ),
        prefixes=st.lists(keys, min_size=1, max_size=70),
        long=st.booleans(),
    )
    def run(written: list[tuple[str, bool, str]], prefixes: list[str], long: bool) -> None:
        for key, mine, fate in written:
            where = user if mine else memory
            subject = LONG + key if long else key
            receipt = where.apply([where.assertion(subject, "p", "v", exact=True)])
            clock.advance(seconds=1)
            if fate == "end":
                where.apply([EndOp(subject, "p", None, None, exact=True)])
            elif fate == "retract" and receipt.added:
                where.retract(receipt.added[0])
            clock.advance(seconds=1)
        past.append(clock.advance(seconds=1))
        asked = [LONG + p if long else p for p in prefixes]
        for m in (memory, user):
            assert m.live_prefixes(asked) == expected(m, asked)
            then = past[len(past) // 2]
            assert m.live_prefixes(asked, as_of=then) == expected(m, asked, as_of=then)  # type: ignore[arg-type]

    run()


def test_refuses_a_bare_string(memory: Memory) -> None:
    import pytest

    from chronomem import InvalidType

    with pytest.raises(InvalidType):
        memory.live_prefixes("abc")
    with pytest.raises(InvalidType):
        memory.live_prefixes([""])
    assert memory.live_prefixes([]) == []
