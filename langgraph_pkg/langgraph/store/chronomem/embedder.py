"""A LangChain ``Embeddings`` (or an embedding function) as a chronomem embedder."""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import functools
import struct
from collections.abc import Awaitable, Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import ensure_embeddings

from chronomem import InvalidInput
from chronomem_adapters.embedders import former_identities, model_identity


def _run(coro: Awaitable[Any]) -> Any:
    """Run a coroutine to completion from sync code, even under a running loop."""

    async def main() -> Any:
        return await coro

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with cf.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()


def _as_matrix(vectors: Any, n: int, dim: int) -> np.ndarray:
    """``np.asarray(vectors, dtype=np.float32)``. A list of ``n`` lists of ``dim``
    numbers (what ``embed_documents`` returns) is packed into the matrix row by
    row by one ``struct`` of a row: the same float32 of each number (C's cast
    from its double), without the nested lists' shape discovery (``asarray``
    took longer than embedding a hashing batch), nor one argument tuple of every
    number (built from a chain of unknown length, it was regrown again and
    again). Anything packing refuses (not a number: a numeric string, say, which
    ``asarray`` parses) goes through ``asarray``."""
    if (
        type(vectors) is list
        and len(vectors) == n
        and n
        and all(type(v) is list for v in vectors)
        and set(map(len, vectors)) == {dim}
    ):
        row = _float32s(dim)
        buf = bytearray(n * row.size)
        pack = row.pack_into
        try:
            for at, v in zip(range(0, len(buf), row.size), vectors, strict=True):
                pack(buf, at, *v)
        except (struct.error, OverflowError):
            pass
        else:
            return np.frombuffer(buf, dtype=np.float32).reshape(n, dim)
    return np.asarray(vectors, dtype=np.float32)


def _as_vector(vector: Any, dim: int) -> np.ndarray:
    """``np.asarray(vector, dtype=np.float32)`` for a query's vector: a list of
    ``dim`` numbers (what ``embed_query`` returns) packed in one ``struct`` call, as
    ``_as_matrix`` packs a batch (the same float32 of each number)."""
    if type(vector) is list and len(vector) == dim:
        try:
            packed = _float32s(dim).pack(*vector)
        except (struct.error, OverflowError):
            pass
        else:
            return np.frombuffer(bytearray(packed), dtype=np.float32)
    return np.asarray(vector, dtype=np.float32)


@functools.lru_cache(maxsize=16)  # a store embeds batches of a few sizes
def _float32s(count: int) -> struct.Struct:
    return struct.Struct(f"{count}f")  # native: C's cast, as numpy's


class LangChainEmbedder:
    """Adapts LangGraph's ``index["embed"]`` (an ``Embeddings``, a sync or async
    function) to chronomem's ``Embedder`` protocol: ``name``, ``dim``, ``embed``
    (stored texts, through ``embed_documents``) and ``embed_query`` (search
    queries, through ``embed_query``: models that embed the two differently get
    what they expect).

    ``name`` identifies the model in the database, so reopening a store with
    another model is detected instead of mixing vectors. It is the name every
    package gives the same object (``chronomem_adapters.embedders.model_identity``:
    ``langchain/<Class>[/<model>]``), so ``ChronomemRetriever`` opens a store this
    one wrote; stores that recorded the older ``langchain:<module.Class>:<dims>``
    keep opening (``aliases``)."""

    def __init__(self, embed: Any, dims: int, *, name: str | None = None):
        if not isinstance(dims, int) or isinstance(dims, bool) or dims < 1:
            raise InvalidInput(f'index["dims"] must be a positive int, got {dims!r}')
        self.embeddings: Embeddings = ensure_embeddings(embed)
        self.dim = dims
        self.name = name or model_identity(self.embeddings, "langchain")
        self.aliases = () if name else former_identities(self.embeddings, "langchain", dims)

    @property
    def _async_only(self) -> bool:
        """An async embedding function: its sync methods raise, so run the async ones."""
        return getattr(self.embeddings, "func", None) is None and hasattr(self.embeddings, "afunc")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = list(texts)
        if self._async_only:
            vectors = _run(self.embeddings.aembed_documents(items))
        else:
            vectors = self.embeddings.embed_documents(items)
        arr = _as_matrix(vectors, len(items), self.dim)
        if arr.shape != (len(items), self.dim):
            raise InvalidInput(
                f"embeddings returned shape {arr.shape}, expected {(len(items), self.dim)} "
                '(check index["dims"])'
            )
        return arr

    def embed_query(self, text: str) -> np.ndarray:
        if self._async_only:
            vector = _run(self.embeddings.aembed_query(text))
        else:
            vector = self.embeddings.embed_query(text)
        arr = _as_vector(vector, self.dim)
        if arr.shape != (self.dim,):
            raise InvalidInput(
                f"embed_query returned shape {arr.shape}, expected {(self.dim,)} "
                '(check index["dims"])'
            )
        return arr
