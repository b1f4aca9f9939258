"""The conformance-kit harness for ``ChronomemStore`` (see
``chronomem_adapters.conformance``): every request goes through LangGraph's
``BaseStore`` API plus the store's own ``as_of`` / ``history`` / ``erase``.

An entity is the namespace ``("kit", entity)``; its attributes are the fields
of the item ``"profile"`` there. Siblings are the same database seen from
another chronomem scope (user, tenant or session)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from chronomem import Memory, State
from chronomem_adapters.conformance import (
    BASE_SCOPE,
    KitClock,
    NotExpressible,
    Version,
    VersionsHarness,
    sibling_scope,
)

from .store import ChronomemStore

KEY = "profile"


class LangGraphHarness(VersionsHarness):
    adapter = ChronomemStore
    siblings = frozenset({"user", "tenant", "session"})

    def __init__(self, root: Memory, clock: KitClock, scope: dict[str, str] | None = None):
        self.root = root
        self.clock = clock
        self.scope = dict(scope or BASE_SCOPE)
        self.store = ChronomemStore(root.scoped(**self.scope))

    @staticmethod
    def _ns(entity: str) -> tuple[str, ...]:
        return ("kit", entity)

    def _value(self, store: ChronomemStore, entity: str) -> dict[str, Any]:
        item = store.get(self._ns(entity), KEY)
        return dict(item.value) if item is not None else {}

    def write(self, entity: str, attribute: str, value: str) -> None:
        current = self._value(self.store, entity)
        self.store.put(self._ns(entity), KEY, {**current, attribute: value})

    def end(self, entity: str, attribute: str) -> None:
        current = self._value(self.store, entity)
        current.pop(attribute, None)
        self.store.put(self._ns(entity), KEY, current)

    def delete(self, entity: str, attribute: str) -> None:
        self.store.delete(self._ns(entity), KEY)

    def read(self, entity: str, attribute: str) -> list[str]:
        value = self._value(self.store, entity)
        return [value[attribute]] if attribute in value else []

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        view = self.store.as_of(valid_at=valid_at, known_at=known_at)
        value = self._value(view, entity)
        return [value[attribute]] if attribute in value else []

    def versions(self, entity: str, attribute: str, states: Sequence[str]) -> list[Version]:
        audit = State.RETRACTED in states
        found = self.store.history(self._ns(entity), KEY, attribute, include_retracted=audit)
        return [(v.value, v.state, v.valid_from, v.valid_to) for v in found]

    def erase(self, entity: str, attribute: str) -> None:
        self.store.erase(self._ns(entity), KEY)

    def provenance(self, entity: str, attribute: str) -> list[str]:
        raise NotExpressible("BaseStore items carry no sources, and put() takes none")

    def read_timed(self, entity: str, attribute: str) -> list[Any]:
        raise NotExpressible("BaseStore's Item has created_at/updated_at, no validity interval")

    def transcript(self) -> list[tuple[str, str]]:
        raise NotExpressible("a BaseStore is a document store, not a message log")

    def find(self, prefix: str) -> set[str]:
        found = self.store.search(self._ns(prefix), limit=10_000)
        return {item.namespace[1] for item in found}

    def sibling(self, kind: str, name: str) -> LangGraphHarness:
        return LangGraphHarness(self.root, self.clock, sibling_scope(kind, name))
