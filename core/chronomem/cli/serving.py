"""``chronomem mcp``: serve the store to MCP clients (needs ``chronomem[mcp]``).

stdio by default (a desktop client starts the command itself); ``--transport
http`` serves streamable HTTP on 127.0.0.1 only, refusing requests without
``--token`` (or ``CHRONOMEM_MCP_TOKEN``) when one is set. The scope flags of
the group (``--tenant/--user/--agent/--session``) are the clients' scope."""

from __future__ import annotations

from typing import Any

import click

HOST = "127.0.0.1"


def register(cli: Any) -> None:
    @cli.command()
    @click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
                  show_default=True, help="stdio, or streamable HTTP on 127.0.0.1")  # fmt: skip
    @click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True,
                  help="HTTP port (127.0.0.1 only)")  # fmt: skip
    @click.option("--token", envvar="CHRONOMEM_MCP_TOKEN", default=None,
                  help="HTTP bearer token the clients must send (env CHRONOMEM_MCP_TOKEN); "
                  "it grants this command's scope")  # fmt: skip
    @click.option("--read-log", is_flag=True,
                  help="log every read, tagged with the MCP session and request ids")  # fmt: skip
    @click.pass_context
    def mcp(ctx: Any, transport: str, port: int, token: str | None, read_log: bool) -> None:
        """Serve this store to MCP clients (tools, memory:// resources, timeline picture)."""
        s = ctx.obj
        if transport != "http":
            if ctx.get_parameter_source("token") is click.core.ParameterSource.COMMANDLINE:
                raise click.UsageError("--token applies to --transport http only")
            token = None  # stdio has no requests to authenticate: the env var is for HTTP
        try:
            from ..mcp import build_server
        except ImportError as exc:
            raise click.ClickException(
                f"chronomem mcp needs fastmcp: pip install 'chronomem[mcp]' ({exc})"
            ) from None
        server = build_server(
            s.memory(create=True), read_log=read_log, tokens={token: {}} if token else None
        )
        if transport == "http":
            server.run(transport="http", host=HOST, port=port, show_banner=False)
        else:
            server.run(transport="stdio", show_banner=False)
