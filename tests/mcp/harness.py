"""The conformance kit's harness for the MCP server: every request is a tool call
through a real fastmcp ``Client`` (in-process), never a call around it to the store.

An entity is a subject, an attribute a predicate (registered single-valued, as a
store serving the kit would be configured); a sourced write is ``remember`` of the
source text, read by a small extractor that knows what each source says. A
sibling is another server over the same database, scoped to another user,
tenant or session."""

from __future__ import annotations

from datetime import datetime

from chronomem import Memory
from chronomem.mcp import build_server
from chronomem_adapters.conformance import (
    Entry,
    HarnessBase,
    KitClock,
    KitExtractor,
    Timed,
    open_scope,
    sibling_scope,
    status_of,
)
from chronomem_adapters.declaration import spec_of
from chronomem_adapters.mcp import ChronomemMCP
from chronomem_adapters.semantics import Semantic, UnsupportedSemantics
from chronomem_adapters.timeselect import parse_instant

from .driver import SyncClient

ATTRIBUTES = ("city", "job")


class MCPHarness(HarnessBase):
    adapter = ChronomemMCP
    siblings = frozenset({"user", "tenant", "session"})

    def __init__(self, root: Memory, clock: KitClock, scope: dict[str, str] | None = None):
        self.root = root
        self.clock = clock
        self.scope, store = open_scope(root, scope, ATTRIBUTES)
        self.extractor = KitExtractor()  # reads the fact ``expected`` for a source text
        self.client = SyncClient(build_server(store, extractor=self.extractor))
        self.children: list[MCPHarness] = []

    def close(self) -> None:
        for child in self.children:
            child.close()
        self.client.close()

    @staticmethod
    def _iso(dt: datetime | None) -> str | None:
        return None if dt is None else dt.isoformat()

    def _hits(self, entity: str, attribute: str, **times: datetime | None) -> list[dict]:
        found = self.client.ok(
            "search",
            query=f"{entity} {attribute}",
            k=100,
            include_episodes=False,
            **{k: self._iso(v) for k, v in times.items() if v is not None},
        )
        return [
            h["fact"]
            for h in found["hits"]
            if h["fact"]["subject"] == entity and h["fact"]["predicate"] == attribute
        ]

    def write(self, entity: str, attribute: str, value: str) -> None:
        self.client.ok("remember_fact", subject=entity, predicate=attribute, object=value)

    def end(self, entity: str, attribute: str) -> None:
        self.client.ok("end", subject=entity, predicate=attribute)

    def delete(self, entity: str, attribute: str) -> None:
        for f in self._hits(entity, attribute):
            self.client.ok("forget", fact_id=f["fact_id"])

    def read(self, entity: str, attribute: str) -> list[str]:
        return [f["object"] for f in self._hits(entity, attribute)]

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        return [
            f["object"] for f in self._hits(entity, attribute, valid_at=valid_at, known_at=known_at)
        ]

    def _entries(self, entity: str, attribute: str, audit: bool) -> list[Entry]:
        found = self.client.ok(
            "history", subject=entity, predicate=attribute, include_retracted=audit
        )["facts"]
        return [
            Entry(
                f["object"],
                status_of(f["state"]),
                parse_instant(f["valid_from"], "valid_from"),
                parse_instant(f["valid_to"], "valid_to"),
            )
            for f in found
        ]

    def history(self, entity: str, attribute: str) -> list[Entry]:
        return self._entries(entity, attribute, audit=False)

    def audit(self, entity: str, attribute: str) -> list[Entry]:
        return self._entries(entity, attribute, audit=True)

    def erase(self, entity: str, attribute: str) -> None:
        r = self.client.call("erase", subject=entity, predicate=attribute)
        text = self.client.text(r)
        if r.isError and "Unknown tool" in text:  # the server refused: it has no erase tool
            spec = spec_of(self.adapter)
            raise UnsupportedSemantics(Semantic.ERASURE, spec.name, text)
        raise AssertionError(f"an erase tool answered: {text}")

    def write_with_source(self, entity: str, attribute: str, value: str, source: str) -> None:
        self.extractor.expected[source] = (entity, attribute, value)
        self.client.ok("remember", text=source)

    def provenance(self, entity: str, attribute: str) -> list[str]:
        texts = []
        for f in self._hits(entity, attribute):
            why = self.client.ok("why", fact_id=f["fact_id"])
            texts += [e["text"] for e in why["episodes"]]
        return texts

    def read_timed(self, entity: str, attribute: str) -> list[Timed]:
        return [
            Timed(
                f["object"],
                parse_instant(f["valid_from"], "valid_from"),
                parse_instant(f["valid_to"], "valid_to"),
            )
            for f in self._hits(entity, attribute)
        ]

    def sibling(self, kind: str, name: str) -> MCPHarness:
        child = MCPHarness(self.root, self.clock, sibling_scope(kind, name))
        self.children.append(child)
        return child
