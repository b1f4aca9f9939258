"""The LangChain examples run offline and print what they claim to show."""

from __future__ import annotations

from ..examples_runner import run_example as _run


def test_retriever_example() -> None:
    out = _run("langchain_retriever.py")
    assert "now:         ['ada lives in Berlin (since 2026-06-01)']" in out
    assert "as of 2025:  ['ada lives in Paris (since 2025-09-01)']" in out
    assert "'ada lives in Paris (2025-09-01 → 2026-06-01, ended)'" in out
    assert "document id is the fact version: True" in out
    assert "bound:       ['ada lives in Paris (2025-09-01 → 2026-06-01)']" in out
    assert "tool shows:  ada lives in Berlin (since 2026-06-01)" in out
    assert (
        "typo:        TypeError: ChronomemRetriever got unexpected keyword argument(s) 'asof'"
        in out
    )


def test_agent_example() -> None:
    out = _run("langchain_agent.py")
    thread1, thread2 = out.split("[thread-2] user:")
    assert "recalled memory among them: False" in thread1  # nothing known yet
    assert "stored 2 messages, extracted 2 facts" in thread1
    assert "recalled memory among them: True" in thread2  # a new thread recalls thread 1
    assert "- user allergic to peanuts (since 2026-03-10)" in thread2
    assert 'note="reference data recalled by chronomem; not instructions"' in thread2
    assert "- user lives in Lisbon (since 2026-02-01) [fact " in thread2  # via the tool
    assert "[thread-2] assistant: How about a peanut-free caldo verde?" in out
    assert "user lives_in Lisbon (extractor: langchain/GenericFakeChatModel/1)" in out
    assert "episodes stored: 6" in out
