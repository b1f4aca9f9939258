"""``Transcript.record``: append plus extraction, one set of episodes."""

from __future__ import annotations

from chronomem import Memory
from chronomem_adapters.transcript import Transcript, TranscriptMessage


def test_record_appends_once_and_extracts_citing_the_transcript(clock) -> None:
    with Memory(clock=clock) as m:
        t = Transcript(m.scoped(user="ada"), "chat")
        said = [
            TranscriptMessage("user", "I live in Lisbon.", "m1", {"n": 1}),
            TranscriptMessage("assistant", "", "m2", {"tool_calls": [1]}),  # no text: kept
        ]
        receipt = t.record(said)
        assert len(receipt.episode_ids) == 2
        assert [(x.role, x.text, x.message_id, x.payload) for x in t.messages()] == [
            ("user", "I live in Lisbon.", "m1", {"n": 1}),
            ("assistant", "", "m2", {"tool_calls": [1]}),
        ]
        (fact,) = m.scoped(user="ada").facts(predicate="lives_in")
        assert fact.object == "Lisbon"
        assert fact.source_episode_ids == (receipt.episode_ids[0],)
        again = t.record([*said, TranscriptMessage("user", "ok", "m3")])
        assert len(again.episode_ids) == 1  # m1 and m2 were already there
        assert len(m.scoped(user="ada").episodes()) == 3
        assert t.record([]).episode_ids == []
