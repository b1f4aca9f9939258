"""A model-based test of ChronomemMemory's transcript: random sequences of the calls
agents make (put, put_messages, set with a re-sent or windowed history, reset)
against a plain-list reference."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ChatMessage

from chronomem import Memory
from llama_index.memory.chronomem import ChronomemMemory

texts = st.sampled_from(["hi", "ok", "ok ", "Hi", "hello\nthere", "👋", ""])
roles = st.sampled_from(["user", "assistant", "tool"])
message = st.builds(lambda r, t: (r, t), roles, texts)

op = st.one_of(
    st.tuples(st.just("put"), message),
    st.tuples(st.just("put_messages"), st.lists(message, max_size=3)),
    st.tuples(st.just("resend"), st.integers(0, 6), st.lists(message, max_size=3)),
    st.tuples(st.just("reset")),
)


def chat(m: tuple[str, str]) -> ChatMessage:
    return ChatMessage(role=m[0], content=m[1])


def pairs(messages: list[ChatMessage]) -> list[tuple[str, str]]:
    return [(m.role.value, m.content or "") for m in messages]


def is_run(seq: list[tuple[str, str]], run: list[tuple[str, str]]) -> bool:
    return any(seq[i : i + len(run)] == run for i in range(len(seq) - len(run) + 1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, max_size=12))
def test_transcript_matches_the_reference(ops: list[tuple]) -> None:
    store = Memory()
    try:
        mem = ChronomemMemory.from_defaults(
            memory=store.scoped(user="u"), session_id="s", extract=False, token_limit=50
        )
        visible: list[tuple[str, str]] = []
        audit: list[tuple[str, str]] = []
        for o in ops:
            if o[0] == "put":
                mem.put(chat(o[1]))
                visible.append(o[1])
                audit.append(o[1])
            elif o[0] == "put_messages":
                mem.put_messages([chat(m) for m in o[1]])
                visible += o[1]
                audit += o[1]
            elif o[0] == "resend":  # an agent re-sending (part of) its history plus new turns
                history = visible[min(o[1], len(visible)) :] + o[2]
                before = list(visible)
                mem.set([chat(m) for m in history])
                now = pairs(mem.get_all())
                assert now[: len(before)] == before, "set never deletes or rewrites"
                assert is_run(now, history), "after set the history is there"
                if not is_run(before, history):
                    # the documented rule: the longest head of the re-sent history that
                    # ends the transcript is already there (messages carry no ids, so a
                    # new turn equal to the stored tail counts as re-sent)
                    k = max(
                        i
                        for i in range(len(history) + 1)
                        if before[len(before) - i :] == history[:i]
                    )
                    assert k >= len(history) - len(o[2]), "the re-sent part is recognised"
                    assert now == before + history[k:], "only the new turns are appended"
                audit += now[len(before) :]
                visible = now
            else:
                mem.reset()
                visible = []
            assert pairs(mem.get_all()) == visible
            assert pairs(mem.history()) == audit
            recent = pairs([m for m in mem.get() if m.role.value != "system"])
            assert recent == visible[len(visible) - len(recent) :]
            assert bool(recent) == bool(visible), "the newest message is always shown"
    finally:
        store.close()
