"""The README's adapters × semantics table, generated from the declarations.

``python -m chronomem_adapters.readme_table`` prints it; ``--write README.md``
replaces the text between the markers in place. A test checks the README's
table equals this one, so a declaration and its README row cannot drift."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .registry import ADAPTERS, AdapterEntry
from .semantics import Semantic

START = "<!-- semantics-table:start -->"
END = "<!-- semantics-table:end -->"

YES, NO, MISSING = "✓", "—", "?"


def _header() -> list[str]:
    cols = ["adapter", "as_of", *(s.name for s in Semantic)]
    return ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]


def _row(entry: AdapterEntry) -> str:
    spec = entry.spec()
    label = f"{entry.label} (`{entry.distribution}`)"
    if spec is None:
        cells = ["not installed", *(MISSING for _ in Semantic)]
    else:
        cells = [spec.as_of.value, *(YES if s in spec.semantics else NO for s in Semantic)]
    return "| " + " | ".join([label, *cells]) + " |"


def semantics_table(entries: Sequence[AdapterEntry] = ADAPTERS) -> str:
    """The Markdown table: one row per adapter, one column per semantic."""
    lines = _header() + [_row(e) for e in entries]
    legend = (
        f"{YES} kept (its conformance tests run) · {NO} not kept (asking for it raises "
        f"`UnsupportedSemantics`) · {MISSING} adapter package not installed here"
    )
    return "\n".join([*lines, "", legend])


def extract(text: str) -> str | None:
    """The text between the table markers, stripped; ``None`` without markers."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        return None
    return text[start + len(START) : end].strip()


def replace(text: str, table: str) -> str:
    """``text`` with the table between the markers replaced by ``table``."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"no {START} … {END} markers found")
    return text[: start + len(START)] + "\n" + table + "\n" + text[end:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", metavar="README", help="replace the table in this file")
    args = parser.parse_args(argv)
    table = semantics_table()
    if args.write:
        path = Path(args.write)
        path.write_text(replace(path.read_text(encoding="utf-8"), table), encoding="utf-8")
    else:
        sys.stdout.write(table + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
