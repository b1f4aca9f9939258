"""The LangGraph examples run offline and print what they claim to show."""

from __future__ import annotations

from ..examples_runner import run_example as _run


def test_memory_example() -> None:
    out = _run("langgraph_memory.py")
    assert "-> I know: city=Paris, pet=cat" in out
    assert "-> I know: city=Berlin, employer=Acme" in out
    history = out.split("history of ada's profile")[1]
    assert "city     = Paris   [ended]" in history
    assert "pet      = cat     [ended]" in history
    assert "city     = Berlin  [live]" in history
    assert "search 'Berlin' -> ada: {'city': 'Berlin', 'employer': 'Acme'}" in out


def test_replay_example() -> None:
    out = _run("langgraph_replay.py")
    assert "run 1 (vegetarian):  mushroom risotto" in out
    assert "run 2 (pescatarian): grilled sea bass" in out
    assert "replay of run 1:     mushroom risotto (diet: vegetarian)" in out
    assert "replay identical:    True" in out
    assert "writing to the past: refused (ReadOnlyView)" in out
    assert out.rstrip().endswith("vegetarian [ended]\n  pescatarian [retracted]")
