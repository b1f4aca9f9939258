"""``ChronomemChatMessageHistory``: a LangChain chat history kept as chronomem episodes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables.config import run_in_executor

from chronomem import ExtractionReceipt, InvalidInput, InvalidType, Memory
from chronomem_adapters.declaration import declare
from chronomem_adapters.semantics import Semantic, TimeKeeping
from chronomem_adapters.transcript import Transcript

from .messages import from_transcript, to_transcripts

KIND = "langchain-chat"
_OWN_SCOPE: Any = object()  # session_id not given: the memory's own scope


@declare(
    [Semantic.TRANSCRIPT],
    as_of=TimeKeeping.NONE,
    notes={
        Semantic.ERASURE: "erase() deletes the whole session physically (not one attribute)",
        Semantic.RETRACTION: "clear() hides the session; audit_messages() still shows it",
    },
)
class ChronomemChatMessageHistory(BaseChatMessageHistory):
    """A chat history whose every message is an episode of the session's scope.

    .. note:: LangChain deprecated ``BaseChatMessageHistory`` (since
       langchain-core 1.6.4, removal in 2.0) and ``RunnableWithMessageHistory``
       in favour of LangGraph persistence. This class is for the many apps still
       on them; new agents should use ``ChronomemMiddleware`` with
       ``create_agent`` (recall before the model, transcript and extraction
       after the agent).

    ``memory``: a chronomem ``Memory`` scoped by the caller; ``session_id``
    (optional; omit it to use the memory's own scope, ``None`` is refused: a
    factory handed no session id must not write to the shared scope) narrows
    it to that session, so
    ``lambda sid: ChronomemChatMessageHistory(memory=mem, session_id=sid)`` is a
    ``RunnableWithMessageHistory`` factory. ``extract=True`` also reads facts
    from the new messages (``Memory.add``; ``extractor`` default the offline
    rule extractor); the facts land in the session's scope and cite the
    messages' episodes.

    - ``messages`` returns the transcript exactly and in order: LangChain's own
      serialisation (``message_to_dict``) is stored with each message, so types,
      content, ids, names, additional kwargs and tool calls come back as given.
      A message whose id is already in the transcript is not stored again.
    - ``clear()`` hides the session's messages from ``messages`` (a marker
      episode); nothing is deleted and ``audit_messages()`` still returns them.
    - ``erase()`` physically deletes the session (its messages, facts and
      indexes): ``Memory.purge`` of the session scope. Irreversible.
    - ``aget_messages``/``aadd_messages``/``aclear`` are native (they validate
      first, then run the store call in LangChain's executor)."""

    SEMANTICS: frozenset[Semantic]
    AS_OF: TimeKeeping

    def __init__(
        self,
        memory: Memory,
        *,
        session_id: str = _OWN_SCOPE,
        extract: bool = False,
        extractor: Any = None,
    ):
        if not isinstance(memory, Memory):
            raise InvalidType(f"memory must be a chronomem Memory, not {type(memory).__name__}")
        if session_id is None:
            raise InvalidInput(
                "session_id=None: pass the session's id, or omit session_id to keep "
                "the messages in the memory's own scope"
            )
        if not isinstance(extract, bool):
            raise InvalidType("extract must be a bool")
        own = session_id is _OWN_SCOPE
        self.memory = memory if own else memory.scoped(session=session_id)
        self.extract = extract
        self.extractor = extractor
        self.transcript = Transcript(self.memory, KIND)
        self.last_receipt: ExtractionReceipt | None = None

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The session's messages since the last ``clear()``, in order."""
        return from_transcript(self.transcript.messages())

    def audit_messages(self) -> list[BaseMessage]:
        """Every message of the session, cleared ones included, in order."""
        return from_transcript(self.transcript.messages(include_cleared=True))

    def add_user_message(self, message: HumanMessage | str) -> None:
        self.add_messages([_message(message, HumanMessage, "add_user_message")])

    def add_ai_message(self, message: AIMessage | str) -> None:
        self.add_messages([_message(message, AIMessage, "add_ai_message")])

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        items = to_transcripts(messages)  # all validated before anything is written
        if self.extract:
            self.last_receipt = self.transcript.record(items, extractor=self.extractor)
        else:
            self.transcript.append(items)

    def clear(self) -> None:
        self.transcript.clear()

    def erase(self) -> dict[str, int]:
        """Physically delete the session: messages, facts, indexes. Irreversible."""
        return self.transcript.erase()

    async def aget_messages(self) -> list[BaseMessage]:
        result: list[BaseMessage] = await run_in_executor(None, lambda: self.messages)
        return result

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        items = to_transcripts(messages)
        if self.extract:
            self.last_receipt = await run_in_executor(
                None, lambda: self.transcript.record(items, extractor=self.extractor)
            )
        else:
            await run_in_executor(None, self.transcript.append, items)

    async def aclear(self) -> None:
        await run_in_executor(None, self.transcript.clear)

    async def aerase(self) -> dict[str, int]:
        result: dict[str, int] = await run_in_executor(None, self.transcript.erase)
        return result


def _message(value: object, kind: type[BaseMessage], where: str) -> BaseMessage:
    """``add_user_message``/``add_ai_message``'s argument as a message (a chronomem
    error for anything but a message of that kind or a str)."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        return kind(content=value)
    raise InvalidType(f"{where}() takes a {kind.__name__} or a str, not {type(value).__name__}")
