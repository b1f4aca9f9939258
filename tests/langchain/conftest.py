"""Fixtures for the LangChain package tests: offline, no telemetry, a scoped memory
per backend on the shared manual clock."""

from __future__ import annotations

import os

import pytest

from chronomem import Memory

# Offline: no LangSmith tracing or telemetry from anything LangChain imports.
for _var in ("LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING"):
    os.environ[_var] = "false"
os.environ.setdefault("LANGSMITH_API_KEY", "")


@pytest.fixture
def root(memory: Memory) -> Memory:
    """The store itself (the root ``memory`` fixture, on every backend)."""
    return memory


@pytest.fixture
def mem(root: Memory) -> Memory:
    """The memory a LangChain app hands the adapters: scoped to one user."""
    return root.scoped(user="ada")


# For tests of validation and rendering, which no backend changes: SQLite only
# (a PostgreSQL schema per test costs seconds on a loaded machine).
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"])
