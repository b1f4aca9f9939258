"""Point reads (issue #19): ``get`` and a ``facts()`` read of a subject or a few
subjects are one prepared statement that joins the facts' sources
(``reads.facts_query``, ``chronomem.prepared``); a wide read (here: the same read
with a limit) takes the sources from a second statement. Both must give the same
facts, sources in the same order, with no version repeated, whatever the text
(NUL, backslash, ``%``/``_``: ``SafeText`` on PostgreSQL) and on each side of the
8-value threshold where a list stops binding value by value."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chronomem import Fact, Memory, reads
from chronomem.model import ALL_STATES

from .conftest import ManualClock

text = st.text(st.sampled_from("ab%_\\\x00é👋 "), min_size=1, max_size=6).filter(str.strip)
counter = itertools.count()

# per subject: (object, number of source episodes, what happens to it next)
value = st.tuples(text, st.integers(0, 3), st.sampled_from(["keep", "end", "correct", "retract"]))
world = st.lists(
    st.tuples(text, st.lists(value, min_size=1, max_size=3)),
    min_size=1,
    max_size=11,
    unique_by=lambda sv: sv[0],
)


def _load(
    m: Memory, clock: ManualClock, spec: list[tuple[str, list[tuple[str, int, str]]]]
) -> None:
    for subject, values in spec:
        for obj, n_sources, then in values:
            eps = [m.add_episode(f"{subject} {obj} {i}") for i in range(n_sources)]
            clock.advance(seconds=1)
            fid = m.remember(subject, "likes", obj, source=eps).fact_ids[0]
            clock.advance(seconds=1)
            if then == "end":
                m.end(subject, "likes", obj)
            elif then == "correct":
                m.correct(fid, obj + "!")
            elif then == "retract":
                m.retract(fid)
            clock.advance(seconds=1)


def _by_version(facts: list[Fact]) -> dict[str, Fact]:
    out = {f.version_id: f for f in facts}
    assert len(out) == len(facts), "a version came back twice"
    return out


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=world)
@example(  # past the inline threshold, with sources, ended, corrected and retracted facts
    spec=[
        (
            f"s{i}\x00\\%",
            [("o", i % 4, ("keep", "end", "correct", "retract")[i % 4]), ("p", 2, "keep")],
        )
        for i in range(10)
    ]
)
def test_point_reads_match_wide_reads(
    memory: Memory, clock: ManualClock, spec: list[tuple[str, list[tuple[str, int, str]]]]
) -> None:
    m = memory.scoped(tenant=f"t{next(counter)}")
    _load(m, clock, spec)
    keys = [f.subject_key for f in m.facts(subject_prefix="", states=ALL_STATES)]
    keys = list(dict.fromkeys(keys))
    assert keys
    everything: dict[str, Fact] = {}
    for key in keys:
        point = m.facts(subject=key, exact=True, states=ALL_STATES)
        wide = m.facts(subject=key, exact=True, states=ALL_STATES, limit=10**6)
        assert point == wide
        everything.update(_by_version(point))
        assert all(f.source_episode_ids == tuple(e.id for e in m.why(f.id).episodes) for f in point)
    # a list of subjects, inline (up to 8) or expanding (more), reads what the
    # single-subject reads did
    for n in {1, min(len(keys), reads.INLINE), len(keys)}:
        some = keys[:n]
        many = _by_version(m.facts(subjects=some, exact=True, states=ALL_STATES))
        assert many == {v: f for v, f in everything.items() if f.subject_key in some}
    # get: by fact id, by any version id, by the Fact; every version, once
    for fact in everything.values():
        versions = m.get(fact.id)
        assert versions == m.get(fact.version_id) == m.get(fact)
        assert fact.version_id in _by_version(versions)
        assert {f.id for f in versions} == {fact.id}
        assert all(f.source_episode_ids == fact.source_episode_ids for f in versions)
    assert m.get("no-such-fact") == []
