"""Conformance-kit harnesses (``chronomem_adapters.conformance``) for the
LlamaIndex classes.

``MemoryHarness`` drives ``ChronomemMemory`` through ``BaseMemory`` only:
a write is a user message put into the memory, a read is ``get(input=…)``
and the facts recalled in its system message. So that the kit tests the
memory and not the English of the rule extractor, the harness gives the
memory ``KitExtractor``, which reads kit messages (a JSON object naming the
entity, attribute and value) exactly; everything else (``put``, extraction
through ``Memory.add``, recall, time keywords, transcript) is the real path.
Siblings: another user and another tenant. Sessions of one user share the
user's facts by design (that is what "remembered across sessions" means);
their transcripts are isolated, which the package's own tests check.

``RetrieverHarness`` drives ``ChronomemRetriever``: it only reads, so the
kit's writes go to the store it reads (``Memory.remember``/``end``/
``retract``), and every read is a ``retrieve`` with the kit's instants and
``states``; source texts are looked up by the episode ids the nodes carry."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from llama_index.core.base.llms.types import ChatMessage

from chronomem import Cardinality, Memory
from chronomem.render import HEADER_HISTORY, HEADER_LIVE, flatten
from chronomem.timeutil import instant
from chronomem_adapters.conformance import (
    BASE_SCOPE,
    Entry,
    HarnessBase,
    KitClock,
    KitExtractor,
    NotExpressible,
    Status,
    Timed,
    Version,
    VersionsHarness,
    kit_message,
    sibling_scope,
)

from .memory import ChronomemMemory
from .retriever import ChronomemRetriever

BASE_USER = BASE_SCOPE["user"]
BASE_SESSION = BASE_SCOPE["session"]


def recalled_by_section(
    messages: list[ChatMessage], entity: str, attribute: str
) -> list[tuple[str, str]]:
    """``(header, value)`` for each ``entity attribute`` line of a ``get`` result's
    recall block, in the order shown."""
    if not messages or messages[0].role.value != "system":
        return []
    head = f"- {flatten(entity)} {flatten(attribute.replace('_', ' '))} "
    found, section = [], ""
    for line in (messages[0].content or "").splitlines():
        if not line.startswith("- "):
            section = line
        elif line.startswith(head) and line.endswith(")") and " (" in line:
            found.append((section, line[len(head) : line.rindex(" (")]))
    return found


def recalled(messages: list[ChatMessage], entity: str, attribute: str) -> list[str]:
    """The values of ``entity attribute`` in a ``get`` result's recall block."""
    return [value for _, value in recalled_by_section(messages, entity, attribute)]


class MemoryHarness(HarnessBase):
    adapter = ChronomemMemory
    siblings = frozenset({"user", "tenant"})

    def __init__(
        self,
        root: Memory,
        clock: KitClock,
        *,
        tenant: str | None = None,
        user: str = BASE_USER,
        session: str = BASE_SESSION,
    ):
        self.root = root
        self.clock = clock
        self.durable = root.scoped(tenant=tenant, user=user)
        self.memory = ChronomemMemory.from_defaults(
            memory=self.durable, session_id=session, extractor=KitExtractor(), recall_k=50
        )

    def _put(self, text: str) -> None:
        self.memory.put(ChatMessage(role="user", content=text))

    def write(self, entity: str, attribute: str, value: str) -> None:
        self._put(kit_message("set", entity, attribute, value))

    def end(self, entity: str, attribute: str) -> None:
        self._put(kit_message("end", entity, attribute))

    def delete(self, entity: str, attribute: str) -> None:
        raise NotExpressible("BaseMemory has no way to delete one remembered fact")

    def read(self, entity: str, attribute: str) -> list[str]:
        return recalled(self.memory.get(input=f"{entity} {attribute}"), entity, attribute)

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        got = self.memory.get(input=f"{entity} {attribute}", valid_at=valid_at, known_at=known_at)
        return recalled(got, entity, attribute)

    def history(self, entity: str, attribute: str) -> list[Entry]:
        got = self.memory.get(input=f"{entity} {attribute}", include_history=True)
        found = recalled_by_section(got, entity, attribute)
        past = [Entry(v, Status.PAST) for s, v in found if s == HEADER_HISTORY]
        return past + [Entry(v, Status.CURRENT) for s, v in found if s == HEADER_LIVE]

    def erase(self, entity: str, attribute: str) -> None:
        self.memory.erase(subject=entity)

    def read_timed(self, entity: str, attribute: str) -> list[Timed]:
        raise NotExpressible("the recall block shows validity to the day, not the instant")

    def append(self, messages: Sequence[tuple[str, str]]) -> None:
        self.memory.put_messages([ChatMessage(role=r, content=t) for r, t in messages])

    def transcript(self) -> list[tuple[str, str]]:
        return [(m.role.value, m.content or "") for m in self.memory.get_all()]

    def sibling(self, kind: str, name: str) -> MemoryHarness:
        if kind == "user":
            return MemoryHarness(self.root, self.clock, user=name)
        if kind == "tenant":
            return MemoryHarness(self.root, self.clock, tenant=name)
        raise ValueError(f"unknown sibling kind {kind!r}")


