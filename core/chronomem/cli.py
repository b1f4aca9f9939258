"""``chronomem``: look into a store from the shell (needs ``chronomem[cli]``).

chronomem --url memory.db facts --subject alice --as-of 2026-06-01
chronomem --url memory.db history alice lives_in --known-at 2026-05-01T12:00Z
chronomem --url postgresql+psycopg://… why 3f2a…
chronomem --url memory.db stats --json
chronomem --url memory.db doctor [--repair]
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import unicodedata
from datetime import datetime, timezone
from typing import Any

try:
    import click
except ImportError:  # pragma: no cover - exercised only without the extra
    click = None  # type: ignore[assignment]

from .errors import ChronomemError, StoreUnavailable
from .memory import Memory
from .model import Fact


def parse_instant(value: str | None) -> datetime | None:
    """ISO 8601; a date or a time without an offset is read as UTC (said, not guessed:
    the CLI documents it, unlike the API, which refuses naive datetimes)."""
    if value is None:
        return None
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    dt = datetime.fromisoformat(text)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


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


_UNSAFE = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells astral characters
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _json_safe(text: str) -> str:
    """JSON escapes C0 controls itself; escape the rest a terminal could act on
    (C1 controls, bidi/format characters, line separators) as ``\\uXXXX``."""
    return "".join(
        _json_escape(ch) if ord(ch) >= 0x7F and unicodedata.category(ch) in _UNSAFE else ch
        for ch in text
    )


def sqlite_file(url: str) -> str | None:
    """The file a SQLite URL or bare path names (None: in memory, or not SQLite)."""
    if url in ("", ":memory:", "sqlite://", "sqlite:///:memory:"):
        return None
    if url.startswith("sqlite"):
        from sqlalchemy.engine import make_url

        db = make_url(url).database
        return db if db and db != ":memory:" and not db.startswith("file:") else None
    return None if "://" in url else url


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, datetime):
        return obj.isoformat()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {k: _jsonable(v) for k, v in dataclasses.asdict(obj).items()}
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "value"):
        return obj.value
    return obj


def _fact_row(f: Fact) -> str:
    until = f.valid_to.isoformat() if f.valid_to else "…"
    return (
        f"{shown(f.id)}  {shown(f.subject)} | {shown(f.predicate)} | {shown(f.object)}  "
        f"[{f.valid_from.isoformat()} → {until})  {f.state.value}"
        f"  recorded {f.recorded_at.isoformat()}"
    )


def _build() -> Any:
    assert click is not None

    time_options = [
        click.option("--valid-at", help="valid instant (ISO 8601; default now)"),
        click.option("--known-at", help="belief instant (ISO 8601; default: latest)"),
        click.option("--as-of", help="both clocks at once"),
    ]

    def with_time(f: Any) -> Any:
        for opt in reversed(time_options):
            f = opt(f)
        return f

    @click.group()
    @click.option("--url", envvar="CHRONOMEM_URL", default="memory.db", show_default=True,
                  help="database URL or SQLite file path")  # fmt: skip
    @click.option("--tenant", default=None)
    @click.option("--user", default=None)
    @click.option("--agent", default=None)
    @click.option("--session", default=None)
    @click.option("--json", "as_json", is_flag=True, help="machine-readable output")
    @click.pass_context
    def cli(ctx: Any, url: str, tenant: str | None, user: str | None, agent: str | None,
            session: str | None, as_json: bool) -> None:  # fmt: skip
        """Inspect a chronomem store: facts, history, provenance, stats."""
        path = sqlite_file(url)
        if path is not None and not os.path.isfile(path):
            # an inspection never creates a store: a mistyped --url would show an empty one
            raise StoreUnavailable(
                f"no chronomem database at {shown(path)!r}: check --url (or CHRONOMEM_URL); "
                "the CLI never creates a database"
            )
        mem = Memory(url, tenant=tenant, user=user, agent=agent, session=session)
        ctx.call_on_close(mem.close)
        ctx.obj = {"mem": mem, "json": as_json}

    def emit(ctx: Any, payload: Any, lines: list[str]) -> None:
        if ctx.obj["json"]:
            click.echo(_json_safe(json.dumps(_jsonable(payload), ensure_ascii=False, indent=2)))
        else:
            for line in lines:
                click.echo(line)

    @cli.command()
    @click.option("--subject")
    @click.option("--predicate")
    @click.option("--state", "states", multiple=True,
                  type=click.Choice(["live", "ended", "scheduled", "retracted"]))  # fmt: skip
    @with_time
    @click.pass_context
    def facts(ctx: Any, subject: str | None, predicate: str | None, states: tuple[str, ...],
              valid_at: str | None, known_at: str | None, as_of: str | None) -> None:  # fmt: skip
        """Facts at a valid instant as believed at a belief instant."""
        found = ctx.obj["mem"].facts(
            subject=subject, predicate=predicate, states=states or None,
            valid_at=parse_instant(valid_at), known_at=parse_instant(known_at), as_of=parse_instant(as_of),
        )  # fmt: skip
        emit(ctx, found, [_fact_row(f) for f in found] or ["(no facts)"])

    @cli.command()
    @click.argument("subject")
    @click.argument("predicate", required=False)
    @click.option("--known-at", help="belief instant (ISO 8601; default: latest)")
    @click.pass_context
    def history(ctx: Any, subject: str, predicate: str | None, known_at: str | None) -> None:
        """Every value a subject's predicate had, in valid-time order."""
        found = ctx.obj["mem"].history(subject, predicate, known_at=parse_instant(known_at))
        emit(ctx, found, [_fact_row(f) for f in found] or ["(no history)"])

    @cli.command()
    @click.argument("fact_id")
    @click.pass_context
    def why(ctx: Any, fact_id: str) -> None:
        """Where a fact came from: versions, source episodes, extractors, what it replaced."""
        p = ctx.obj["mem"].why(fact_id)
        lines = ["versions:", *(f"  {_fact_row(f)}" for f in p.versions)]
        lines += [
            "episodes:",
            *(
                f"  [{e.occurred_at.isoformat()}] {shown(e.role or '-')}: {shown(e.text)}"
                for e in p.episodes
            ),
        ]
        lines += [f"extractors: {', '.join(shown(x) for x in p.extractors) or '-'}"]
        lines += ["superseded:", *(f"  {_fact_row(f)}" for f in p.superseded)]
        emit(ctx, p, lines)

    @cli.command()
    @click.pass_context
    def stats(ctx: Any) -> None:
        """Counts of facts, versions and episodes in this scope."""
        s = ctx.obj["mem"].stats()
        emit(ctx, s, [f"{k}: {shown(v)}" for k, v in dataclasses.asdict(s).items()])

    @cli.command()
    @click.option("--repair", is_flag=True,
                  help="rebuild damaged text indexes and delete orphan links/vectors")  # fmt: skip
    @click.pass_context
    def doctor(ctx: Any, repair: bool) -> None:
        """Check the whole database for damage (text indexes, invariant I1, orphans);
        exit status 1 when a problem remains."""
        report = ctx.obj["mem"].check(repair=repair)
        emit(ctx, {**dataclasses.asdict(report), "ok": report.ok}, report.lines())
        if not report.ok:
            ctx.exit(1)

    return cli


def main(argv: list[str] | None = None) -> int:
    if click is None:
        print("the chronomem CLI needs click: pip install 'chronomem[cli]'", file=sys.stderr)
        return 2
    try:
        code = _build().main(args=argv, prog_name="chronomem", standalone_mode=False)
    except click.exceptions.Abort:
        return 1
    except click.ClickException as exc:  # usage errors quote the arguments: escape them
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            print(ctx.get_usage(), file=sys.stderr)
        print(f"error: {shown(exc.format_message())}", file=sys.stderr)
        return exc.exit_code
    except (ChronomemError, ValueError) as exc:
        print(f"error: {shown(exc)}", file=sys.stderr)
        return 2
    return code if isinstance(code, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
