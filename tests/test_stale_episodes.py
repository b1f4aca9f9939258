"""Issue #28: an episode whose facts have changed is stale at the search's instant,
labelled as past, and never outranks the live fact that replaced its fact."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem.render import PAST_MARKERS, said
from tests.conftest import utc

D0 = utc(2026, 1, 1)


def day(n: int) -> datetime:
    return D0 + timedelta(days=n)


def paris_berlin(m: Memory) -> None:
    m.add("I live in Paris.", occurred_at=day(0))
    m.add("The flat in Paris has a lovely balcony.", occurred_at=day(3))
    m.add("I work at Acme.", occurred_at=day(1))
    m.add("I moved from Paris to Berlin last week.", occurred_at=day(40))
    m.add("I left Acme and joined Globex.", occurred_at=day(41))


def marked(text: str) -> bool:
    return any(marker in text for marker in PAST_MARKERS)


def test_the_present_outranks_the_past(memory: Memory) -> None:
    paris_berlin(memory)
    hits = memory.search("Where do I live?", include_episodes=True, valid_at=day(50))
    assert hits[0].fact is not None and hits[0].fact.object == "Berlin"
    (paris,) = [h for h in hits if h.episode is not None and h.episode.text == "I live in Paris."]
    assert paris.episode_status == "stale"
    assert [f.object for f in paris.superseded_by] == ["Berlin"]
    assert paris.past_label == "since superseded: user lives in Berlin"
    assert paris.explain["staleness"]["facts"][0]["state"] == "ended"
    assert said(paris.episode, paris.past_label).startswith(
        "[2026-01-01, since superseded: user lives in Berlin] user: I live in Paris."
    )
    jobs = memory.search("Where do I work?", include_episodes=True, valid_at=day(50))
    assert jobs[0].fact is not None and jobs[0].fact.object == "Globex"
    acme = [h for h in jobs if h.episode is not None and h.episode.text == "I work at Acme."]
    assert acme and acme[0].episode_status == "stale" and marked(acme[0].past_label or "")
    block = memory.recall("Where do I live?", include_episodes=True, valid_at=day(50))
    assert "[2026-01-01, since superseded: user lives in Berlin] user: I live in Paris." in block
    assert "since" not in block.split("I moved from Paris")[0].split("\n")[-1]


def test_before_the_change_the_old_episode_is_current(memory: Memory) -> None:
    paris_berlin(memory)
    hits = memory.search("Where do I live?", include_episodes=True, valid_at=day(20))
    paris = [h for h in hits if h.episode is not None and h.episode.text == "I live in Paris."]
    assert paris and paris[0].episode_status == "current" and paris[0].past_label is None
    block = memory.recall("Where do I live?", include_episodes=True, valid_at=day(20))
    assert not marked(block)
    # and as believed before Berlin was recorded, at today's valid time
    first = memory.episodes()[0].recorded_at
    early = memory.search(
        "Where do I live?", include_episodes=True, valid_at=day(50), known_at=first
    )
    assert all(h.episode_status != "stale" for h in early)


def test_questions_about_the_past_find_the_past(memory: Memory) -> None:
    paris_berlin(memory)
    for q, old in (
        ("Where did I live before Berlin?", "I live in Paris."),
        ("Where did I work before Globex?", "I work at Acme."),
    ):
        hits = memory.search(q, include_episodes=True, k=5, valid_at=day(50))
        found = [h for h in hits if h.episode is not None and h.episode.text == old]
        assert found and found[0].episode_status == "stale", q
        ended = memory.search(q, states=["live", "ended"], k=5, valid_at=day(50))
        assert any(h.fact is not None and h.fact.state.value == "ended" for h in ended), q


def test_retracted_and_ended_facts_label_their_episodes(memory: Memory) -> None:
    e1 = memory.add_episode("Bob likes jazz records.", role="user", occurred_at=day(0))
    e2 = memory.add_episode("Bob owns a red bicycle.", role="user", occurred_at=day(0))
    memory.remember("Bob", "likes", "jazz", valid_from=day(0), source=e1.id)
    r = memory.remember("Bob", "owns", "red bicycle", valid_from=day(0), source=e2.id)
    memory.retract(r.fact_ids[0])
    memory.end("Bob", "likes", at=day(5))
    found = memory.search("Bob jazz bicycle", include_episodes=True, valid_at=day(50))
    hits = {h.episode.id: h for h in found if h.episode is not None}
    assert hits[e1.id].past_label == "since ended"
    assert hits[e2.id].past_label == "since retracted"


def test_staleness_costs_two_statements_whatever_the_hits(memory: Memory) -> None:
    """Bounded: the status of every kept episode comes from one statement, the
    successors from one more, however many episodes were found."""
    from sqlalchemy import event

    for i in range(12):
        memory.add(f"I live in Town{i}.", occurred_at=day(i))
    seen: list[str] = []

    def count(conn: object, cursor: object, statement: str, *args: object) -> None:
        # (not the hits' own rows, which bring their sources along: search._SOURCE)
        if "cm_sources" in statement and "_source_episode_id" not in statement:
            seen.append(statement)

    engine = memory.backend.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        hits = memory.search("where do I live town", include_episodes=True, k=20, valid_at=day(50))
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert sum(h.episode_status == "stale" for h in hits) >= 5
    assert len([s for s in seen if "JOIN" in s]) == 1, seen


# -- model-based: random histories of changes ------------------------------------------

WORDS = ["amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo"]
PREDICATES = ["lives_in", "works_at", "married_to"]
_example = itertools.count()

slot_history = st.lists(st.integers(min_value=1, max_value=20), min_size=1, max_size=4)
history = st.lists(
    st.tuples(st.sampled_from(PREDICATES), slot_history, st.integers(1, 2)),
    min_size=1,
    max_size=3,
    unique_by=lambda t: t[0],
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    history=history,
    probes=st.lists(st.integers(0, 90), min_size=1, max_size=4),
    about_past=st.booleans(),
)
def test_a_stale_episode_never_outranks_its_successor(
    memory: Memory, history: list[tuple[str, list[int], int]], probes: list[int], about_past: bool
) -> None:
    """At any (valid, known) instant: each message's status is the model's (never
    stale before its value changed), a stale one is marked as past and ranks below
    the live value that replaced it; asked about the past ("... before?"), the
    messages of the value the live one replaced are found too."""
    n = next(_example)
    subject = f"q{n}z"
    # model: per slot, its values' (valid start, episode ids, recorded instant), in order
    model: dict[str, list[tuple[int, str, list[str], datetime]]] = {}
    checkpoints: list[datetime | None] = [None]
    for pred, gaps, said_times in history:
        start = 0
        for j, gap in enumerate(gaps):
            start += gap
            value = f"{WORDS[j]}{n}"
            text = f"{subject} {pred.replace('_', ' ')} {value}"
            eps = [
                memory.add_episode(text + f" ({i})", role="user", occurred_at=day(start + i))
                for i in range(said_times)
            ]
            memory.remember(subject, pred, value, valid_from=day(start), source=[e.id for e in eps])
            recorded = memory.now()
            model.setdefault(pred, []).append((start, value, [e.id for e in eps], recorded))
            checkpoints.append(recorded)
    owner = {e: (pred, j) for pred, vs in model.items() for j, v in enumerate(vs) for e in v[2]}
    for probe, known_at in itertools.product(probes, checkpoints[:: max(1, len(checkpoints) // 2)]):
        for pred in model:
            question = f"{subject} {pred.replace('_', ' ')}" + (" before" if about_past else "")
            hits = memory.search(
                question,
                include_episodes=True,
                k=10,
                valid_at=day(probe),
                known_at=known_at,
            )
            place = {h.fact.version_id: i for i, h in enumerate(hits) if h.fact is not None}
            for i, h in enumerate(hits):
                if h.episode is None or h.episode.id not in owner:
                    continue
                p, j = owner[h.episode.id]
                known = [v for v in model[p] if known_at is None or v[3] <= known_at]
                start = model[p][j][0]
                if j >= len(known):
                    expected = "unknown"  # its fact was not recorded yet
                else:
                    end = known[j + 1][0] if j + 1 < len(known) else None
                    if probe < start:
                        expected = "unknown"  # not yet valid: never stale before the change
                    elif end is None or probe < end:
                        expected = "current"
                    else:
                        expected = "stale"
                assert h.episode_status == expected, (p, j, probe, known_at)
                text = said(h.episode, h.past_label)
                assert marked(text) == (expected == "stale")
                if expected != "stale":
                    continue
                live = [v for v in known if v[0] <= probe][-1]
                assert [f.object for f in h.superseded_by] == [live[1]]
                for f in h.superseded_by:
                    if h.superseded_by and p == pred:
                        assert f.version_id in place, "the successor is brought in"
                    if f.version_id in place:
                        assert place[f.version_id] < i, "a stale episode outranked its successor"
            if not about_past:
                continue
            known = [v for v in model[pred] if known_at is None or v[3] <= known_at]
            began = [j for j, v in enumerate(known) if v[0] <= probe]
            live_fact = [h for h in hits if h.fact is not None and h.fact.predicate == pred]
            if len(began) >= 2 and live_fact:  # a live value that replaced another
                replaced = set(known[began[-2]][2])
                shown = [i for i, h in enumerate(hits) if h.episode and h.episode.id in replaced]
                assert shown, "asked about the past, the replaced value's messages are found"
                assert min(shown) > hits.index(live_fact[0])


def test_a_many_valued_predicate_is_replaced_by_the_value_that_followed(memory: Memory) -> None:
    """ "I no longer plan to visit Japan; I plan to visit Peru": Japan ended, Peru began
    as it did (another slot of a many-valued predicate): Peru replaced it."""
    memory.add("I plan to visit Japan.", occurred_at=day(0))
    memory.add(
        "I no longer plan to visit Japan; I plan to visit Peru instead.", occurred_at=day(30)
    )
    hits = memory.search("Where am I planning to travel?", include_episodes=True, valid_at=day(40))
    assert "Peru" in hits[0].text and hits[0].episode_status != "stale"
    (japan,) = [h for h in hits if h.episode is not None and h.episode.text.startswith("I plan")]
    (peru,) = [h for h in hits if h.fact is not None and "Peru" in h.fact.object]
    assert hits.index(peru) < hits.index(japan)
    assert japan.episode_status == "stale"
    assert japan.past_label is not None and japan.past_label.startswith("since superseded: ")
    assert "Peru" in japan.past_label


def test_every_message_of_a_restated_value_is_superseded_by_the_new_one(memory: Memory) -> None:
    """Said twice, the old value's versions may be two facts; each message that said it
    is superseded by the value that replaced it, not merely ended."""
    memory.add("I work at Acme.", occurred_at=day(0))
    memory.add("I work at Acme, I love it there.", occurred_at=day(4))
    memory.add("I left Acme and joined Globex.", occurred_at=day(40))
    hits = memory.search("Where do I work at Acme?", include_episodes=True, valid_at=day(50))
    acme = [h for h in hits if h.episode is not None and h.episode_status == "stale"]
    assert len(acme) == 2
    for h in acme:
        assert [f.object for f in h.superseded_by] == ["Globex"], h.episode.text


def test_a_question_about_the_past_brings_in_the_replaced_values_messages(
    memory: Memory,
) -> None:
    """No leg finds "I work at Vandelay Industries." for "What was my previous
    employer?"; the live "works at Kramerica" (found through "employer") brings in the
    message that stated the value it replaced, labelled as past, just below it."""
    memory.add("I work at Vandelay Industries.", occurred_at=day(0))
    memory.add("I left Vandelay Industries and started working at Kramerica.", occurred_at=day(40))
    hits = memory.search("What was my previous employer?", include_episodes=True, valid_at=day(50))
    assert hits[0].fact is not None and hits[0].fact.object == "Kramerica"
    assert hits[1].episode is not None and hits[1].episode.text.startswith("I work at Vandelay")
    assert hits[1].episode_status == "stale" and hits[1].explain["legs"]["past_of_fact"]
    assert "since superseded: user works at Kramerica" in (hits[1].past_label or "")
    # asked about the present, nothing is brought in
    now = memory.search("Who is my employer?", include_episodes=True, valid_at=day(50))
    assert now[0].fact is not None and now[0].fact.object == "Kramerica"
    assert all("past_of_fact" not in h.explain["legs"] for h in now)
    # before the change, nothing was replaced: the old message is current, unlabelled
    then = memory.search("What was my employer?", include_episodes=True, valid_at=day(20))
    assert all(h.episode_status != "stale" and h.past_label is None for h in then)


def test_question_words_name_predicates() -> None:
    from chronomem.render import asks_about_past
    from chronomem.retrieval.askwords import fact_terms

    assert fact_terms(["occupation"]) == ["occupation", "job", "title"]
    assert fact_terms(["employer", "hooli"]) == ["employer", "hooli", "works"]
    assert fact_terms(["weather"]) == ["weather"]
    assert asks_about_past("Where did I live before Berlin?")
    assert asks_about_past("What was my previous employer?")
    assert not asks_about_past("Where do I live now?")


def test_an_occupation_question_finds_the_job_title(memory: Memory) -> None:
    memory.add("I work as a pilot.", occurred_at=day(0))
    memory.add("I'm a farmer now.", occurred_at=day(40))
    hits = memory.search("What's my occupation?", include_episodes=True, valid_at=day(50))
    assert hits and hits[0].fact is not None and hits[0].fact.object == "farmer"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from("abcd"),
            st.floats(-1, 1, allow_nan=False),
            st.booleans(),
        ),
        max_size=12,
    )
)
def test_a_records_stale_versions_lift_it_and_nothing_else(
    hits: list[tuple[str, float, bool]],
) -> None:
    """The record stores' form of the rule (``staleness.lift_records``): an item
    written again scores at least what each of its stale versions scores, at least
    its own score, and exactly the best of them; the order is the hits' order."""
    from chronomem.retrieval.staleness import lift_records

    out = lift_records(hits)
    assert list(out) == list(dict.fromkeys(r for r, _, _ in hits))
    for record, rs in out.items():
        mine = [s for r, s, stale in hits if r == record and not stale]
        past = [s for r, s, stale in hits if r == record and stale]
        assert rs.score == max(mine + past)
        assert rs.own == (max(mine) if mine else None)
        assert rs.lifted == (bool(past) and (not mine or max(past) > max(mine)))
