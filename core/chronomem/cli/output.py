"""What the CLI prints: stored text escaped so it cannot drive the terminal, JSON
for scripts, rich tables on a terminal, plain lines when piped.

Every stored string goes through ``shown`` before it reaches a terminal (plain
lines and rich cells alike; rich cells are ``Text`` objects, so a stored
``[red]`` is not markup either); ``--json`` output escapes what JSON leaves raw."""

from __future__ import annotations

import dataclasses
import json
import sys
import unicodedata
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..model import Fact
from ..timeutil import parse_iso

_UNSAFE = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def parse_instant(value: str | datetime | None) -> datetime | None:
    """ISO 8601; a date or a time without an offset is read as UTC (said, not guessed:
    the CLI documents it, unlike the API, which refuses naive datetimes). A datetime
    (already converted by the option's type, ``cli.instant``) is returned as is."""
    if value is None or isinstance(value, datetime):
        return value
    return parse_iso(value, "time", naive="utc", error=ValueError)


def shown(value: object) -> str:
    """A stored value made safe for a terminal: control, format and line/paragraph
    separator characters (ESC of ANSI/OSC sequences, CR, LF, bidi overrides, C1
    controls) and the backslash itself are printed as escapes, so a stored value
    can neither drive the terminal nor forge a line of output."""
    out = []
    for ch in str(value):
        if ch == "\\":
            out.append("\\\\")
        elif unicodedata.category(ch) in _UNSAFE:
            code = ord(ch)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}"
                if code < 0x10000
                else f"\\U{code:08x}"
            )
        else:
            out.append(ch)
    return "".join(out)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells astral characters
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_safe(text: str) -> str:
    """JSON escapes C0 controls itself; escape the rest a terminal could act on
    (C1 controls, bidi/format characters, line separators) as ``\\uXXXX``."""
    return "".join(
        _json_escape(ch) if ord(ch) >= 0x7F and unicodedata.category(ch) in _UNSAFE else ch
        for ch in text
    )


def jsonable(obj: Any) -> Any:
    if isinstance(obj, datetime):
        return obj.isoformat()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {k: jsonable(v) for k, v in dataclasses.asdict(obj).items()}
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "value"):
        return obj.value
    return obj


def when(dt: datetime | None, open_end: str = "…") -> str:
    return dt.isoformat() if dt is not None else open_end


def fact_row(f: Fact) -> str:
    return (
        f"{shown(f.id)}  {shown(f.subject)} | {shown(f.predicate)} | {shown(f.object)}  "
        f"[{f.valid_from.isoformat()} → {when(f.valid_to)})  {f.state.value}"
        f"  recorded {f.recorded_at.isoformat()}"
    )


FACT_COLUMNS = ("id", "subject", "predicate", "object", "valid", "state", "recorded")


def fact_cells(f: Fact) -> list[str]:
    return [
        f.id,
        f.subject,
        f.predicate,
        f.object,
        f"{f.valid_from:%Y-%m-%d %H:%M} → {f'{f.valid_to:%Y-%m-%d %H:%M}' if f.valid_to else '…'}",
        f.state.value,
        f"{f.recorded_at:%Y-%m-%d %H:%M:%S}",
    ]


class Output:
    """Where a command's result goes: JSON, a rich table (a terminal), or lines."""

    def __init__(self, as_json: bool, stream: Any = None):
        self.as_json = as_json
        self.stream = stream

    @property
    def _out(self) -> Any:
        return self.stream or sys.stdout

    def rich(self) -> bool:
        if self.as_json or not getattr(self._out, "isatty", lambda: False)():
            return False
        try:
            import rich  # noqa: F401
        except ImportError:  # pragma: no cover - rich comes with the cli extra
            return False
        return True

    def line(self, text: str = "") -> None:
        print(text, file=self._out)

    def json(self, payload: Any) -> None:
        self.line(json_safe(json.dumps(jsonable(payload), ensure_ascii=False, indent=2)))

    def emit(
        self,
        payload: Any,
        lines: Sequence[str],
        *,
        columns: Sequence[str] = (),
        rows: Sequence[Sequence[object]] = (),
        title: str | None = None,
    ) -> None:
        """``--json``: the payload; a terminal with rich: a table of ``rows`` (when
        given); otherwise the (already escaped) plain ``lines``."""
        if self.as_json:
            self.json(payload)
        elif columns and rows and self.rich():
            self.table(columns, rows, title=title)
        else:
            for text in lines:
                self.line(text)

    def table(
        self, columns: Sequence[str], rows: Sequence[Sequence[object]], *, title: str | None = None
    ) -> None:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        table = Table(title=Text(shown(title)) if title else None, show_lines=False)
        for c in columns:
            table.add_column(c, overflow="fold", no_wrap=c == "id")
        for r in rows:  # Text, not markup: a stored "[red]" prints as itself
            table.add_row(*(Text(shown("" if v is None else v)) for v in r))
        Console(file=self._out, highlight=False, markup=False, emoji=False).print(table)
