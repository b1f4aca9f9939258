"""A LangChain agent that remembers across threads (offline: fake chat models).

``create_agent`` with ``ChronomemMiddleware`` and the chronomem tools. In
thread 1 the user mentions a move and an allergy; after the agent finishes,
the middleware stores the turn and a chat model (here LangChain's fake model,
scripted) extracts the facts. In thread 2, a new conversation, the model is
shown those facts as a labelled reference block and also looks them up with
the ``search_memory`` tool. Swap the fakes for ``ChatOpenAI(...)`` or any
``BaseChatModel`` to run it for real.

    .venv/bin/python examples/langchain_agent.py
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from chronomem import Memory
from langchain_chronomem import ChronomemMiddleware, chat_model_extractor
from langchain_chronomem.middleware import RECALL_ID


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, able to take tools, printing what it is shown."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        notes = [str(m.content) for m in messages if m.id == RECALL_ID]
        print(f"  model sees {len(messages)} messages; recalled memory among them: {bool(notes)}")
        for note in notes:
            print("    " + note.replace("\n", "\n    "))
        return super()._generate(messages, *args, **kwargs)


class Clock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def main() -> None:
    clock = Clock(datetime(2026, 3, 10, 9, 0, tzinfo=timezone.utc))
    memory = Memory(clock=clock).scoped(user="ada")

    # The model that reads facts out of the conversation (scripted JSON here).
    extraction_model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(
                    json.dumps(
                        {
                            "facts": [
                                {"turn": 0, "subject": "user", "predicate": "lives_in",
                                 "object": "Lisbon", "op": "assert", "valid_from": "2026-02-01"},
                                {"turn": 0, "subject": "user", "predicate": "allergic_to",
                                 "object": "peanuts", "op": "assert"},
                            ]
                        }
                    )
                )
            ]
        )
    )  # fmt: skip
    agent_model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage("Welcome to Lisbon! I'll keep the peanut allergy in mind."),
                AIMessage(
                    "",
                    tool_calls=[
                        {"name": "search_memory", "args": {"query": "allergies"}, "id": "c1"}
                    ],
                ),
                AIMessage("How about a peanut-free caldo verde?"),
            ]
        )
    )
    middleware = ChronomemMiddleware(
        memory, tools=True, extractor=chat_model_extractor(extraction_model)
    )
    agent = create_agent(agent_model, middleware=[middleware], checkpointer=InMemorySaver())

    def turn(thread: str, text: str) -> None:
        print(f"[{thread}] user: {text}")
        out = agent.invoke(
            {"messages": [HumanMessage(text)]}, config={"configurable": {"thread_id": thread}}
        )
        for m in out["messages"]:
            if m.type == "tool":
                lines = str(m.content).splitlines()
                print(f"  tool {m.name} ->", *lines, sep="\n    ")
        print(f"[{thread}] assistant: {out['messages'][-1].content}")

    turn("thread-1", "I moved to Lisbon last month, and I'm allergic to peanuts.")
    receipt = middleware.last_receipt
    assert receipt is not None
    print(f"  stored {len(receipt.episode_ids)} messages, extracted {receipt.extracted} facts")
    clock.now += timedelta(days=1)
    turn("thread-2", "What should I cook tonight?")

    print("what memory holds:")
    for fact in memory.facts():
        print(f"  {fact.subject} {fact.predicate} {fact.object} (extractor: {fact.extractor})")
    print("episodes stored:", len(memory.episodes()))


if __name__ == "__main__":
    main()
