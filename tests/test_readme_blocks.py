"""Every ```python block of every README runs as pasted (issue #29).

Each block is a complete program: it runs in a fresh interpreter, in an empty
folder, offline and with no key. A fragment that is clearer than a program is
fenced as something else (```text) and said to be a fragment in the prose.
The README's CLI session (its ```sh block) runs too, in a shell.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SKIP_DIRS = {".venv", ".venv-demo", "node_modules", "dist", "build"}


def readmes() -> list[Path]:
    found = [
        p
        for p in ROOT.rglob("README.md")
        if not SKIP_DIRS.intersection(p.relative_to(ROOT).parts) and ".git" not in p.parts
    ]
    return sorted(found)


def blocks() -> list[tuple[str, str]]:
    out = []
    for path in readmes():
        text = path.read_text()
        for m in BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 2
            out.append((f"{path.relative_to(ROOT)}:{line}", m.group(1)))
    return out


def offline_env(tmp: Path) -> dict[str, str]:
    """No key, no telemetry, every framework's files under ``tmp``."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        HOME=str(tmp / "home"),
        CREWAI_STORAGE_DIR=str(tmp / "crewai"),
        CREWAI_DISABLE_TELEMETRY="true",
        CREWAI_DISABLE_TRACKING="true",
        CREWAI_TRACING_ENABLED="false",
        OTEL_SDK_DISABLED="true",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("CHRONOMEM_URL", None)
    env.pop("PYTHONPATH", None)
    (tmp / "home").mkdir(exist_ok=True)
    return env


ALL_BLOCKS = blocks()


def test_the_readmes_have_python_blocks() -> None:
    names = {where.split(":")[0] for where, _ in ALL_BLOCKS}
    for readme in (
        "README.md",
        "langgraph_pkg/README.md",
        "langchain_pkg/README.md",
        "llamaindex_pkg/README.md",
        "crewai_pkg/README.md",
    ):
        assert readme in names


@pytest.mark.parametrize(("where", "code"), ALL_BLOCKS, ids=[w for w, _ in ALL_BLOCKS])
def test_readme_python_block_runs_as_pasted(where: str, code: str, tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        env=offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{where} failed:\n{proc.stderr[-3000:]}"


def cli_session() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## CLI\n", 1)[1]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


def test_readme_cli_session_runs(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("chronomem")
    assert cli.exists(), "the chronomem console script is installed with the core"
    env = offline_env(tmp_path)
    env["PATH"] = f"{cli.parent}{os.pathsep}{env['PATH']}"
    bash = shutil.which("bash")
    assert bash
    proc = subprocess.run(
        [bash, "-euo", "pipefail", "-c", cli_session()],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Globex" in proc.stdout
    assert (tmp_path / "timeline.png").stat().st_size > 0
    assert (tmp_path / "demo.jsonl").read_text().count("\n") >= 4
