"""Conformance-kit harnesses for the LangChain classes (see ``chronomem_adapters.conformance``).

Reads go through LangChain's own API: the retriever's ``invoke`` (with its
per-call ``valid_at``/``known_at``/``states`` keywords), the chat history's
``messages``/``add_messages``/``clear``, and the middleware's injected recall
block as a fake chat model receives it inside a real ``create_agent`` run.

Writes of *facts* go through the adapter's ``memory`` handle
(``Memory.remember``/``end``/``retract``/``erase``): a LangChain retriever and
a middleware have no write verb for a given fact (the middleware writes what
its extractor reads from a conversation, which is not a way to set "ada's city
is Paris" exactly). An entity is a subject, an attribute a predicate
registered as single-valued."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import Field

from chronomem import Memory
from chronomem.identity import fold
from chronomem.timeutil import instant
from chronomem_adapters.conformance import (
    BASE_SCOPE,
    HarnessBase,
    KitClock,
    NotExpressible,
    Timed,
    Version,
    VersionsHarness,
    sibling_scope,
)

from .history import ChronomemChatMessageHistory
from .middleware import RECALL_ID, ChronomemMiddleware
from .retriever import ChronomemRetriever

ATTRIBUTES = ("city", "job")  # the kit's attributes: single-valued predicates


class _FactHarness(HarnessBase):
    """Fact writes through the adapter's ``memory`` handle (see the module docstring)."""

    siblings = frozenset({"user", "tenant", "session"})

    def __init__(self, root: Memory, clock: KitClock, scope: dict[str, str] | None = None):
        self.root = root
        self.clock = clock
        self.scope = dict(scope or BASE_SCOPE)
        self.memory = root.scoped(**self.scope)
        for name in ATTRIBUTES:  # per tenant: a sibling tenant registers its own
            self.memory.register_predicate(name, cardinality="one")

    def write(self, entity: str, attribute: str, value: str) -> None:
        self.memory.remember(entity, attribute, value)

    def end(self, entity: str, attribute: str) -> None:
        self.memory.end(entity, attribute)

    def write_with_source(self, entity: str, attribute: str, value: str, source: str) -> None:
        episode = self.memory.add_episode(source, role="user")
        self.memory.remember(entity, attribute, value, source=episode)


class RetrieverHarness(_FactHarness, VersionsHarness):
    """``ChronomemRetriever``: every read is ``invoke(f"{entity} {attribute}", ...)``,
    filtered to the entity's attribute by the documents' metadata."""

    adapter = ChronomemRetriever

    def __init__(self, root: Memory, clock: KitClock, scope: dict[str, str] | None = None):
        super().__init__(root, clock, scope)
        self.retriever = ChronomemRetriever(memory=self.memory, k=50)

    def _docs(self, entity: str, attribute: str, **kw: Any) -> list[Any]:
        docs = self.retriever.invoke(f"{entity} {attribute}", **kw)
        return [
            d
            for d in docs
            if d.metadata.get("kind") == "fact"
            and fold(d.metadata["subject"]) == fold(entity)
            and d.metadata["predicate"] == attribute
        ]

    def _values(self, entity: str, attribute: str, **kw: Any) -> list[str]:
        return [d.metadata["object"] for d in self._docs(entity, attribute, **kw)]

    def delete(self, entity: str, attribute: str) -> None:
        for fact in self.memory.facts(subject=entity, predicate=attribute):
            self.memory.retract(fact.id)

    def read(self, entity: str, attribute: str) -> list[str]:
        return self._values(entity, attribute)

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        return self._values(entity, attribute, valid_at=valid_at, known_at=known_at)

    def versions(self, entity: str, attribute: str, states: Sequence[str]) -> list[Version]:
        docs = self._docs(entity, attribute, states=list(states))
        return [
            (m["object"], m["state"], m["valid_from"], m["valid_to"] or None)
            for m in (d.metadata for d in docs)
        ]

    def erase(self, entity: str, attribute: str) -> None:
        raise NotExpressible("a LangChain retriever only reads (erase is Memory.erase)")

    def provenance(self, entity: str, attribute: str) -> list[str]:
        # The documents name their source episodes; LangChain's retriever API has
        # no lookup by id, so the ids are resolved through the adapter's memory.
        ids = [i for d in self._docs(entity, attribute) for i in d.metadata["source_episode_ids"]]
        return [self.memory.get_episode(i).text for i in ids]

    def read_timed(self, entity: str, attribute: str) -> list[Timed]:
        return [
            Timed(
                d.metadata["object"],
                instant(d.metadata["valid_from"], "valid_from"),
                instant(d.metadata["valid_to"] or None, "valid_to"),
            )
            for d in self._docs(entity, attribute)
        ]

    def sibling(self, kind: str, name: str) -> RetrieverHarness:
        return RetrieverHarness(self.root, self.clock, sibling_scope(kind, name))


