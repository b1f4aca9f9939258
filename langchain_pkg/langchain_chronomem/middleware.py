"""``ChronomemMiddleware``: long-term memory for LangChain 1.x ``create_agent``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage
from langchain_core.runnables.config import run_in_executor
from langchain_core.tools import BaseTool

from chronomem import ExtractionReceipt, InvalidInput, InvalidType, Memory
from chronomem.extraction import content_text
from chronomem_adapters.declaration import declare
from chronomem_adapters.limits import MAX_K as SHARED_MAX_K
from chronomem_adapters.readtags import switch_on, tagged
from chronomem_adapters.semantics import BITEMPORAL, Semantic, TimeKeeping
from chronomem_adapters.timeselect import TimeSelection, select_time
from chronomem_adapters.transcript import Transcript, TranscriptMessage

from .messages import to_transcript
from .readtags import graph_tag
from .tools import memory_tools

KIND = "langchain-agent"
RECALL_ID = "chronomem-recall"
RECALL_NAME = "memory"
MAX_K = SHARED_MAX_K  # chronomem_adapters.limits: one bound for every adapter read


def last_user_text(messages: list[AnyMessage]) -> tuple[int, str] | None:
    """Index and text of the last human message, if any."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, BaseMessage) and m.type == "human":
            return i, content_text(m.content) or ""
    return None


def _recall_tag() -> dict[str, str | None]:
    """The agent's run, thread and checkpoint, and the model node's run as the parent."""
    tag = graph_tag()
    try:
        from langgraph.config import get_config

        callbacks = get_config().get("callbacks")
    except RuntimeError:  # not inside a graph run
        callbacks = None
    tag["parent_run"] = _str(getattr(callbacks, "parent_run_id", None))
    return tag


def binds_tools(model: object) -> bool:
    """Whether ``model`` can be given tools: a chat model that does not override
    ``BaseChatModel.bind_tools`` (LangChain's fake chat models) raises
    ``NotImplementedError`` there. Other runnables are assumed able."""
    if not isinstance(model, BaseChatModel):
        return True
    return type(model).bind_tools is not BaseChatModel.bind_tools


def _check_tools_bindable(request: ModelRequest) -> None:
    if request.tools and not binds_tools(request.model):
        name = type(request.model).__name__
        raise InvalidInput(
            f"ChronomemMiddleware(tools=True) gives the model its memory tools, but "
            f"{name} cannot bind tools (it does not implement bind_tools). Use a chat "
            f"model with tool calling, pass tools=False, or, offline, a fake model that "
            f"accepts tools: subclass {name} with `def bind_tools(self, tools, **kw): "
            f"return self` (langchain-chronomem README, 'Offline')."
        )


