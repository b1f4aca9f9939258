"""Running an example script the way a user would: a fresh interpreter, offline,
its standard output returned for the test to check."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run_example(
    name: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 180,
) -> str:
    """Run ``examples/<name>``; fail the test with its stderr unless it exits 0."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **env} if env is not None else None,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
