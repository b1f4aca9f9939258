"""The salience gate drops small talk before any extraction work."""

from __future__ import annotations

import pytest

from chronomem.extraction import LLMExtractor, RuleExtractor, Turn, add_messages, is_small_talk

SMALL_TALK = [
    "ok thanks", "lol", "sounds good", "hi", "Hi!", "thank you so much!!", "ok cool",
    "hahaha", "got it", "👍", "...", "", "   ", "yes please", "no worries", "good morning",
    "bye", "sure, sounds great", "makes sense", "awesome, thanks a lot", "I see", "ttyl",
]  # fmt: skip
SUBSTANCE = [
    "I live in Paris", "hi, I'm Ada", "thanks, I moved to Berlin", "ok so my name is Bob",
    "I love dogs", "lol I'm allergic to cats", "sounds good, I start at Stripe on Monday",
    "Can you help me with my invoice?",
]  # fmt: skip


@pytest.mark.parametrize("text", SMALL_TALK)
def test_small_talk_is_gated(text: str):
    assert is_small_talk(text)


@pytest.mark.parametrize("text", SUBSTANCE)
def test_substance_passes(text: str):
    assert not is_small_talk(text)


def test_gate_runs_before_any_rule(monkeypatch: pytest.MonkeyPatch):
    extractor = RuleExtractor()
    seen: list[str] = []
    real = extractor.extract_text

    def spy(text: str, **kw: object) -> list:
        seen.append(text)
        return real(text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(extractor, "extract_text", spy)
    results = extractor.extract([Turn("ok thanks"), Turn("lol"), Turn("I live in Rome")])
    assert [r.skipped for r in results] == [True, True, False]
    assert seen == ["I live in Rome"]
    assert [f.obj for f in results[2].facts] == ["Rome"]


def test_only_user_turns_are_read_by_default():
    results = RuleExtractor().extract(
        [Turn("I live in the cloud, in Dublin", role="assistant"), Turn("I live in Dublin")]
    )
    assert results[0].skipped and not results[0].facts
    assert [f.obj for f in results[1].facts] == ["Dublin"]


def test_llm_extractor_never_calls_the_model_for_small_talk():
    calls: list[object] = []

    def complete(messages: list[dict[str, str]]) -> str:
        calls.append(messages)
        return '{"facts": []}'

    results = LLMExtractor(complete).extract([Turn("ok thanks"), Turn("lol"), Turn("hi")])
    assert calls == [] and all(r.skipped for r in results)


def test_receipt_counts_skipped_and_unextracted(mem):
    receipt = add_messages(
        mem, ["hi", "I live in Paris", "lol", "Can you summarise this article?", "sounds good"]
    )
    assert (receipt.skipped, receipt.unextracted, receipt.extracted) == (3, 1, 1)
    assert len(receipt.episode_ids) == 5  # every message is kept as an episode
    assert len(mem.episodes()) == 5
