"""The six distributions install by name from ``make wheels`` (issue #29).

What pip needs from the metadata: each adapter's range on ``chronomem`` and
``chronomem-adapters`` admits the versions the wheels carry, with an upper
bound (a compatible range, not ``>=``); licenses are SPDX strings (a TOML table
made setuptools print hundreds of deprecation warnings per install). The
install itself is ``scripts/check-wheels``, a ``.ci/run`` step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
DISTS = ["core", "adapters", "langgraph_pkg", "langchain_pkg", "llamaindex_pkg", "crewai_pkg"]
ADAPTERS = DISTS[2:]


def project(folder: str) -> dict:
    return tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]


def test_make_wheels_builds_the_six() -> None:
    makefile = (ROOT / "Makefile").read_text()
    line = re.search(r"^DISTS\s*:=\s*(.+)$", makefile, re.M)
    assert line and line.group(1).split() == DISTS
    assert "wheels:" in makefile and "scripts/check-wheels" in (ROOT / ".ci/run").read_text()


@pytest.mark.parametrize("folder", [*ADAPTERS, "adapters"])
def test_dependency_ranges_admit_the_wheels_and_are_bounded(folder: str) -> None:
    versions = {project(f)["name"]: Version(project(f)["version"]) for f in ("core", "adapters")}
    reqs = [Requirement(r) for r in project(folder)["dependencies"]]
    ours = [r for r in reqs if r.name in versions]
    assert ours, f"{folder} depends on chronomem"
    for r in ours:
        assert r.specifier.contains(versions[r.name]), f"{folder}: {r} refuses {versions[r.name]}"
        assert any(s.operator in ("<", "~=", "==") for s in r.specifier), f"{folder}: {r} unbounded"


@pytest.mark.parametrize("folder", DISTS)
def test_license_is_an_spdx_string_and_a_readme_is_shipped(folder: str) -> None:
    meta = project(folder)
    assert isinstance(meta["license"], str)
    build = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["build-system"]
    setuptools = [Requirement(r) for r in build["requires"] if r.startswith("setuptools")]
    assert setuptools and not setuptools[0].specifier.contains("76")  # SPDX license: >= 77
    if (ROOT / folder / "README.md").exists():
        assert meta.get("readme") == "README.md"


def test_every_readme_gives_both_install_lines() -> None:
    for folder, dist in [
        ("langgraph_pkg", "langgraph-store-chronomem"),
        ("langchain_pkg", "langchain-chronomem"),
        ("llamaindex_pkg", "llama-index-memory-chronomem"),
        ("crewai_pkg", "crewai-chronomem"),
        ("core", "chronomem"),
    ]:
        text = (ROOT / folder / "README.md").read_text()
        assert f"pip install {dist}" in text
        assert f"make wheels && pip install --find-links dist {dist}" in text
        for extra in ("postgres", "cli", "plot", "local-embed"):
            assert f"chronomem[{extra}]" in text, (folder, extra)
