"""Any framework's embedding model as a chronomem ``Embedder``.

LangChain ``Embeddings``, LlamaIndex ``BaseEmbedding`` and CrewAI embedder
callables all come down to "embed these documents" and, sometimes, "embed this
query". ``CallableEmbedder`` wraps those two callables; each adapter package
only says which methods to call. What the model is called is one rule for every
package (``model_identity``): the same LangChain ``Embeddings`` gets the same
name whether a LangGraph store, a LangChain retriever or a CrewAI memory opened
the database, so a store written through one package opens in another. The dimension is
probed once when not given, and every answer's shape is checked by core
(``chronomem.embedding.embed_checked``), so a model that changes dimension is a
clear error, never a silently wrong index. The name is recorded in the store:
reopening a store with another model is refused until it is re-embedded
(docs/design.md §6)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from chronomem import InvalidInput, InvalidType
from chronomem.embedding import normalize_rows

# Attributes a framework embedding object names its model with, in this order.
MODEL_ATTRS = ("model", "model_name", "deployment", "model_id")
# The families an embedding object belongs to, by the module its base class lives in.
FAMILIES = {"langchain_core": "langchain", "llama_index": "llamaindex"}


def family_of(obj: object) -> str | None:
    """``"langchain"`` for a LangChain ``Embeddings``, ``"llamaindex"`` for a
    LlamaIndex ``BaseEmbedding``, else ``None`` (read from the class hierarchy:
    no framework is imported here)."""
    for cls in type(obj).__mro__:
        family = FAMILIES.get(cls.__module__.partition(".")[0])
        if family is not None:
            return family
    return None


def model_identity(obj: object, family: str) -> str:
    """The name a store records for a framework embedding object:
    ``<family>/<Class>[/<model>]`` (the model from ``MODEL_ATTRS``), and for an
    object that wraps a plain function (LangGraph's ``index["embed"]=fn``)
    ``<family>/fn/<module>.<qualname>``."""
    func = getattr(obj, "func", None) or getattr(obj, "afunc", None)
    if callable(func):
        return (
            f"{family}/fn/{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"
        )
    name = f"{family}/{type(obj).__name__}"
    for attr in MODEL_ATTRS:
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value:
            return f"{name}/{value}"
    return name


def former_identities(obj: object, family: str, dim: int) -> tuple[str, ...]:
    """The names releases before the one rule recorded for ``obj``: stores that
    recorded one of them keep opening (the embedder's ``aliases``)."""
    cls = type(obj)
    func = getattr(obj, "func", None) or getattr(obj, "afunc", None)
    if callable(func):
        described = f"fn:{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"
    else:
        model = getattr(obj, "model", None) or getattr(obj, "model_name", None)
        described = f"{cls.__module__}.{cls.__qualname__}"
        if isinstance(model, str):
            described = f"{described}:{model}"
    old = [f"langchain:{described}:{dim}", f"crewai-{cls.__name__}"]  # langgraph_pkg, crewai_pkg
    if family == "llamaindex":
        old.append(f"llamaindex:{cls.__name__}:{getattr(obj, 'model_name', None)}")
    return tuple(old)


EmbedDocuments = Callable[[list[str]], Sequence[Sequence[float]]]
EmbedQuery = Callable[[str], Sequence[float]]

PROBE = "dimension probe"


class CallableEmbedder:
    """``embed`` via ``embed_documents``; ``embed_query`` when the model has one."""

    def __init__(
        self,
        embed_documents: EmbedDocuments,
        *,
        name: str,
        embed_query: EmbedQuery | None = None,
        dim: int | None = None,
        aliases: Sequence[str] = (),
    ):
        if not callable(embed_documents):
            raise InvalidType("embed_documents must be callable")
        if embed_query is not None and not callable(embed_query):
            raise InvalidType("embed_query must be callable")
        if not isinstance(name, str) or not name:
            raise InvalidInput("an embedder needs a non-empty name (it is recorded in the store)")
        self._documents = embed_documents
        self._query = embed_query
        self.name = name
        self.aliases = tuple(aliases)
        if dim is None:
            probe = np.asarray(embed_documents([PROBE]), dtype=np.float32)
            if probe.ndim != 2 or probe.shape[0] != 1 or probe.shape[1] < 1:
                raise InvalidInput(f"embedder {name!r} returned shape {probe.shape} for one text")
            dim = int(probe.shape[1])
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            raise InvalidInput("dim must be a positive int")
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return normalize_rows(np.asarray(self._documents(list(texts)), dtype=np.float32))

    def __getattr__(self, attr: str) -> object:
        # ``embed_query`` exists only when the model has one: core then uses it.
        if attr == "embed_query" and self.__dict__.get("_query") is not None:
            return self.__dict__["_query"]
        raise AttributeError(attr)


def model_embedder(
    obj: object,
    family: str,
    embed_documents: EmbedDocuments,
    *,
    embed_query: EmbedQuery | None = None,
    dim: int | None = None,
    name: str | None = None,
) -> CallableEmbedder:
    """A framework embedding object as an embedder named by ``model_identity``
    (its former names as ``aliases``), unless the caller names it."""
    emb = CallableEmbedder(
        embed_documents,
        name=name or model_identity(obj, family),
        embed_query=embed_query,
        dim=dim,
    )
    if name is None:
        emb.aliases = former_identities(obj, family, emb.dim)
    return emb
