"""An adapter never hands its framework an internal row (issue #29): a store that
a LangGraph store also wrote to holds ``@index:…`` entries, which chronomem's
search finds; the retrievers and tools of the other adapters leave them out."""

from __future__ import annotations

from chronomem import Memory
from chronomem.ops import AssertOp

TEXT = "ada lives in Paris"


def store_with_an_index_row() -> Memory:
    memory = Memory()
    memory.apply(
        [
            AssertOp("lg:users.ada..p", "@index:$", "d1g3st", None, None, False, exact=True,
                     index_text=TEXT),
            AssertOp("ada", "lives_in", "Paris", None, None, False),
        ]
    )  # fmt: skip
    assert any(h.fact and h.fact.predicate.startswith("@") for h in memory.search(TEXT))
    return memory


def test_langchain_retriever_and_tool_leave_internal_rows_out() -> None:
    from langchain_chronomem import ChronomemRetriever, memory_tools

    memory = store_with_an_index_row()
    docs = ChronomemRetriever(memory=memory, k=10).invoke(TEXT)
    assert docs and not any("@index" in d.page_content or "d1g3st" in d.page_content for d in docs)
    search = next(t for t in memory_tools(memory) if t.name == "search_memory")
    out = search.invoke({"query": TEXT})
    assert "Paris" in out and "@index" not in out and "d1g3st" not in out


def test_llamaindex_retriever_leaves_internal_rows_out() -> None:
    from llama_index.memory.chronomem import ChronomemRetriever

    nodes = ChronomemRetriever(store_with_an_index_row(), k=10).retrieve(TEXT)
    assert nodes and not any("@index" in n.node.get_content() for n in nodes)