class HistoryHarness(HarnessBase):
    """``ChronomemChatMessageHistory``: ``append`` is ``add_messages``, ``transcript``
    reads ``messages``. A chat history holds messages, not attributes, so the
    kit's attribute requests are not expressible (isolation between sessions
    is tested in tests/langchain/test_history.py)."""

    adapter = ChronomemChatMessageHistory

    def __init__(self, root: Memory, clock: KitClock, scope: dict[str, str] | None = None):
        self.clock = clock
        self.chat = ChronomemChatMessageHistory(root.scoped(**(scope or BASE_SCOPE)))

    def append(self, messages: Sequence[tuple[str, str]]) -> None:
        kinds = {"user": HumanMessage, "assistant": AIMessage}
        self.chat.add_messages([kinds[role](content=text) for role, text in messages])

    def transcript(self) -> list[tuple[str, str]]:
        roles = {"human": "user", "ai": "assistant"}
        return [(roles[m.type], str(m.content)) for m in self.chat.messages]


_LINE = re.compile(
    r"^- (?P<text>.+) \((?:since \d{4}-\d{2}-\d{2}|\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2})\)$"
)


class _SeenModel(GenericFakeChatModel):
    """A fake chat model that answers "ok" and keeps what each call was shown."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def __init__(self) -> None:
        super().__init__(messages=itertools.repeat(AIMessage("ok")))

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


class MiddlewareHarness(_FactHarness):
    """``ChronomemMiddleware``: a read runs a real ``create_agent`` turn whose user
    message is ``"{entity} {attribute}"`` and parses the recall block the model
    was shown; ``read_at`` builds a middleware pinned at that instant
    (``AT_CONSTRUCTION``). The harness middleware does not record its own
    questions (``record=False``)."""

    adapter = ChronomemMiddleware

    def _shown(self, entity: str, attribute: str, **pin: Any) -> list[str]:
        model = _SeenModel()
        middleware = ChronomemMiddleware(self.memory, k=50, record=False, **pin)
        agent = create_agent(model, middleware=[middleware])
        agent.invoke({"messages": [HumanMessage(f"{entity} {attribute}")]})
        (shown,) = model.seen
        notes = [m for m in shown if m.id == RECALL_ID]
        if not notes:
            return []
        (note,) = notes
        prefix = f"{entity} {attribute} "
        values = []
        for line in str(note.content).splitlines():
            if line.startswith("Earlier values"):
                break  # only the live facts
            found = _LINE.match(line)
            if found and found["text"].startswith(prefix):
                values.append(found["text"][len(prefix) :])
        return values

    def read(self, entity: str, attribute: str) -> list[str]:
        return self._shown(entity, attribute)

    def read_at(
        self,
        entity: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        return self._shown(entity, attribute, valid_at=valid_at, known_at=known_at)

    def sibling(self, kind: str, name: str) -> MiddlewareHarness:
        return MiddlewareHarness(self.root, self.clock, sibling_scope(kind, name))