class RetrieverHarness(VersionsHarness):
    adapter = ChronomemRetriever
    siblings = frozenset({"user", "tenant", "session"})

    def __init__(self, root: Memory, clock: KitClock, scope: dict[str, str] | None = None):
        self.root = root
        self.clock = clock
        self.scope = dict(scope or BASE_SCOPE)
        self.store = root.scoped(**self.scope)
        self.retriever = ChronomemRetriever(self.store, k=100)
        self._known: set[str] = set()

    def _slot(self, attribute: str) -> None:
        if attribute not in self._known:
            self.store.register_predicate(attribute, cardinality=Cardinality.ONE)
            self._known.add(attribute)

    def write(self, entity: str, attribute: str, value: str) -> None:
        self._slot(attribute)
        self.store.remember(entity, attribute, value)

    def end(self, entity: str, attribute: str) -> None:
        self.store.end(entity, attribute)

    def delete(self, entity: str, attribute: str) -> None:
        for fact in self.store.facts(subject=entity, predicate=attribute):
            self.store.retract(fact.id)

    def _nodes(self, entity: str, attribute: str, **kw: Any) -> list[Any]:
        got = self.retriever.retrieve(f"{entity} {attribute}", **kw)
        return [
            n
            for n in got
            if n.node.metadata.get("subject") == entity
            and n.node.metadata.get("predicate") == attribute
        ]

    def read(self, entity: str, attribute: str) -> list[str]:
        return [n.node.metadata["object"] for n in self._nodes(entity, attribute)]

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        nodes = self._nodes(entity, attribute, valid_at=valid_at, known_at=known_at)
        return [n.node.metadata["object"] for n in nodes]

    def versions(self, entity: str, attribute: str, states: Sequence[str]) -> list[Version]:
        nodes = self._nodes(entity, attribute, states=list(states))
        return [
            (m["object"], m["state"], m["valid_from"], m["valid_to"] or None)
            for m in (n.node.metadata for n in nodes)
        ]

    def erase(self, entity: str, attribute: str) -> None:
        raise NotExpressible("a BaseRetriever only reads")

    def write_with_source(self, entity: str, attribute: str, value: str, source: str) -> None:
        self._slot(attribute)
        episode = self.store.add_episode(source, role="user")
        self.store.remember(entity, attribute, value, source=episode)

    def provenance(self, entity: str, attribute: str) -> list[str]:
        # Nodes name their source episodes; a BaseRetriever has no lookup by id,
        # so the ids are resolved through the store the retriever reads.
        ids = [
            i for n in self._nodes(entity, attribute) for i in n.node.metadata["source_episode_ids"]
        ]
        return [self.store.get_episode(i).text for i in ids]

    def read_timed(self, entity: str, attribute: str) -> list[Timed]:
        return [
            Timed(
                n.node.metadata["object"],
                instant(n.node.metadata["valid_from"], "valid_from"),
                instant(n.node.metadata["valid_to"] or None, "valid_to"),
            )
            for n in self._nodes(entity, attribute)
        ]

    def transcript(self) -> list[tuple[str, str]]:
        raise NotExpressible("a BaseRetriever returns nodes, not a message log")

    def sibling(self, kind: str, name: str) -> RetrieverHarness:
        return RetrieverHarness(self.root, self.clock, sibling_scope(kind, name))
