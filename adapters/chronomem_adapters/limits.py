"""The one upper bound on how many results an adapter's read returns.

``MAX_K`` bounds ``k``/``limit`` of every adapter read that hands results to a
prompt or a caller: the LangChain retriever and middleware, the LlamaIndex
retriever and memory (``recall_k``), CrewAI's ``recall(limit=)``. A larger
value is refused (``InvalidInput``) before anything is read: it is almost
always a mistake (a prompt cannot hold it) and it would make one read scan and
render that many hits.

Three reads keep their own bound, on purpose:

- the LangChain memory tools (``search_memory``'s ``k``, at most 50): a model
  chooses that number, and a tool's answer must stay prompt-sized;
- CrewAI's ``ChronomemStorage`` (a ``StorageBackend``): CrewAI's own ``Memory``
  chooses its limits and expects results, so larger ones are cut to 10,000,
  never refused;
- the LangGraph store's ``search(limit=, offset=)``: a ``BaseStore`` listing is
  a page of documents, not a prompt; LangGraph's own stores accept any limit,
  so this one does too (it pages through the namespace)."""

from __future__ import annotations

MAX_K = 1000
