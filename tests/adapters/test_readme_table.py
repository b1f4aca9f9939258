"""The README's adapters × semantics table equals the one generated from the
adapters' declarations."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronomem_adapters import Semantic
from chronomem_adapters.readme_table import END, START, extract, replace, semantics_table
from chronomem_adapters.registry import ADAPTERS, AdapterEntry

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_table_matches_declarations() -> None:
    text = README.read_text(encoding="utf-8")
    current = extract(text)
    assert current is not None, f"README.md must keep its {START} … {END} markers"
    expected = semantics_table()
    assert current == expected, (
        "README.md's semantics table is empty or out of date; regenerate it with\n"
        "  .venv/bin/python -m chronomem_adapters.readme_table --write README.md\n"
        f"expected:\n{expected}"
    )


def test_table_has_a_row_per_adapter_and_a_column_per_semantic() -> None:
    table = semantics_table()
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + len(ADAPTERS)
    header = rows[0]
    assert all(s.name in header for s in Semantic)
    langgraph = next(r for r in rows if r.startswith("| LangGraph store"))
    cells = [c.strip() for c in langgraph.strip("|").split("|")]
    assert cells[1] == "view"
    marks = dict(zip([s.name for s in Semantic], cells[2:], strict=True))
    assert marks["HISTORY"] == "✓" and marks["PROVENANCE"] == "—"


def test_not_installed_adapter_row() -> None:
    missing = AdapterEntry("Nowhere", "nowhere-pkg", "no_such_module_xyz:Thing")
    assert missing.spec() is None
    row = semantics_table([missing]).splitlines()[2]
    assert row.startswith("| Nowhere (`nowhere-pkg`) | not installed |")


def test_replace_between_markers() -> None:
    text = f"intro\n{START}\nold\n{END}\noutro\n"
    new = replace(text, "TABLE")
    assert extract(new) == "TABLE"
    assert new.startswith("intro\n") and new.endswith(f"{END}\noutro\n")
    with pytest.raises(ValueError):
        replace("no markers", "T")
