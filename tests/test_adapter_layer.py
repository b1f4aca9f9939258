"""The framework packages reach core only through its public names (issue #33).

``langgraph_pkg``, ``langchain_pkg``, ``llamaindex_pkg`` and ``crewai_pkg`` may
import ``chronomem_adapters`` (the shared layer) and, from core:

- ``chronomem`` itself: the names in ``chronomem.__all__``;
- the public submodules in ``PUBLIC_MODULES`` (docs/design.md §8): names without
  a leading underscore, and only those in the module's ``__all__`` when it has one.

Any other core module (``chronomem.schema``, ``chronomem.backends``,
``chronomem.extraction.llm`` ...) is private to core. A package also never
tags reads itself (a direct ``.read_tag(`` call: ``chronomem_adapters.readtags``
does it, so an application's tag wins) and never holds SQL (no ``sqlalchemy``
import, no ``SELECT``/``INSERT``/``UPDATE``/``DELETE`` statement text):
queries go through ``Memory``. The checker is tested on planted violations."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {
    "langgraph_pkg": REPO / "langgraph_pkg" / "langgraph" / "store" / "chronomem",
    "langchain_pkg": REPO / "langchain_pkg" / "langchain_chronomem",
    "llamaindex_pkg": REPO / "llamaindex_pkg" / "llama_index" / "memory" / "chronomem",
    "crewai_pkg": REPO / "crewai_pkg" / "crewai_chronomem",
}
PUBLIC_MODULES = frozenset(
    {
        "chronomem",
        # the CLI's plugin API (the `chronomem.cli` entry-point group: `chronomem items`)
        "chronomem.cli",
        "chronomem.cli.instant",
        "chronomem.embedding",
        "chronomem.errors",
        "chronomem.exchange",
        "chronomem.extraction",
        "chronomem.identity",
        "chronomem.model",
        "chronomem.ops",
        "chronomem.predicates",
        "chronomem.prefixes",  # Arm, Entries: the argument of Memory.live_entries
        "chronomem.render",
        "chronomem.reserved",  # adapters' internal rows: never shown to people or prompts
        "chronomem.retrieval",  # its __all__: search's types and the stale-record rule
        "chronomem.scope",
        "chronomem.timeutil",
    }
)
# a statement in SQL's capitals, or any statement naming one of core's tables (cm_*)
SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM)\b"
    r"|(?i:\b(from|into|update|join)\s+cm_\w+)",
    re.S,
)


def _public_names(module: str) -> set[str] | None:
    """The names ``module`` exports (``None``: no ``__all__``, any public name)."""
    names = getattr(importlib.import_module(module), "__all__", None)
    return None if names is None else set(names)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _core_import(module: str, names: list[str], where: str) -> list[str]:
    if module not in PUBLIC_MODULES:
        return [f"{where}: imports private core module {module}"]
    exported = _public_names(module)
    out = []
    for name in names:
        if name.startswith("_"):
            out.append(f"{where}: imports private name {module}.{name}")
        elif exported is not None and name not in exported and name != "*":
            out.append(f"{where}: {module}.{name} is not in {module}.__all__")
    return out


def check_source(source: str, where: str) -> list[str]:
    """Every way ``source`` breaks the layer's rules, as readable lines."""
    tree = ast.parse(source)
    out: list[str] = []
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        at = f"{where}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            top = node.module.split(".")[0]
            names = [a.name for a in node.names]
            if top == "chronomem":
                sub = [
                    f"{node.module}.{n}" for n in names if f"{node.module}.{n}" in PUBLIC_MODULES
                ]
                out += (
                    [] if sub and len(sub) == len(names) else _core_import(node.module, names, at)
                )
            elif top == "sqlalchemy":
                out.append(f"{at}: imports sqlalchemy (SQL stays in core)")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top == "chronomem" and alias.name not in PUBLIC_MODULES:
                    out.append(f"{at}: imports private core module {alias.name}")
                elif top == "sqlalchemy":
                    out.append(f"{at}: imports sqlalchemy (SQL stays in core)")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "read_tag":
                out.append(f"{at}: calls .read_tag( (use chronomem_adapters.readtags.tagged)")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and SQL.search(node.value)
        ):
            out.append(f"{at}: SQL text {node.value[:40]!r}")
    return out


def check_tree(root: Path) -> list[str]:
    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        out += check_source(path.read_text(encoding="utf-8"), str(path.relative_to(root.parent)))
    return out


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_packages_reach_core_only_through_public_names(package: str) -> None:
    root = PACKAGES[package]
    assert list(root.rglob("*.py")), f"nothing found under {root}"
    assert check_tree(root) == []


PLANTED = {
    "from chronomem.schema import vectors": "private core module chronomem.schema",
    "from chronomem.extraction.llm import SYSTEM_PROMPT": "private core module",
    "import chronomem.backends": "private core module chronomem.backends",
    "from chronomem.timeutil import _US": "private name chronomem.timeutil._US",
    "from chronomem import memory": "chronomem.memory is not in chronomem.__all__",
    "from chronomem.extraction import base": "chronomem.extraction.base is not in",
    "from sqlalchemy import text": "imports sqlalchemy",
    "import sqlalchemy.sql": "imports sqlalchemy",
    "store.memory.read_tag(run='r')": "calls .read_tag(",
    "q = 'SELECT item_id FROM cm_vectors WHERE tenant = :t'": "SQL text",
    "q = 'delete from cm_facts'": "SQL text",
    "q = f'UPDATE cm_meta SET value = {v}'": "SQL text",
}


@pytest.mark.parametrize(("line", "says"), sorted(PLANTED.items()))
def test_the_checker_finds_a_planted_violation(tmp_path: Path, line: str, says: str) -> None:
    pkg = tmp_path / "planted_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""Select the best item from the list (prose, allowed)."""\n')
    (pkg / "bad.py").write_text(f"from chronomem import Memory\n{line}\n")
    found = check_tree(pkg)
    assert len(found) == 1 and says in found[0], found


def test_the_checker_allows_the_public_surface(tmp_path: Path) -> None:
    src = (
        '"""Reads: SELECT-free."""\n'
        "from chronomem import Memory, ReadOnlyView, State\n"
        "from chronomem.extraction import Request, content_text\n"
        "from chronomem.timeutil import instant, to_us\n"
        "from chronomem_adapters.readtags import tagged\n"
        "import chronomem.render\n"
        "text = 'select a model from the list'\n"  # prose: no statement shape
    )
    assert check_source(src, "ok.py") == []
