"""The examples run, offline, and say what the README says they say."""

from __future__ import annotations

from pathlib import Path

from .examples_runner import run_example as run

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_output_is_the_one_in_the_readme() -> None:
    out = run("quickstart.py")
    assert "move: added 1, superseded 1" in out
    assert "retry: unchanged=1 added=0" in out
    now = out.split("now:\n")[1].split("\n\n")[0].splitlines()
    assert now == [
        "  alice lives_in Berlin (since 2026-06-01; live)",
        "  Alice works_at Apex Corp (since 2026-01-10; live)",
    ]
    replay = out.split("exact replay):\n")[1].split("\n\n")[0].splitlines()
    assert replay == [
        "  Alice lives_in Paris (since 2025-09-01; live)",
        "  Alice works_at Acme Corp. (since 2026-01-10; live)",
    ]
    assert "  Alice works_at Acme Corp. (since 2026-01-10; retracted)" in out
    assert "- Alice lives in Paris (2025-09-01 to 2026-06-01, since ended)" in out
    readme = (ROOT / "README.md").read_text()
    # The README shows this output verbatim.
    for line in now + replay:
        assert line in readme


def test_readme_quick_start_runs_and_says_what_it_claims() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```python\n", 1)[1].split("```", 1)[0]
    ns: dict[str, object] = {}
    exec(compile(block, "README.md", "exec"), ns)
    assert [f.object for f in ns["now"]] == ["Berlin"]  # type: ignore[attr-defined]
    assert [(f.object, f.state.value) for f in ns["past"]] == [  # type: ignore[attr-defined]
        ("Paris", "ended"),
        ("Berlin", "live"),
    ]
    assert [f.object for f in ns["then"]] == ["Paris"]  # type: ignore[attr-defined]
    assert ns["hits"][0].text == "alice lives in Berlin"  # type: ignore[index]
    assert "alice lives in Berlin (since 2026-06-01)" in ns["block"]  # type: ignore[operator]
