"""``Memory.live_entries``: a page of an adapter's index entries, each kept when the
prefix it stands for holds a live fact — checked against ``facts()`` and a plain
model (random label paths, entries in this scope and an enclosing one, ended and
retracted facts, one arm and merged arms, depth bounds, a key suffix, a past
instant), on every backend."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Cardinality, Memory
from chronomem.ops import AssertOp, EndOp
from chronomem.prefixes import Arm, Entries
from chronomem.timeutil import MIN_US

from .conftest import ManualClock

SEP = "\x01"
paths = st.lists(st.sampled_from(["a", "a-", "b\\", "é"]), min_size=1, max_size=3).map(tuple)


def key(path: tuple[str, ...]) -> str:
    return SEP + "".join(label + SEP for label in path)


def prefix(path: tuple[str, ...]) -> str:
    return "it:" + "".join(label + "." for label in path)


def entry(path: tuple[str, ...]) -> AssertOp:
    """Stands for the facts under the path (its object), keyed by the path."""
    return AssertOp("ix:" + key(path), "@e", prefix(path), MIN_US, None, bounded=True,
                    exact=True, cardinality=Cardinality.ONE, index_text="")  # fmt: skip


def model(memory: Memory, indexed: set[tuple[str, ...]], q: dict[str, Any], **at: Any) -> Any:
    live = [
        f.subject_key for f in memory.facts(exact=True, **at) if f.subject_key.startswith("it:")
    ]
    found = sorted(
        key(p)
        for p in indexed
        if any(k.startswith(prefix(p)) for k in live)
        and q["low"] <= len(p) + 1
        and (q["suffix"] is None or key(p).endswith(key(q["suffix"])))
    )
    return found[q["offset"] : q["offset"] + q["limit"]]


def test_a_page_agrees_with_facts(memory: Memory, clock: ManualClock) -> None:
    user = memory.scoped(user="u")
    indexed: set[tuple[str, ...]] = set()

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        written=st.lists(
            st.tuples(paths, st.booleans(), st.sampled_from(["keep", "end", "retract"])), max_size=6
        ),
        q=st.fixed_dictionaries(
            {
                "low": st.integers(1, 3),
                "suffix": st.none() | paths,
                "limit": st.integers(0, 5),
                "offset": st.integers(0, 3),
            }
        ),
    )
    def run(written: list[tuple[tuple[str, ...], bool, str]], q: dict[str, Any]) -> None:
        for path, mine, fate in written:
            where = user if mine else memory
            subject = prefix(path) + ".k"
            where.apply([entry(path)])
            receipt = where.apply([where.assertion(subject, "p", "v", exact=True)])
            indexed.add(path)
            clock.advance(seconds=1)
            if fate == "end":
                where.apply([EndOp(subject, "p", None, None, exact=True)])
            elif fate == "retract" and receipt.added:
                where.retract(receipt.added[0])
            clock.advance(seconds=1)
        then = clock.advance(seconds=1)
        arm = Arm("ix:", "@e", "", q["low"], None, key(q["suffix"]) if q["suffix"] else None)
        entries = Entries((arm,), SEP, ".")
        page = {"limit": q["limit"], "offset": q["offset"]}
        # the user's store sees both scopes' entries (once each) and facts
        assert user.live_entries(entries, **page) == model(user, indexed, q)
        assert user.live_entries(entries, **page, as_of=then) == model(user, indexed, q, as_of=then)
        # two arms merged: depth 1 and 2 apart, then paged together
        if q["suffix"] is None:
            arms = (Arm("ix:", "@e", "", 2, 2), Arm("ix:", "@e", "", 3, None))
            merged = user.live_entries(Entries(arms, SEP, "."), **page)
            assert merged == model(user, indexed, {**q, "low": 2})

    run()
