"""Dialect differences live behind ``Backend`` (docs/design.md §9): no module of
core outside ``chronomem/backends/`` asks which database it runs on.

The scan walks every module's syntax tree for ``<anything>.dialect.name`` and
``dialect.name`` (a SQLAlchemy ``Dialect`` in a local or parameter). The one
allowance is ``SafeText``'s bind and result hooks in ``schema``: SQLAlchemy
calls them with a ``Dialect`` (not a connection) while it processes values, so
they cannot reach ``backends.of``."""

from __future__ import annotations

import ast
from pathlib import Path

import chronomem

CORE = Path(chronomem.__file__).resolve().parent
BACKENDS = CORE / "backends"
# (module path under chronomem/, qualified function) where a dialect test may stay
ALLOWED = {
    ("schema.py", "SafeText.process_bind_param"),
    ("schema.py", "SafeText.process_result_value"),
}


def _is_dialect_name(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Attribute) and node.attr == "name"):
        return False
    owner = node.value
    if isinstance(owner, ast.Attribute):
        return owner.attr == "dialect"
    return isinstance(owner, ast.Name) and owner.id == "dialect"


def dialect_tests(source: str) -> list[tuple[str, int]]:
    """(qualified enclosing function or '<module>', line) of each dialect test."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, where: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, [*where, child.name])
                continue
            if _is_dialect_name(child):
                found.append((".".join(where) or "<module>", child.lineno))
            visit(child, where)

    visit(ast.parse(source), [])
    return found


def test_the_scan_finds_dialect_tests() -> None:
    src = (
        "def f(conn):\n"
        "    return conn.dialect.name == 'sqlite'\n"
        "class T:\n"
        "    def hook(self, value, dialect):\n"
        "        if dialect.name != 'postgresql':\n"
        "            return value\n"
        "x = engine.dialect.name\n"
        "ok = backend.name, conn.dialect, dialect.driver\n"
    )
    assert dialect_tests(src) == [("f", 2), ("T.hook", 5), ("<module>", 7)]


def test_no_dialect_test_outside_backends() -> None:
    modules = [p for p in sorted(CORE.rglob("*.py")) if BACKENDS not in p.parents]
    assert len(modules) > 30  # the scan sees core, not an empty directory
    outside = [
        f"{rel}:{line} ({where})"
        for path in modules
        for rel in [path.relative_to(CORE).as_posix()]
        for where, line in dialect_tests(path.read_text(encoding="utf-8"))
        if (rel, where) not in ALLOWED
    ]
    assert not outside, (
        "dialect branches outside chronomem/backends/ (put them behind Backend, "
        f"found with backends.of(conn)): {outside}"
    )


def test_the_backends_do_hold_the_dialect_tests() -> None:
    # the factory picks a backend by dialect name: the scan would see it there
    source = (BACKENDS / "__init__.py").read_text(encoding="utf-8")
    assert dialect_tests(source)
