"""``Transcript.recent``: the visible transcript newest first, a page at a time;
the first page's size (``page=``, what a LlamaIndex ``get`` sizes from its last
window) changes how many statements read it, never what it yields: compared with
the whole transcript reversed over random transcripts, clears and known-at instants."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from itertools import islice

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronomem import Memory
from chronomem_adapters.conformance import KitClock
from chronomem_adapters.transcript import MAX_PAGE, Transcript, TranscriptMessage

steps = st.lists(
    st.one_of(st.integers(1, 40), st.just("clear")),  # a run of messages, or a clear
    min_size=1,
    max_size=5,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps, st.integers(-3, MAX_PAGE + 5), st.integers(0, 90), st.booleans())
def test_recent_yields_the_transcript_newest_first_whatever_the_first_page(
    history: list[int | str], page: int, take: int, past: bool
) -> None:
    clock = KitClock(datetime(2026, 1, 1, tzinfo=timezone.utc), timedelta(seconds=1))
    with Memory(clock=clock) as m:
        t = Transcript(m.scoped(user="u", session="s"), "chat")
        marks, n = [], 0
        for step in history:
            if step == "clear":
                t.clear()
            else:
                t.append([TranscriptMessage("user", f"m{n + i}") for i in range(step)])
                n += step
            marks.append(clock.mark())
        at = marks[len(marks) // 2] if past else None
        whole = [x.text for x in t.messages(known_at=at)][::-1]
        got = [x.text for x in islice(t.recent(known_at=at, page=page), take)]
        assert got == whole[:take]
        assert [x.text for x in t.recent(known_at=at, page=page)] == whole
