"""CrewAI tests run offline in a sandbox: HOME, the CrewAI storage dir and the
app-data dirs point into a temporary directory, and every telemetry/tracing
switch CrewAI reads is off. This module runs before any test module imports
crewai, so the settings are in place before CrewAI reads them."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ORIGINAL_HOME = Path(os.environ.get("HOME") or Path.home())
SANDBOX = Path(tempfile.mkdtemp(prefix="crewai-chronomem-tests-"))
ENV = {
    "HOME": str(SANDBOX / "home"),
    "XDG_DATA_HOME": str(SANDBOX / "home" / ".local" / "share"),
    "XDG_CONFIG_HOME": str(SANDBOX / "home" / ".config"),
    "XDG_CACHE_HOME": str(SANDBOX / "home" / ".cache"),
    "CREWAI_STORAGE_DIR": str(SANDBOX / "crewai-storage"),
    # crewai_core.telemetry: any of these turns telemetry off
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_DISABLE_TRACKING": "true",
    "OTEL_SDK_DISABLED": "true",
    # tracing (crewai.events.listeners.tracing) and the version check
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_DISABLE_VERSION_CHECK": "true",
    "CREWAI_TESTING": "true",
}
UNSET = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")  # no key: no model call
for _k, _v in ENV.items():
    os.environ[_k] = _v
for _k in UNSET:
    os.environ.pop(_k, None)
Path(ENV["HOME"]).mkdir(parents=True, exist_ok=True)


@pytest.fixture(scope="session")
def sandbox() -> Path:
    """The directory every CrewAI write must stay inside."""
    return SANDBOX


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    for k in UNSET:
        monkeypatch.delenv(k, raising=False)
    yield


def snapshot(*roots: Path, depth: int = 3) -> set[str]:
    """Paths (to ``depth`` levels) under ``roots``: what a test may not change."""
    out: set[str] = set()
    for root in roots:
        if not root.exists():
            continue
        base = len(root.parts)
        for p in root.rglob("*"):
            if len(p.parts) - base <= depth:
                out.add(str(p))
    return out


@pytest.fixture
def outside_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Runs the test in an empty working directory and fails it if CrewAI wrote
    anything there, or anything CrewAI-named (``crewai``, or the project-named
    app-data dir ``appdirs`` derives from the working directory) in the real
    home's data/config/cache dirs. Other processes share the real home, so only
    CrewAI's names count there."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    roots = [ORIGINAL_HOME / d for d in (".local/share", ".config", ".cache")]
    names = ("crewai", cwd.name, "crewai_storage")

    def crewai_named() -> set[str]:
        return {p for p in snapshot(*roots, depth=1) if any(n in p.lower() for n in names)}

    before = crewai_named()
    yield
    added = (crewai_named() - before) | snapshot(cwd)
    assert not added, f"written outside the sandbox: {sorted(added)[:10]}"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Fact rows decoded (``reads.to_fact``) and records built (``to_record``) while
    the test runs (crewai imported here, after the sandbox above is set)."""
    from chronomem import reads
    from crewai_chronomem import storage as storage_module

    n = {"rows": 0, "records": 0}
    decode, build = reads.to_fact, storage_module.to_record

    def row(*args: Any, **kwargs: Any) -> Any:
        n["rows"] += 1
        return decode(*args, **kwargs)

    def record(fact: Any) -> Any:
        n["records"] += 1
        return build(fact)

    monkeypatch.setattr(reads, "to_fact", row)
    monkeypatch.setattr(storage_module, "to_record", record)
    yield n
