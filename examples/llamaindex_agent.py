"""A LlamaIndex FunctionAgent that remembers across sessions and answers "as of".

Offline: the agent's model is LlamaIndex's own ``MockFunctionCallingLLM``
with a tiny scripted "brain" that reads only what the agent puts in front of
it (the memory's recall block, the conversation and tool results), so what
it answers shows what the memory gave it. Sessions are days apart on a
manual clock.

    python examples/llamaindex_agent.py
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool

from chronomem import Memory
from chronomem_adapters.semantics import UnsupportedSemantics
from llama_index.memory.chronomem import ChronomemMemory

LIVES_IN = re.compile(r"lives in ([^(\n]+?) \(")
ASKED_DATE = re.compile(r"on (\d{4}-\d{2}-\d{2})")


class Clock:
    """The store's clock: days pass between sessions."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 9, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def days(self, n: int) -> None:
        self.now += timedelta(days=n)


def extraction_brain(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """The scripted extraction model: fills the schema LlamaIndexExtractor offers."""
    tools = kwargs.get("tools") or []
    turns = (messages[-1].content or "") if tools else ""
    facts = []
    if "cello" in turns:
        facts.append(
            {"turn": 0, "subject": "user", "predicate": "plays", "object": "cello", "op": "assert"}
        )
    if not tools:  # a plain question (the cardinality of an invented predicate)
        return ChatMessage(role="assistant", content='{"cardinality": "many"}')
    call = ToolCallBlock(
        tool_call_id="x", tool_name=tools[0].metadata.name, tool_kwargs={"facts": facts}
    )
    return ChatMessage(role="assistant", blocks=[call])


def brain(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """The scripted model: answers from the memory block and tool results only."""
    last = messages[-1]
    if last.role.value == "tool":  # a tool answered: report what it recalled
        found = LIVES_IN.findall(last.content or "")
        question = next(m for m in reversed(messages) if m.role.value == "user")
        day = ASKED_DATE.search(question.content or "")
        where = found[0] if found else "somewhere I was not told about"
        return ChatMessage(
            role="assistant", content=f"On {day and day.group(1)} you lived in {where}."
        )
    text = last.content or ""
    asked = ASKED_DATE.search(text)
    if asked and kwargs.get("tools"):
        call = ToolCallBlock(
            tool_call_id="call-1",
            tool_name="recall_as_of",
            tool_kwargs={"date": asked.group(1), "question": "where do I live"},
        )
        return ChatMessage(role="assistant", blocks=[call])
    if "what do i play" in text.lower():
        memory = "\n".join(m.content or "" for m in messages if m.role.value == "system")
        played = re.findall(r"plays ([^(\n]+?) \(", memory)
        return ChatMessage(
            role="assistant", content=f"You play the {played[0]}." if played else "?"
        )
    if "where do i live" in text.lower():
        memory = "\n".join(m.content or "" for m in messages if m.role.value == "system")
        found = LIVES_IN.findall(memory)
        return ChatMessage(
            role="assistant",
            content=f"You live in {found[0]}." if found else "You have not told me yet.",
        )
    return ChatMessage(role="assistant", content="Noted.")


async def main() -> None:
    clock = Clock()
    with tempfile.TemporaryDirectory(prefix="chronomem-llamaindex-") as folder:
        store = Memory(str(Path(folder) / "memory.db"), clock=clock)
        try:
            await conversation(store, clock)
        finally:
            store.close()


async def conversation(store: Memory, clock: Clock) -> None:
    ada = store.scoped(user="ada")  # facts are Ada's; each session keeps its own transcript

    def session(name: str) -> ChronomemMemory:
        return ChronomemMemory.from_defaults(memory=ada, session_id=name)

    def recall_as_of(date: str, question: str) -> str:
        """What the memory recalled about the question as of a past date (YYYY-MM-DD)."""
        instant = datetime.fromisoformat(date).replace(hour=12, tzinfo=timezone.utc)
        view = session("tools").as_of(instant)  # read-only: the past is not rewritten
        got = view.get(input=question)
        return got[0].content or "" if got and got[0].role.value == "system" else "nothing"

    llm = MockFunctionCallingLLM(response_generator=brain)
    agent = FunctionAgent(
        llm=llm,
        tools=[FunctionTool.from_defaults(fn=recall_as_of)],
        system_prompt="You are Ada's assistant.",
    )

    async def say(memory: ChronomemMemory, text: str) -> str:
        reply = str(await agent.run(user_msg=text, memory=memory))
        print(f"  user: {text}\n  agent: {reply}")
        return reply

    print("session 1 (2026-01-01)")
    await say(session("monday"), "Hi, I'm Ada. I live in Paris.")

    clock.days(10)
    print("session 2 (2026-01-11)")
    await say(session("thursday"), "Where do I live?")

    clock.days(30)
    print("session 3 (2026-02-10)")
    s3 = session("later")
    await say(s3, "I moved to Berlin.")
    clock.days(1)
    await say(s3, "Where do I live?")
    await say(s3, "Where did I live on 2026-01-05?")

    current = s3.get(input="where do I live")[0].content or ""
    past = s3.get(input="where do I live", as_of=datetime(2026, 1, 5, tzinfo=timezone.utc))
    print("current recall:", " | ".join(LIVES_IN.findall(current)))
    print("as_of 2026-01-05 recall:", " | ".join(LIVES_IN.findall(past[0].content or "")))
    try:
        s3.as_of(datetime(2026, 1, 5, tzinfo=timezone.utc)).put(
            ChatMessage(content="I live in Rome.")
        )
    except UnsupportedSemantics:
        print("writing to the past: refused (UnsupportedSemantics)")
    roles = [m.role.value for m in s3.get_all()]
    print(f"session 3 transcript: {len(roles)} messages, roles {roles}")
    print("session 1 transcript:", [m.content for m in session("monday").get_all()])

    # Extraction by the framework's own model: any LlamaIndex LLM, here a scripted mock.
    clock.days(1)
    print("session 4 (2026-02-12), facts read by a LlamaIndex LLM")
    extractor_llm = MockFunctionCallingLLM(response_generator=extraction_brain)
    s4 = ChronomemMemory.from_defaults(memory=ada, session_id="music", llm=extractor_llm)
    await say(s4, "These days the cello takes all my evenings.")
    await say(session("music-2"), "What do I play?")
    (played,) = ada.facts(predicate="plays")
    print(f"fact: {played.subject} {played.predicate} {played.object} (by {played.extractor})")


if __name__ == "__main__":
    asyncio.run(main())
