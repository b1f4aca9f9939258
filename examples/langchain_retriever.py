"""A LangChain retriever that can answer "as of last year" (offline, no LLM).

ada tells us she moved from Paris to Berlin. The same question through the
same ``ChronomemRetriever`` gives today's answer, and with ``as_of=`` (or
``valid_at=``) the answer the store would have given last year. Each
document's text carries the validity interval, so a model reading it through
``create_retriever_tool`` sees it too.

    .venv/bin/python examples/langchain_retriever.py
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from langchain_core.tools import create_retriever_tool

from chronomem import Memory
from langchain_chronomem import ChronomemRetriever


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)  # type: ignore[misc]


class Clock:
    """A clock we can move, so the example prints the same dates every run."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def main() -> None:
    clock = Clock(utc(2025, 9, 2))
    memory = Memory(clock=clock).scoped(user="ada")  # Memory("memory.db") keeps it on disk
    memory.remember("ada", "lives_in", "Paris", valid_from=utc(2025, 9, 1))
    last_year = utc(2025, 12, 1)
    clock.now = utc(2026, 6, 2)
    memory.remember("ada", "lives_in", "Berlin", valid_from=utc(2026, 6, 1))

    retriever = ChronomemRetriever(memory=memory, k=4)
    question = "Where does ada live?"
    print("now:        ", [d.page_content for d in retriever.invoke(question)])
    print("as of 2025: ", [d.page_content for d in retriever.invoke(question, as_of=last_year)])
    print(
        "with ended: ",
        [d.page_content for d in retriever.invoke(question, states=["live", "ended"])],
    )
    (doc,) = retriever.invoke(question)
    print("document id is the fact version:", doc.id == doc.metadata["version_id"])
    print("metadata:", {k: doc.metadata[k] for k in ("subject", "predicate", "state")})

    pinned = retriever.bind(valid_at="2025-12-01T00:00:00Z")  # a whole chain pinned in time
    print("bound:      ", [d.page_content for d in pinned.invoke(question)])
    tool = create_retriever_tool(retriever, "memory", "What we know about the user.")
    print("tool shows: ", tool.invoke({"query": question}))
    try:
        retriever.invoke(question, asof=last_year)
    except TypeError as exc:
        print("typo:        TypeError:", str(exc).split(";")[0])


if __name__ == "__main__":
    main()
