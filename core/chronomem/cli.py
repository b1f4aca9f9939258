"""``chronomem``: look into a store from the shell (needs ``chronomem[cli]``).

chronomem --url memory.db facts --subject alice --as-of 2026-06-01
chronomem --url memory.db history alice lives_in --known-at 2026-05-01T12:00Z
chronomem --url postgresql+psycopg://… why 3f2a…
chronomem --url memory.db stats --json
"""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import datetime, timezone
from typing import Any

try:
    import click
except ImportError:  # pragma: no cover - exercised only without the extra
    click = None  # type: ignore[assignment]

from .errors import ChronomemError
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
        f"{f.id}  {f.subject} | {f.predicate} | {f.object}  "
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
        mem = Memory(url, tenant=tenant, user=user, agent=agent, session=session)
        ctx.call_on_close(mem.close)
        ctx.obj = {"mem": mem, "json": as_json}

    def emit(ctx: Any, payload: Any, lines: list[str]) -> None:
        if ctx.obj["json"]:
            click.echo(json.dumps(_jsonable(payload), ensure_ascii=False, indent=2))
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
            *(f"  [{e.occurred_at.isoformat()}] {e.role or '-'}: {e.text}" for e in p.episodes),
        ]
        lines += [f"extractors: {', '.join(p.extractors) or '-'}"]
        lines += ["superseded:", *(f"  {_fact_row(f)}" for f in p.superseded)]
        emit(ctx, p, lines)

    @cli.command()
    @click.pass_context
    def stats(ctx: Any) -> None:
        """Counts of facts, versions and episodes in this scope."""
        s = ctx.obj["mem"].stats()
        emit(ctx, s, [f"{k}: {v}" for k, v in dataclasses.asdict(s).items()])

    return cli


def main(argv: list[str] | None = None) -> int:
    if click is None:
        print("the chronomem CLI needs click: pip install 'chronomem[cli]'", file=sys.stderr)
        return 2
    try:
        _build().main(args=argv, prog_name="chronomem", standalone_mode=False)
    except click.exceptions.Abort:
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (ChronomemError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
