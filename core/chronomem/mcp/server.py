"""The MCP server: ``MemoryTools`` registered as fastmcp tools, plus the
``memory://`` resources and the timeline picture.

Each call runs in a worker thread, one at a time per server (the store's
connections are not shared between concurrent calls), inside
``Memory.read_tag(run=<MCP session id>, mcp_session=…, mcp_request=…)``: with the
read log on, ``memory.reads(run=session_id)`` answers what an MCP client was
served. An ``ArgumentError`` or any ``ChronomemError`` becomes an ``isError``
tool result carrying its message (which names the argument); an unexpected
exception an ``isError`` result without internals. Either way the server keeps
serving and nothing was written: every argument is checked before the store is
touched, and each write is one transaction."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ResourceError, ToolError
from fastmcp.server.dependencies import get_access_token
from fastmcp.tools.tool import ToolResult
from fastmcp.utilities.types import Image
from pydantic import Field

from ..errors import ChronomemError
from . import arguments as arg
from .auth import ScopeTokens, token_scope
from .rendering import Result
from .tools import MemoryTools

if TYPE_CHECKING:
    from ..memory import Memory  # the public face; only its type is named here

TOOL_NAMES = (
    "remember",
    "remember_fact",
    "search",
    "recall",
    "history",
    "why",
    "correct",
    "forget",
    "end",
    "timeline",
)

INSTANT = ": an ISO 8601 instant, e.g. 2026-03-03T09:00:00Z (no offset: UTC)"


INSTRUCTIONS = """chronomem: bitemporal memory. Every fact has a valid time (when it was
true in the world) and a transaction time (when this memory learnt it); nothing is
overwritten. Read the present with search/recall; pass as_of (both clocks),
valid_at or known_at to ask what was true, or what was known, at an earlier
instant. history shows every value a subject had; why shows where a fact came
from; correct and forget keep the old value in history."""


def build_server(
    memory: Memory,
    *,
    read_log: bool = False,
    extractor: Any = None,
    tokens: Mapping[str, Mapping[str, str | None]] | None = None,
    name: str = "chronomem",
) -> FastMCP:
    """An MCP server over ``memory`` (its scope is the clients' scope). ``tokens``
    (HTTP only) maps each bearer token to a scope under ``memory``'s, and refuses
    requests without one; ``extractor`` reads facts from ``remember``'s text
    (default: the offline rule extractor)."""
    if read_log:
        memory.read_log = True
    lock = threading.Lock()
    mcp = FastMCP(
        name,
        instructions=INSTRUCTIONS,
        auth=ScopeTokens(tokens) if tokens else None,
        mask_error_details=True,
    )

    # one MemoryTools per client scope (the tokens' scopes are fixed), made at its
    # first call, not at every call
    views: dict[tuple[tuple[str, str | None], ...], MemoryTools] = {}

    def tools_for_request() -> MemoryTools:
        token = get_access_token() if tokens else None
        scope = token_scope(token.claims) if token is not None else {}
        key = tuple(sorted(scope.items()))
        tools = views.get(key)
        if tools is None:
            view = memory.scoped(**scope) if scope else memory
            tools = views[key] = MemoryTools(view, extractor=extractor)
        return tools

    async def run(
        ctx: Context | None, call: Callable[[MemoryTools], Any], error: type[Exception] = ToolError
    ) -> Any:
        tools = tools_for_request()
        tag = {}
        if ctx is not None and ctx.request_context is not None:
            tag = {
                "run": ctx.session_id,
                "mcp_session": ctx.session_id,
                "mcp_request": ctx.request_id,
            }

        def work() -> Any:
            with lock, memory.read_tag(**tag):
                return call(tools)

        try:
            return await anyio.to_thread.run_sync(work)
        except ChronomemError as exc:  # ArgumentError included: the message names it
            raise error(str(exc)) from None

    def answer(r: Result) -> ToolResult:
        return ToolResult(content=r.text, structured_content=r.data)

    @mcp.tool(annotations={"readOnlyHint": False, "idempotentHint": False})
    async def remember(
        text: Annotated[
            str,
            Field(
                description="what was said or read; facts are extracted from it offline",
                max_length=arg.MAX_TEXT,
            ),
        ],
        occurred_at: Annotated[
            str | None,
            Field(description="when it was said (default: now)" + INSTANT, max_length=64),
        ] = None,
        ctx: Context | None = None,
    ) -> ToolResult:
        """Store a text as an episode and extract the facts it states."""
        return answer(await run(ctx, lambda t: t.remember(text, occurred_at)))

    @mcp.tool(name="remember_fact")
    async def remember_fact(
        subject: Annotated[
            str, Field(description="who or what the fact is about", max_length=arg.MAX_NAME)
        ],
        predicate: Annotated[
            str, Field(description="the relation, e.g. lives_in, works_at", max_length=arg.MAX_NAME)
        ],
        object: Annotated[str, Field(description="the value", max_length=arg.MAX_NAME)],
        valid_from: Annotated[
            str | None,
            Field(description="when it became true (default: now)" + INSTANT, max_length=64),
        ] = None,
        valid_to: Annotated[
            str | None,
            Field(
                description="when it stops being true (default: the next change)" + INSTANT,
                max_length=64,
            ),
        ] = None,
        ctx: Context | None = None,
    ) -> ToolResult:
        """Assert subject predicate object over a valid-time interval."""
        return answer(
            await run(
                ctx, lambda t: t.remember_fact(subject, predicate, object, valid_from, valid_to)
            )
        )

    @mcp.tool(annotations={"readOnlyHint": True})
    async def search(
        query: Annotated[str, Field(description="what to look for", max_length=arg.MAX_NAME)],
        k: Annotated[int, Field(description="how many hits", ge=1, le=arg.MAX_K)] = 10,
        as_of: Annotated[
            str | None,
            Field(
                description="read both clocks at this instant (not with valid_at/known_at)"
                + INSTANT,
                max_length=64,
            ),
        ] = None,
        valid_at: Annotated[
            str | None,
            Field(
                description="what was true in the world then (default: now)" + INSTANT,
                max_length=64,
            ),
        ] = None,
        known_at: Annotated[
            str | None,
            Field(
                description="as this memory believed it then (default: latest)" + INSTANT,
                max_length=64,
            ),
        ] = None,
        include_episodes: Annotated[bool, Field(description="search stored texts too")] = True,
        ctx: Context | None = None,
    ) -> ToolResult:
        """Hybrid search of facts (and episodes), each hit with both clocks and its state."""
        return answer(
            await run(
                ctx, lambda t: t.search(query, k, as_of, valid_at, known_at, include_episodes)
            )
        )

    @mcp.tool(annotations={"readOnlyHint": True})
    async def recall(
        query: Annotated[
            str, Field(description="what the answer is about", max_length=arg.MAX_NAME)
        ],
        as_of: Annotated[
            str | None,
            Field(
                description="recall what was true and known at this instant" + INSTANT,
                max_length=64,
            ),
        ] = None,
        ctx: Context | None = None,
    ) -> ToolResult:
        """A prompt-ready block of the facts relevant to query, with their validity."""
        return answer(await run(ctx, lambda t: t.recall(query, as_of)))

    @mcp.tool(annotations={"readOnlyHint": True})
    async def history(
        subject: Annotated[str, Field(description="whose history", max_length=arg.MAX_NAME)],
        predicate: Annotated[
            str | None, Field(description="only this relation", max_length=arg.MAX_NAME)
        ] = None,
        include_retracted: Annotated[
            bool, Field(description="also values retracted as wrong (forget/correct)")
        ] = False,
        ctx: Context | None = None,
    ) -> ToolResult:
        """Every value the subject's predicate had, in valid-time order, with its state."""
        return answer(await run(ctx, lambda t: t.history(subject, predicate, include_retracted)))

    @mcp.tool(annotations={"readOnlyHint": True})
    async def why(
        fact_id: Annotated[
            str,
            Field(
                description="the fact_id a search or history result gave", max_length=arg.MAX_NAME
            ),
        ],
        ctx: Context | None = None,
    ) -> ToolResult:
        """Where a fact came from: its versions, source episodes, extractors, what it replaced."""
        return answer(await run(ctx, lambda t: t.why(fact_id)))

    @mcp.tool
    async def correct(
        fact_id: Annotated[str, Field(description="the fact to correct", max_length=arg.MAX_NAME)],
        object: Annotated[
            str,
            Field(description="the right value, over the same valid time", max_length=arg.MAX_NAME),
        ],
        ctx: Context | None = None,
    ) -> ToolResult:
        """The record was wrong: retract the fact and assert the right value in one write."""
        return answer(await run(ctx, lambda t: t.correct(fact_id, object)))

    @mcp.tool(annotations={"destructiveHint": False})
    async def forget(
        fact_id: Annotated[str, Field(description="the fact to retract", max_length=arg.MAX_NAME)],
        ctx: Context | None = None,
    ) -> ToolResult:
        """Retract a fact recorded by mistake (history keeps it, labelled retracted)."""
        return answer(await run(ctx, lambda t: t.forget(fact_id)))

    @mcp.tool
    async def end(
        subject: Annotated[str, Field(description="who or what", max_length=arg.MAX_NAME)],
        predicate: Annotated[
            str, Field(description="the relation that stopped holding", max_length=arg.MAX_NAME)
        ],
        object: Annotated[
            str | None,
            Field(
                description="only this value (default: the current one)", max_length=arg.MAX_NAME
            ),
        ] = None,
        at: Annotated[
            str | None,
            Field(description="when it stopped being true (default: now)" + INSTANT, max_length=64),
        ] = None,
        ctx: Context | None = None,
    ) -> ToolResult:
        """The world changed with no successor: the value stops holding at `at`."""
        return answer(await run(ctx, lambda t: t.end(subject, predicate, object, at)))

    @mcp.tool(annotations={"readOnlyHint": True})
    async def timeline(
        subject: Annotated[str, Field(description="whose timeline", max_length=arg.MAX_NAME)],
        predicate: Annotated[
            str | None, Field(description="only this relation", max_length=arg.MAX_NAME)
        ] = None,
        ctx: Context | None = None,
    ) -> ToolResult:
        """Every version of the subject's facts on both clocks, as a PNG picture and text."""
        r, png = await run(ctx, lambda t: t.timeline(subject, predicate))
        picture = Image(data=png, format="png").to_image_content()
        return ToolResult(content=[r.text, picture], structured_content=r.data)

    @mcp.resource("memory://facts", mime_type="application/json")
    async def current_facts(ctx: Context | None = None) -> dict[str, Any]:
        """The facts live now in this scope (at most 1,000; use search for more)."""
        r = await run(ctx, lambda t: t.facts(), ResourceError)
        return r.data

    @mcp.resource("memory://history/{subject}", mime_type="application/json")
    async def subject_history(subject: str, ctx: Context | None = None) -> dict[str, Any]:
        """Every value each of the subject's predicates had, with both clocks and state."""
        r = await run(ctx, lambda t: t.history(subject), ResourceError)
        return r.data

    return mcp
