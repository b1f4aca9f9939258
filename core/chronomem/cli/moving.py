"""Moving memory in and out: ``export`` (JSON Lines), ``import`` (a chronomem
dump, hand-written facts, or a mem0 history database). See ``chronomem.exchange``."""

from __future__ import annotations

import itertools
import os
import sys
from typing import Any, TextIO

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
    @click.option("--format", "fmt", type=click.Choice(["auto", "dump", "facts", "mem0"]),
                  default="auto", show_default=True,
                  help="dump: a chronomem export; facts: one {subject, predicate, object, "
                       "valid_from?, valid_to?, recorded_at?} a line; mem0: a mem0 history "
                       "database (SQLite); auto: by the file's first bytes")  # fmt: skip
    @click.option("--progress/--no-progress", default=None, help="progress bar on stderr")
    @click.pass_obj
    def import_(s: Any, path: str, fmt: str, progress: bool | None) -> None:
        """Import PATH ('-': standard input); creates the database if needed."""
        bar = _progress(progress)
        if path != "-" and not os.path.isfile(path):  # checked first: a typo creates nothing
            raise click.ClickException(f"no file {path!r} to import")
        if fmt == "auto" and path != "-":
            with open(path, "rb") as raw:
                fmt = "mem0" if raw.read(16) == b"SQLite format 3\x00" else "auto"
        if fmt == "mem0":
            if path == "-":
                raise click.UsageError("a mem0 history database is a file, not standard input")
            counts = exchange.import_mem0_history(s.memory(create=True), path, progress=bar)
        else:
            fh: TextIO = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
            try:
                first = next(fh, "")
                lines = itertools.chain([first], fh)
                if fmt == "dump" or (fmt == "auto" and exchange.is_dump(first)):
                    fmt = "dump"
                    counts = exchange.import_jsonl(s.memory(create=True), lines, progress=bar)
                else:
                    fmt = "facts"
                    counts = exchange.import_facts(s.memory(create=True), lines, progress=bar)
            finally:
                if fh is not sys.stdin:
                    fh.close()
        s.out.emit({"path": path, "format": fmt, "counts": counts},
                   [f"imported {shown(path)} ({fmt}): "
                    + ", ".join(f"{n} {k}" for k, n in counts.items())])  # fmt: skip
