"""Moving memory in and out: ``export`` (JSON Lines), ``import`` (a chronomem
dump, or a mem0 history database). See ``chronomem.exchange``."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from .. import exchange
from .output import shown


def _progress(flag: bool | None) -> bool:
    """Bars by default only when stderr is a terminal."""
    return sys.stderr.isatty() if flag is None else flag


def register(cli: Any) -> None:
    @cli.command()
    @click.option("--out", "out_path", default="-", show_default=True,
                  help="file to write ('-': standard output)")  # fmt: skip
    @click.option("--progress/--no-progress", default=None, help="progress bar on stderr")
    @click.pass_obj
    def export(s: Any, out_path: str, progress: bool | None) -> None:
        """Dump this scope as JSON Lines: both clocks, ids, provenance, episodes."""
        mem = s.memory()
        if out_path == "-":
            exchange.export_jsonl(mem, sys.stdout, progress=_progress(progress))
            return
        with open(out_path, "w", encoding="utf-8", newline="\n") as fh:
            counts = exchange.export_jsonl(mem, fh, progress=_progress(progress))
        s.out.emit({"out": out_path, "counts": counts},
                   [f"exported to {shown(out_path)}: "
                    + (", ".join(f"{n} {k}s" for k, n in counts.items()) or "nothing")])  # fmt: skip

    @cli.command("import")
    @click.argument("path")
    @click.option("--format", "fmt", type=click.Choice(["chronomem", "mem0"]),
                  default="chronomem", show_default=True,
                  help="a chronomem JSON Lines dump, or a mem0 history database (SQLite)")  # fmt: skip
    @click.option("--progress/--no-progress", default=None, help="progress bar on stderr")
    @click.pass_obj
    def import_(s: Any, path: str, fmt: str, progress: bool | None) -> None:
        """Import PATH ('-': standard input for a dump); creates the database if needed."""
        if fmt == "mem0":
            if path == "-":
                raise click.UsageError("a mem0 history database is a file, not standard input")
            if not os.path.isfile(path):  # checked first: a typo creates no database
                raise click.ClickException(f"no mem0 history database at {path!r}")
            counts = exchange.import_mem0_history(
                s.memory(create=True), path, progress=_progress(progress)
            )
        elif path == "-":
            counts = exchange.import_jsonl(
                s.memory(create=True), sys.stdin, progress=_progress(progress)
            )
        else:
            with open(path, encoding="utf-8") as fh:  # opened first: a typo creates nothing
                counts = exchange.import_jsonl(
                    s.memory(create=True), fh, progress=_progress(progress)
                )
        s.out.emit({"path": path, "format": fmt, "counts": counts},
                   [f"imported {shown(path)}: "
                    + ", ".join(f"{n} {k}" for k, n in counts.items())])  # fmt: skip
