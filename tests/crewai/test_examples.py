"""The CrewAI example runs offline (no key, no network) and prints what it claims."""

from __future__ import annotations

from pathlib import Path

from ..examples_runner import run_example


def test_crew_example(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CREWAI_STORAGE_DIR": str(tmp_path / "crewai")}
    out = run_example("crewai_crew.py", env=env, cwd=tmp_path)
    assert "task 1: Team note: our customer Dana lives in Paris." in out
    assert "task 2: From memory: [" in out and "Team note: our customer Dana lives in Paris" in out
    assert "task 2 recalled task 1's note: True" in out
    assert "now:           Dana lives in Berlin (since " in out
    assert "before (as_of): Dana lives in Paris (since " in out
    history = out.split("history:")[1]
    assert "Dana lives in Berlin (since" in history
    assert "Dana lives in Paris (" in history and ", ended)" in history
    assert (
        "replayed crew, as of before the correction: Team note: our customer Dana lives in Paris."
        in out
    )
    assert "writing to the past: refused (ReadOnlyView)" in out
    assert "the crew's model extracted: Dana works at Acme (since " in out
    # nothing outside the sandbox: CrewAI wrote (if anything) under tmp_path only
    assert not (Path.home() / ".local" / "share" / "crewai_crew.py").exists()
