"""CrewAI tests run offline in a sandbox: HOME, the CrewAI storage dir and the
app-data dirs point into a temporary directory, and every telemetry/tracing
switch CrewAI reads is off. This module runs before any test module imports
crewai, so the settings are in place before CrewAI reads them."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

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
