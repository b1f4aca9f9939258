"""Conformance-kit harnesses for the CrewAI adapters (see
``chronomem_adapters.conformance``): every request goes through CrewAI's
``Memory`` API (``remember``/``recall``/``forget``/``list_records``) plus the
adapter's own time arguments and ``erase``.

An entity is the CrewAI scope ``/kit/<entity>``; a write is a remembered text
whose facts a small deterministic extractor reads (``KitExtractor``: the text
is a JSON object naming the entity, attribute and value), so the kit tests the
adapter's plumbing, not the rule extractor's coverage. Siblings are the same
database seen from another chronomem scope (user, tenant or session)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from crewai.memory.types import MemoryRecord

from chronomem import Memory, State
from chronomem.timeutil import instant
from chronomem_adapters.conformance import (
    KitClock,
    KitExtractor,
    Timed,
    Version,
    VersionsHarness,
    open_scope,
    sibling_scope,
)

from .memory import ChronomemMemory
from .storage import ChronomemStorage

ATTRIBUTES = ("city", "job")  # single-valued in the kit's world


def _scope(entity: str) -> str:
    return f"/kit/{entity}"


class CrewAIMemoryHarness(VersionsHarness):
    adapter = ChronomemMemory
    siblings = frozenset({"user", "tenant", "session"})

    def __init__(self, root: Memory, clock: KitClock, scope: dict[str, str] | None = None):
        self.root = root
        self.clock = clock
        self.scope, store = open_scope(root, scope, ATTRIBUTES)
        self.extractor = KitExtractor()
        self.memory = ChronomemMemory(memory=store, extractor=self.extractor)

    def write(self, entity: str, attribute: str, value: str) -> None:
        text = json.dumps({"entity": entity, "attribute": attribute, "value": value})
        self.memory.remember(text, scope=_scope(entity))

    def end(self, entity: str, attribute: str) -> None:
        text = json.dumps({"entity": entity, "attribute": attribute, "end": True})
        self.memory.remember(text, scope=_scope(entity))

    def _matches(self, entity: str, attribute: str, **kw: Any) -> list[Any]:
        found = self.memory.recall(f"{entity} {attribute}", scope=_scope(entity), limit=100, **kw)
        return [
            m
            for m in found
            if m.record.metadata.get("kind") == "fact"
            and m.record.metadata.get("subject") == entity
            and m.record.metadata.get("predicate") == attribute
        ]

    def _fact_ids(self, entity: str, attribute: str) -> list[str]:
        return [m.record.id for m in self._matches(entity, attribute)]

    def delete(self, entity: str, attribute: str) -> None:
        self.memory.forget(record_ids=self._fact_ids(entity, attribute))

    def read(self, entity: str, attribute: str) -> list[str]:
        return [m.record.metadata["object"] for m in self._matches(entity, attribute)]

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        found = self._matches(entity, attribute, valid_at=valid_at, known_at=known_at)
        return [m.record.metadata["object"] for m in found]

    def versions(self, entity: str, attribute: str, states: Sequence[str]) -> list[Version]:
        audit = State.RETRACTED in states
        found = self._matches(entity, attribute, include_history=True, include_retracted=audit)
        metas = [m.record.metadata for m in found]
        return [(d["object"], d["state"], d["valid_from"], d["valid_to"]) for d in metas]

    def erase(self, entity: str, attribute: str) -> None:
        found = self._matches(entity, attribute, include_history=True, include_retracted=True)
        self.memory.erase(sorted({m.record.id for m in found}))

    def write_with_source(self, entity: str, attribute: str, value: str, source: str) -> None:
        self.extractor.expected[source] = (entity, attribute, value)
        self.memory.remember(source, scope=_scope(entity))

    def provenance(self, entity: str, attribute: str) -> list[str]:
        return [
            t for m in self._matches(entity, attribute) for t in m.record.metadata["source_texts"]
        ]

    def read_timed(self, entity: str, attribute: str) -> list[Timed]:
        return [
            Timed(
                m.record.metadata["object"],
                instant(m.record.metadata["valid_from"], "valid_from"),
                instant(m.record.metadata["valid_to"], "valid_to"),
            )
            for m in self._matches(entity, attribute)
        ]

    def find(self, prefix: str) -> set[str]:
        records = self.memory.list_records(scope=_scope(prefix), limit=1000)
        return {r.scope.split("/", 2)[2] for r in records if r.scope.startswith("/kit/")}

    def sibling(self, kind: str, name: str) -> CrewAIMemoryHarness:
        return CrewAIMemoryHarness(self.root, self.clock, sibling_scope(kind, name))


def kit_embedder(texts: list[str]) -> list[list[float]]:
    """A deterministic offline embedder (chronomem's hashing embedder, 64 dims)."""
    from chronomem.embedding import HashingEmbedder

    return [list(map(float, row)) for row in HashingEmbedder(64).embed(texts)]


class CrewAIStorageHarness(VersionsHarness):
    """An entity's attribute is the record ``<entity>/<attribute>`` in scope
    ``/kit/<entity>``, written with ``save``/``update`` as CrewAI's ``Memory`` does."""

    adapter = ChronomemStorage
    siblings = frozenset({"user", "tenant", "session"})

    def __init__(self, storage: ChronomemStorage, clock: KitClock):
        self.storage = storage
        self.clock = clock

    @staticmethod
    def _id(entity: str, attribute: str) -> str:
        return f"{entity}/{attribute}"

    def write(self, entity: str, attribute: str, value: str) -> None:
        record = MemoryRecord(
            id=self._id(entity, attribute),
            content=value,
            scope=_scope(entity),
            embedding=kit_embedder([value])[0],
        )
        self.storage.update(record)

    def end(self, entity: str, attribute: str) -> None:
        self.storage.end([self._id(entity, attribute)])

    def delete(self, entity: str, attribute: str) -> None:
        self.storage.delete(record_ids=[self._id(entity, attribute)])

    def read(self, entity: str, attribute: str) -> list[str]:
        r = self.storage.get_record(self._id(entity, attribute))
        return [r.content] if r is not None else []

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        r = self.storage.as_of(valid_at=valid_at, known_at=known_at).get_record(
            self._id(entity, attribute)
        )
        return [r.content] if r is not None else []

    def versions(self, entity: str, attribute: str, states: Sequence[str]) -> list[Version]:
        audit = State.RETRACTED in states
        found = self.storage.history(self._id(entity, attribute), include_retracted=audit)
        return [(v.record.content, v.state, v.valid_from, v.valid_to) for v in found]

    def erase(self, entity: str, attribute: str) -> None:
        self.storage.erase([self._id(entity, attribute)])

    def find(self, prefix: str) -> set[str]:
        records = self.storage.list_records(scope_prefix=_scope(prefix), limit=10_000)
        return {r.scope.split("/", 2)[2] for r in records if r.scope.startswith("/kit/")}

    def sibling(self, kind: str, name: str) -> CrewAIStorageHarness:
        return CrewAIStorageHarness(self.storage.scoped(**sibling_scope(kind, name)), self.clock)
