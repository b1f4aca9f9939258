"""``chronomem``: work with a store from the shell (needs ``chronomem[cli]``; the
timeline picture also ``chronomem[plot]``).

chronomem --url memory.db import dump.jsonl           # or --format mem0 history.db
chronomem --url memory.db search "where does alice live" --explain
chronomem --url memory.db timeline alice lives_in --out alice.png
chronomem --url memory.db correct 3f2a… Berlin
chronomem --url memory.db export --out dump.jsonl
chronomem --url memory.db facts --subject alice --as-of 2026-06-01
chronomem --url memory.db doctor [--repair]
chronomem --url memory.db --user alice mcp        # an MCP server (chronomem[mcp])

Commands that only read (and ``end``/``retract``/``correct``/``erase``/``purge``,
which change what exists) refuse a database that does not exist instead of
creating an empty one; ``remember`` and ``import`` create it. Output: rich tables
on a terminal, plain lines when piped, ``--json`` for scripts; stored text is
always escaped. Times are ISO 8601; without an offset they are UTC."""

from __future__ import annotations

import os
import sys
from typing import Any

try:
    import click
except ImportError:  # pragma: no cover - exercised only without the extra
    click = None  # type: ignore[assignment]

from ..errors import ChronomemError, StoreUnavailable
from ..memory import Memory
from .output import Output, parse_instant, shown

__all__ = ["main", "parse_instant", "shown", "sqlite_file"]


def sqlite_file(url: str) -> str | None:
    """The file a SQLite URL or bare path names (None: in memory, or not SQLite)."""
    if url in ("", ":memory:", "sqlite://", "sqlite:///:memory:"):
        return None
    if url.startswith("sqlite"):
        from sqlalchemy.engine import make_url

        db = make_url(url).database
        return db if db and db != ":memory:" and not db.startswith("file:") else None
    return None if "://" in url else url


class Session:
    """What every command gets: the output, and the store, opened on first use."""

    def __init__(self, url: str, scope: dict[str, str | None], as_json: bool):
        self.url = url
        self.scope = scope
        self.out = Output(as_json)
        self._mem: Memory | None = None

    def memory(self, *, create: bool = False) -> Memory:
        """The store; unless ``create``, a SQLite file that does not exist is refused
        (a mistyped --url would otherwise show, or change, an empty new database)."""
        if self._mem is None:
            path = sqlite_file(self.url)
            if not create and path is not None and not os.path.isfile(path):
                raise StoreUnavailable(
                    f"no chronomem database at {shown(path)!r}: check --url (or CHRONOMEM_URL); "
                    "only remember and import create a database"
                )
            self._mem = Memory(self.url, **self.scope)  # type: ignore[arg-type]
        return self._mem

    def close(self) -> None:
        if self._mem is not None:
            self._mem.close()


PLUGINS = "chronomem.cli"  # entry-point group: commands an installed adapter adds


def _plugins() -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=PLUGINS)}


def _build() -> Any:
    assert click is not None
    from . import moving, reading, served, serving, writing

    class Group(click.Group):
        """Core's commands, and those installed adapters add (``chronomem.cli`` entry
        points, e.g. ``items`` from langgraph-store-chronomem), loaded only when run."""

        def list_commands(self, ctx: Any) -> list[str]:
            return sorted({*super().list_commands(ctx), *_plugins()})

        def get_command(self, ctx: Any, name: str) -> Any:
            found = super().get_command(ctx, name)
            if found is None and name in (plugins := _plugins()):
                found = plugins[name].load()
            return found

    @click.group(cls=Group)
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
        """Work with a chronomem store: write, search, inspect, draw, move in and out."""
        s = Session(url, {"tenant": tenant, "user": user, "agent": agent, "session": session},
                    as_json)  # fmt: skip
        ctx.call_on_close(s.close)
        ctx.obj = s

    reading.register(cli)
    writing.register(cli)
    moving.register(cli)
    serving.register(cli)
    served.register(cli)
    return cli


def main(argv: list[str] | None = None) -> int:
    if click is None:
        print("the chronomem CLI needs click: pip install 'chronomem[cli]'", file=sys.stderr)
        return 2
    try:
        code = _build().main(args=argv, prog_name="chronomem", standalone_mode=False)
    except click.exceptions.Abort:
        print("aborted: nothing was changed", file=sys.stderr)
        return 1
    except click.ClickException as exc:  # usage errors quote the arguments: escape them
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            print(ctx.get_usage(), file=sys.stderr)
        print(f"error: {shown(exc.format_message())}", file=sys.stderr)
        return exc.exit_code
    except (ChronomemError, ValueError, ImportError, OSError) as exc:
        print(f"error: {shown(exc)}", file=sys.stderr)
        return 2
    return code if isinstance(code, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
