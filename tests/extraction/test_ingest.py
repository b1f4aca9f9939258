"""``add_messages``: episodes first, then facts through the state machine, one apply."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chronomem import ExtractionReceipt, Memory, Receipt, State
from chronomem.extraction import (
    Extracted,
    ExtractionError,
    ExtractionResult,
    Turn,
    add_messages,
)


def utc(y: int, m: int, d: int, h: int = 0, mi: int = 0) -> datetime:
    return datetime(y, m, d, h, mi, tzinfo=timezone.utc)


def test_paris_then_berlin_last_month(mem: Memory, clock):
    r1 = add_messages(mem, "I live in Paris", occurred_at=utc(2024, 1, 10, 9))
    assert r1.extracted == 1 and len(r1.added) == 1
    clock.now = utc(2024, 6, 12, 15, 30)
    r2 = add_messages(
        mem,
        [
            {"role": "user", "content": "Big news: I moved to Berlin last month."},
            {"role": "assistant", "content": "Congratulations! How is Berlin?"},
            {"role": "user", "content": "lol great"},
        ],
    )
    assert (r2.extracted, r2.skipped, r2.unextracted) == (1, 2, 0)
    assert r2.superseded_count >= 1  # the write replaced Paris

    (live,) = mem.facts(subject="user", predicate="lives_in")
    assert live.object == "Berlin"
    assert live.valid_from == utc(2024, 5, 1)  # "last month", resolved against the message

    history = mem.history("user", "lives_in")
    assert [(f.object, f.state) for f in history] == [
        ("Paris", State.ENDED),
        ("Berlin", State.LIVE),
    ]
    paris = history[0]
    assert paris.valid_from == utc(2024, 1, 10, 9) and paris.valid_to == utc(2024, 5, 1)

    why = mem.why(live.id)
    assert why.extractors == ["rules/1"]
    assert [e.text for e in why.episodes] == ["Big news: I moved to Berlin last month."]
    assert why.episodes[0].id == r2.episode_ids[0]
    assert live.extractor == "rules/1"
    assert live.metadata.get("confidence") == pytest.approx(0.9)


def test_no_longer_like_coffee_ends_it(mem: Memory, clock):
    add_messages(mem, "I love coffee and jazz.")
    clock.advance(days=30)
    receipt = add_messages(mem, "I no longer like coffee.")
    assert receipt.ended and receipt.extracted == 1
    assert sorted(f.object for f in mem.facts(subject="user", predicate="likes")) == ["jazz"]
    (coffee,) = mem.facts(subject="user", predicate="likes", obj="coffee", states="ended")
    assert coffee.valid_to is not None


def test_likes_and_dislikes_end_each_other(mem: Memory, clock):
    add_messages(mem, "I hate olives.")
    clock.advance(days=10)
    add_messages(mem, "I love olives now!")
    assert [f.object for f in mem.facts(subject="user", predicate="likes")] == ["olives"]
    assert mem.facts(subject="user", predicate="dislikes") == []
    assert [f.object for f in mem.facts(subject="user", predicate="dislikes", states="ended")] == [
        "olives"
    ]


def test_one_apply_call_for_the_whole_batch(mem: Memory, monkeypatch: pytest.MonkeyPatch):
    calls: list[int] = []
    real = mem.apply

    def spy(ops, **kw):
        calls.append(len(ops))
        return real(ops, **kw)

    monkeypatch.setattr(mem, "apply", spy)
    receipt = add_messages(
        mem,
        ["I'm Ada.", "I live in London and I work at Babbage Ltd.", "I speak French and Italian."],
    )
    assert len(calls) == 1 and calls[0] >= 5
    assert receipt.extracted == 5
    assert len(set(receipt.fact_ids)) == 5
    assert {f.predicate for f in mem.facts(subject="user")} == {
        "name",
        "lives_in",
        "works_at",
        "speaks",
    }


def test_left_acme_ends_the_job_at_the_stated_time(mem: Memory, clock):
    add_messages(mem, "I work at Acme.", occurred_at=utc(2023, 1, 1))
    clock.now = utc(2024, 6, 12)
    receipt = add_messages(mem, "I left Acme last month.")
    assert receipt.ended
    (acme,) = mem.facts(subject="user", predicate="works_at", states="ended")
    assert acme.valid_to == utc(2024, 5, 1)
    assert mem.facts(subject="user", predicate="works_at") == []


def test_future_move_is_scheduled_not_live(mem: Memory, clock):
    clock.now = utc(2024, 6, 12)
    add_messages(mem, "I live in Oslo.")
    add_messages(mem, "I'm moving to Lisbon next month.")
    assert [f.object for f in mem.facts(subject="user", predicate="lives_in")] == ["Oslo"]
    (lisbon,) = mem.facts(subject="user", predicate="lives_in", states="scheduled")
    assert lisbon.valid_from == utc(2024, 7, 1)
    later = mem.facts(subject="user", predicate="lives_in", valid_at=utc(2024, 8, 1))
    assert [f.object for f in later] == ["Lisbon"]


def test_speaker_name_is_the_subject(mem: Memory):
    add_messages(mem, [{"role": "user", "name": "Ada", "content": "I live in London."},
                       {"role": "user", "name": "Bob", "content": "I live in Leeds."}])  # fmt: skip
    assert mem.facts(subject="Ada", predicate="lives_in")[0].object == "London"
    assert mem.facts(subject="Bob", predicate="lives_in")[0].object == "Leeds"
    assert mem.facts(subject="user") == []
    assert mem.episodes()[0].metadata == {"speaker": "Ada"}


def test_transcript_order_is_kept_when_messages_share_an_instant(mem: Memory):
    texts = [f"message number {i}" for i in range(12)]
    add_messages(mem, texts, occurred_at=utc(2024, 2, 2))
    assert [e.text for e in mem.episodes()] == texts


def test_saying_it_again_changes_nothing(mem: Memory, clock):
    at = utc(2024, 3, 1)
    add_messages(mem, "I live in Rome.", occurred_at=at)
    clock.advance(days=1)
    again = add_messages(mem, "I live in Rome.", occurred_at=at)
    assert again.added == [] and again.unchanged
    assert len(mem.history("user", "lives_in")) == 1


def test_nothing_to_extract_still_keeps_the_episodes(mem: Memory):
    receipt = add_messages(mem, ["What's the weather like?", "ok"])
    assert isinstance(receipt, ExtractionReceipt)
    assert (receipt.added, receipt.extracted, receipt.skipped, receipt.unextracted) == ([], 0, 1, 1)
    assert [e.text for e in mem.episodes()] == ["What's the weather like?", "ok"]
    assert add_messages(mem, []).episode_ids == []


class _Scripted:
    """An extractor that returns what the test says (to exercise failure paths)."""

    name = "scripted"
    version = "0"

    def __init__(self, plan):
        self.plan = plan

    def extract(self, turns):
        return [self.plan(i, t) for i, t in enumerate(turns)]


def test_a_failed_turn_writes_nothing_and_is_reported(mem: Memory):
    def plan(i: int, t: Turn) -> ExtractionResult:
        if i == 0:
            return ExtractionResult(t, [Extracted(t.speaker, "lives_in", "Paris")])
        return ExtractionResult(t, [], error="model said nonsense")

    receipt = add_messages(mem, ["one", "two"], extractor=_Scripted(plan))
    assert receipt.failed == 1 and receipt.errors == {1: "model said nonsense"}
    assert receipt.extracted == 1
    assert [f.extractor for f in mem.facts(subject="user")] == ["scripted/0"]

    with pytest.raises(ExtractionError) as info:
        add_messages(mem, ["three", "four"], extractor=_Scripted(plan), on_error="raise")
    assert info.value.failures == {1: "model said nonsense"}
    assert info.value.receipt.episode_ids and len(mem.episodes()) == 4


def test_an_invalid_fact_drops_only_its_turn(mem: Memory):
    def plan(i: int, t: Turn) -> ExtractionResult:
        if i == 0:
            bad = Extracted(t.speaker, "lives_in", "Paris", valid_from=utc(2024, 5, 1),
                            valid_to=utc(2024, 1, 1))  # fmt: skip
            return ExtractionResult(t, [Extracted(t.speaker, "likes", "tea"), bad])
        return ExtractionResult(t, [Extracted(t.speaker, "likes", "cake")])

    receipt = add_messages(mem, ["a", "b"], extractor=_Scripted(plan))
    assert receipt.failed == 1 and 0 in receipt.errors
    assert [f.object for f in mem.facts(subject="user")] == ["cake"]


def test_memory_add_delegates_when_wired(mem: Memory):
    if not hasattr(Memory, "add"):
        pytest.skip("Memory.add is wired by the lead")
    receipt = mem.add("I live in Porto.")
    assert receipt.extracted == 1
    assert mem.facts(subject="user", predicate="lives_in")[0].object == "Porto"


def test_extraction_counts_live_on_the_extraction_receipt_only(mem: Memory):
    plain = mem.remember("user", "lives_in", "Paris")
    assert type(plain) is Receipt
    assert not hasattr(plain, "extracted") and not hasattr(plain, "episode_ids")
    added = mem.add(["I live in Rome", "ok thanks"])
    assert isinstance(added, ExtractionReceipt)
    assert (added.extracted, added.skipped, len(added.episode_ids)) == (1, 1, 2)


def test_merged_extraction_receipts_keep_each_error_on_its_own_message():
    first = ExtractionReceipt(episode_ids=["e1", "e2"], extracted=1, failed=1, errors={1: "bad"})
    second = ExtractionReceipt(episode_ids=["e3", "e4", "e5"], skipped=2, failed=1,
                               errors={0: "worse"})  # fmt: skip
    first.merge(second)
    assert first.episode_ids == ["e1", "e2", "e3", "e4", "e5"]
    assert (first.extracted, first.skipped, first.failed) == (1, 2, 2)
    assert first.errors == {1: "bad", 2: "worse"}
