"""The writer's trivial plans (issue #32 item 4) are the state machine's own outcome.

A slot that one assert alone touches, holding no version or already holding the
asserted value, is written without a ``SlotPlan`` (``statemachine.trivial_assert``).
Here, for any stored versions of a slot and any assert, ``trivial_assert`` either
declines (None) or gives exactly what ``SlotPlan.assert_`` does: one new version
over the same interval in an empty slot, or the same version left unchanged.
Whole histories through the writer are checked against the reference model by
``test_model_based``, on SQLite and PostgreSQL; ``test_batched_outcome_matches``
checks that one batch and the same asserts one call each store the same facts."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from chronomem import Memory, writer
from chronomem.ops import AssertOp
from chronomem.scope import Scope
from chronomem.slotkeys import slot_key
from chronomem.statemachine import NEW, SlotPlan, SlotVersion, trivial_assert

from .conftest import T0, ManualClock

DAY = 86_400_000_000


def stored(pieces: list[tuple[int, int | None, str]]) -> list[SlotVersion]:
    """Non-overlapping stored versions ``(gap in days, length or None, object)``."""
    out: list[SlotVersion] = []
    at = 0
    for i, (gap, length, obj) in enumerate(pieces):
        at += gap
        end = None if length is None else (at + length) * DAY
        out.append(SlotVersion(f"v{i:03d}", f"f{i:03d}", obj, obj.lower(), at * DAY, end))
        if length is None:
            break
        at += length
    return out


PIECES = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.one_of(st.none(), st.integers(1, 4)),
        st.sampled_from(["Paris", "London"]),
    ),
    max_size=5,
)


@given(
    PIECES,
    st.sampled_from(["Paris", "London"]),
    st.integers(0, 30),
    st.one_of(st.none(), st.integers(1, 20)),
    st.booleans(),
    st.booleans(),
)
def test_trivial_assert_is_the_plans_outcome(
    pieces: list[tuple[int, int | None, str]],
    obj: str,
    start: int,
    length: int | None,
    bounded: bool,
    explicit_start: bool,
) -> None:
    versions = stored(pieces)
    vf = start * DAY
    vt = None if length is None else (start + length) * DAY
    if not bounded:
        vt = None
    found = trivial_assert(
        versions, obj.lower(), vf, vt, bounded=bounded, explicit_start=explicit_start
    )
    plan = SlotPlan(versions)
    version = plan.assert_(obj, obj.lower(), vf, vt, bounded=bounded, explicit_start=explicit_start)
    if found is None:
        assert versions  # an empty slot is always trivial
        return
    if found is NEW:
        assert not versions
        assert version is not None
        assert not plan.closes
        assert [(v.valid_from, v.valid_to, v.object) for v in plan.inserts.values()] == [
            (vf, vt if bounded else None, obj)
        ]
    else:
        assert isinstance(found, SlotVersion)
        assert version is None
        assert not plan.closes and not plan.inserts
        assert plan.outcome.unchanged == [found.id]
        assert plan.outcome.fact_ids == [found.fact_id]


def _facts(m: Memory) -> list[list[tuple[str, str, str, object, object]]]:
    """What the store holds at each valid instant of the writes."""
    return [
        sorted(
            (f.subject, f.predicate, f.object, f.valid_from, f.valid_to)
            for f in m.facts(valid_at=T0 + timedelta(days=d, hours=1))
        )
        for d in range(7)
    ]


def test_batched_outcome_matches() -> None:
    """One batch of asserts (new slots, repeats, a superseded one-valued slot, two
    asserts of one slot) stores what the same asserts one call each store."""
    writes = [
        ("Ada", "lives_in", "Paris", 0),
        ("Ada", "likes", "tea", 1),
        ("Ada", "likes", "tea", 2),  # a repeat in the same batch: one slot, two ops
        ("Ada", "lives_in", "London", 3),  # supersedes Paris from day 3
        ("Bob", "likes", "jazz", 0),
        ("Bob", "likes", "Jazz!", 5),  # the same object key
        ("Cy", "works_at", "Acme", 2),
    ]
    out = []
    for batched in (True, False):
        m = Memory(clock=ManualClock())
        m.register_predicate("lives_in", cardinality="one")
        m.register_predicate("works_at", cardinality="one")
        ops = [m.assertion(s, p, o, valid_from=T0 + timedelta(days=d)) for s, p, o, d in writes]
        if batched:
            receipt = m.apply(ops)
            again = m.apply(ops[:2])  # exact repeats of live values: unchanged
            assert again.added == [] and len(again.unchanged) == 2
            assert set(again.fact_ids) <= set(receipt.fact_ids)
        else:
            for op in ops:
                m.apply([op])
        out.append(_facts(m))
        m.close()
    assert out[0] == out[1]


@given(
    st.sampled_from(["Paris", "London"]),
    st.one_of(st.none(), st.integers(0, 30)),
    st.one_of(st.none(), st.integers(31, 60)),
    st.one_of(st.none(), st.sampled_from(["", "text to index"])),
    st.sampled_from([{}, {"k": "v"}]),
    st.one_of(st.none(), st.sampled_from(["llm"])),
)
def test_direct_row_is_the_plans_row(
    obj: str,
    start: int | None,
    end: int | None,
    index_text: str | None,
    metadata: dict[str, str],
    extractor: str | None,
) -> None:
    """A trivial assert's new version goes straight to its ``cm_versions`` row
    (``writer._new_row``): the row ``_version_row`` makes of the version
    ``SlotPlan.assert_`` inserts in an empty slot, key for key and in the same
    order (the batch's rows share one prepared INSERT)."""
    scope = Scope("t", "u")
    op = AssertOp(
        "Ada Lovelace",
        "lives_in",
        obj,
        None if start is None else start * DAY,
        None if end is None else end * DAY,
        bounded=end is not None,
        metadata=metadata,
        extractor=extractor,
        index_text=index_text,
    )
    tx = 10 * DAY
    target = writer._Target(
        op, (slot_key(scope, "ada lovelace", "lives_in", None),), "ada lovelace", "lives_in",
        obj.lower(),
    )  # fmt: skip
    op, vf = writer._interval(op, tx)
    vt = op.valid_to if op.bounded else None
    plan = SlotPlan([])
    version = plan.assert_(
        op.obj, obj.lower(), vf, op.valid_to, bounded=op.bounded,
        explicit_start=op.valid_from is not None,
        extra=writer._assert_extra(target, op, scope),
    )  # fmt: skip
    assert version is not None
    direct = writer._new_row(
        op, target.slots[0], target.subject_key, target.predicate, scope, version.id,
        version.fact_id, obj.lower(), vf, vt, tx,
    )  # fmt: skip
    planned = writer._version_row("t", version, tx)
    assert list(direct.items()) == list(planned.items())


# any text, with the join's escape and separator characters among its letters
_PART = st.text(alphabet=st.sampled_from(["a", "é", " ", "\x1d", "\x1e", "\x1f", "~"]))


@given(_PART, _PART, _PART, st.integers(-(2**62), 2**62))
def test_a_versions_hash_is_its_content_hash(
    subject_key: str, predicate: str, object_key: str, valid_from: int
) -> None:
    """The digest a version's row stores (``writer._version_hash``, for every new
    version) is ``content_hash`` of the same parts: parts holding the injective
    join's escape or separator included."""
    assert writer._version_hash(
        subject_key, predicate, object_key, valid_from
    ) == writer.content_hash(subject_key, predicate, object_key, valid_from)
