"""The served-read log from the shell: ``reads`` (what was served, by run or tag)
and ``replay`` (what one read returned, as of its instant). Reads are logged by
stores opened with ``read_log=True`` (``chronomem mcp --read-log`` tags each
with ``run``/``mcp_session`` = the MCP session id and ``mcp_request``)."""

from __future__ import annotations

from typing import Any

import click

from .output import fact_row, parse_instant, shown


def _tag(pairs: tuple[str, ...]) -> dict[str, str] | None:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--tag")
        out[key] = value
    return out or None


def register(cli: Any) -> None:
    @cli.command()
    @click.option("--run", help="only the reads of this run (an MCP session id, …)")
    @click.option("--tag", "tags", multiple=True, help="KEY=VALUE the read was tagged with")
    @click.option("--op", type=click.Choice(["facts", "search", "recall"]))
    @click.option("--since", help="logged at or after (ISO 8601)")
    @click.option("--limit", type=click.IntRange(1), help="the first N")
    @click.pass_obj
    def reads(s: Any, run: str | None, tags: tuple[str, ...], op: str | None,
              since: str | None, limit: int | None) -> None:  # fmt: skip
        """The logged reads of this scope, oldest first: what an agent was served."""
        found = s.memory().reads(run=run, tag=_tag(tags), op=op, since=parse_instant(since),
                                 limit=limit)  # fmt: skip
        lines = [
            f"{shown(r.id)}  {r.at.isoformat()}  {r.op}  {len(r.items)} item(s)  "
            + " ".join(f"{shown(k)}={shown(v)}" for k, v in sorted(r.tag.items()))
            for r in found
        ]
        s.out.emit(found, lines or ["(no reads)"])

    @cli.command()
    @click.argument("read_id")
    @click.pass_obj
    def replay(s: Any, read_id: str) -> None:
        """What read READ_ID returned, as of its instant."""
        out = s.memory().replay(read_id)
        if isinstance(out, str):
            s.out.emit({"read_id": read_id, "block": out}, [shown(x) for x in out.split("\n")])
            return
        facts = [getattr(x, "fact", x) for x in out]
        lines = [fact_row(f) for f in facts if f is not None]
        lines += [
            f"episode {shown(x.episode.id)}: {shown(x.episode.text)}"
            for x in out
            if getattr(x, "episode", None) is not None
        ]
        payload = [
            {"score": getattr(x, "score", None), "fact": getattr(x, "fact", x),
             "episode": getattr(x, "episode", None)}
            for x in out
        ]  # fmt: skip
        s.out.emit(payload, lines or ["(nothing was served)"])
