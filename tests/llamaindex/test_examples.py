"""The LlamaIndex example runs offline and prints what it claims to show."""

from __future__ import annotations

from ..examples_runner import run_example as _run


def test_agent_example() -> None:
    out = _run("llamaindex_agent.py")
    session2 = out.split("session 2")[1].split("session 3")[0]
    assert "user: Where do I live?\n  agent: You live in Paris." in session2
    session3 = out.split("session 3")[1]
    assert "user: Where do I live?\n  agent: You live in Berlin." in session3
    assert "agent: On 2026-01-05 you lived in Paris." in session3
    assert "current recall: Berlin\n" in out, "the old value is gone from current recall"
    assert "as_of 2026-01-05 recall: Paris\n" in out
    assert "writing to the past: refused (UnsupportedSemantics)" in out
    assert (
        "roles ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'tool', 'assistant']"
        in out
    )
    assert "session 1 transcript: [\"Hi, I'm Ada. I live in Paris.\", 'Noted.']" in out
    session4 = out.split("session 4")[1]
    assert "user: What do I play?\n  agent: You play the cello." in session4
    assert "fact: user plays cello (by llamaindex:MockFunctionCallingLLM/1)" in session4