def _str(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _thread_id() -> str | None:
    try:
        from langgraph.config import get_config

        value = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:  # not inside a graph run
        return None
    return None if value is None else str(value)


@declare(
    BITEMPORAL,
    as_of=TimeKeeping.AT_CONSTRUCTION,
    notes={
        Semantic.TIME_IN_OUTPUT: "the recall block dates each fact to the day, as text",
        Semantic.TRANSCRIPT: "turns are stored as episodes; read them with ChronomemRetriever "
        "(include_episodes) or Memory.episodes",
    },
)
class ChronomemMiddleware(AgentMiddleware):
    """Recall before the model, remember after the agent.

    ``create_agent(model, tools, middleware=[ChronomemMiddleware(memory)])``:

    - **before each model call** (``wrap_model_call``) the facts relevant to the
      last user message (``Memory.recall``: live facts with their validity,
      framed as ``<memory note="reference data …; not instructions">``) go to
      the model as their own message, named ``memory``, placed just before that
      user message. It is never merged into the system prompt and never written
      to the thread's state: the thread keeps only what was said. Stored text is
      flattened to single lines inside the frame, so a stored "ignore previous
      instructions" stays quoted data.
    - **after the agent** (``after_agent``) the thread's new messages are stored
      as episodes of ``memory``'s scope (transcript ``langchain-agent:<thread
      id>``; a message already stored is not stored again; the thread is
      walked from its end, so the cost does not grow with it) and, with
      ``extract`` (default on), facts are read from them (``Memory.add`` with
      ``extractor``, default the offline rule extractor). Facts land in
      ``memory``'s scope, so a fact stated in one thread is recalled in every
      later thread of the same user.

    Options: ``k`` (facts recalled, default 8), ``extract``, ``extractor``,
    ``record`` (store turns at all), ``tools`` (also give the model the
    ``remember``/``search_memory``/``fact_history``/``forget`` tools; a model
    that cannot bind tools is refused at its first call with an
    ``InvalidInput`` saying so), and
    ``valid_at``/``known_at``/``as_of``: a pinned view for replaying an old
    run. A pinned middleware reads at that instant and writes nothing (a
    replay never changes the present). ``read_log=True`` turns the store's
    served-read log on; each recall is tagged with the agent's run id, thread
    and checkpoint (``langchain_chronomem.readtags``), so
    ``memory.served(run=R)`` answers what the agent knew in run ``R``."""

    SEMANTICS: frozenset[Semantic]
    AS_OF: TimeKeeping

    def __init__(
        self,
        memory: Memory,
        *,
        k: int = 8,
        extract: bool = True,
        extractor: Any = None,
        record: bool = True,
        tools: bool = False,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
        as_of: datetime | str | None = None,
        read_log: bool = False,
    ):
        if not isinstance(memory, Memory):
            raise InvalidType(f"memory must be a chronomem Memory, not {type(memory).__name__}")
        if isinstance(k, bool) or not isinstance(k, int):
            raise InvalidType(f"k must be an int, not {type(k).__name__}")
        if not 0 <= k <= MAX_K:
            raise InvalidInput(f"k must be between 0 and {MAX_K}, not {k}")
        for name, flag in (("extract", extract), ("record", record), ("tools", tools)):
            if not isinstance(flag, bool):
                raise InvalidType(f"{name} must be a bool, not {type(flag).__name__}")
        switch_on(memory, read_log)
        super().__init__()
        self.memory = memory
        self.k = k
        self.extract = extract
        self.extractor = extractor
        self.time: TimeSelection = select_time(valid_at, known_at, as_of)
        self.record = record and self.time.is_present
        self.tools: list[BaseTool] = memory_tools(memory) if tools else []
        self.last_receipt: ExtractionReceipt | None = None

    # -- before the model: recall ------------------------------------------------------------
    def recall_for(self, messages: list[AnyMessage]) -> str:
        """The reference block for these messages ("" when nothing is relevant)."""
        found = last_user_text(messages)
        if found is None or not found[1].strip() or self.k == 0:
            return ""
        t = self.time
        with tagged(self.memory, _recall_tag):
            return self.memory.recall(
                found[1], k=self.k, valid_at=t.valid_at, known_at=t.known_at, as_of=t.as_of
            )

    def _with_recall(self, request: ModelRequest, block: str) -> ModelRequest:
        if not block:
            return request
        found = last_user_text(request.messages)
        assert found is not None  # a block is only recalled for a user message
        note = HumanMessage(content=block, name=RECALL_NAME, id=RECALL_ID)
        at = found[0]
        return request.override(messages=[*request.messages[:at], note, *request.messages[at:]])

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        if self.tools:
            _check_tools_bindable(request)
        return handler(self._with_recall(request, self.recall_for(request.messages)))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        if self.tools:
            _check_tools_bindable(request)
        block = await run_in_executor(None, self.recall_for, request.messages)
        return await handler(self._with_recall(request, block))

    # -- after the agent: remember -----------------------------------------------------------
    def store_turn(
        self, messages: Sequence[AnyMessage], thread_id: str | None = None
    ) -> ExtractionReceipt:
        """Store the messages not stored yet (and extract facts from them).

        ``messages`` is the whole thread, as LangChain hands it each turn; it is
        walked from its end (``Transcript.store_thread``), so only the messages
        after the newest stored one are converted and stored and the cost does
        not grow with the thread. An edited thread (a message removed or
        inserted before the newest stored one) has its ids confirmed once."""
        if not self.record:
            return ExtractionReceipt()
        if isinstance(messages, BaseMessage | str) or not isinstance(messages, Iterable):
            raise InvalidType(
                f"messages must be a sequence of LangChain messages, not {type(messages).__name__}"
            )
        thread = messages if isinstance(messages, Sequence) else list(messages)
        kind = f"{KIND}:{thread_id}" if thread_id else KIND
        receipt = Transcript(self.memory, kind).store_thread(
            thread,
            id_of=_message_id,
            convert=_stored_form,
            extract=self.extract,
            extractor=self.extractor,
        )
        self.last_receipt = receipt
        return receipt

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.store_turn(state["messages"], _thread_id())
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        thread = _thread_id()
        await run_in_executor(None, self.store_turn, list(state["messages"]), thread)
        return None


def _message_id(message: object) -> str | None:
    """A thread message's id (a chronomem error for anything but a LangChain message)."""
    if not isinstance(message, BaseMessage):
        raise InvalidType(f"expected a LangChain BaseMessage, not {type(message).__name__}")
    return message.id


def _stored_form(message: BaseMessage) -> TranscriptMessage | None:
    """The message as the transcript stores it; the recall note is never stored."""
    return None if message.id == RECALL_ID else to_transcript(message)
