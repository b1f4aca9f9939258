"""Writes the vectors of new versions and episodes, in the writing transaction,
and deletes them (for ``erasure`` and re-embedding): the one owner of ``cm_vectors``.

A version's vector never changes (versions are immutable); pieces cut from a
version carry the same text, so an LRU of text -> vector saves re-embedding."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import Connection, delete, select

from ..backends import of
from ..batching import chunks
from ..embedding import Embedder, embed_checked
from ..errors import SchemaMismatch
from ..schema import meta, vectors


def fact_text(row: dict[str, Any]) -> str:
    """What the lexical and vector legs see of a version (mirrors the FTS body)."""
    if row.get("index_text") is not None:
        return str(row["index_text"])
    return f"{row['subject']} {row['predicate'].replace('_', ' ')} {row['object']}"


class Indexer:
    """Embeds the text of inserted versions and episodes and writes their vectors
    to ``cm_vectors`` in the writing transaction (the engine's insert hooks call
    ``on_versions``/``on_episodes``). Versions are immutable, so a text's vector
    never changes: an LRU of text -> vector spares re-embedding the pieces a cut
    re-inserts; ``clear`` forgets it (after erasure: no erased text lingers)."""

    def __init__(self, embedder: Embedder, cache_size: int = 4096, *, pgvector: bool = False):
        self.embedder = embedder
        self.pgvector = pgvector  # also fill cm_vectors.embedding (PostgreSQL + pgvector)
        self._lru: OrderedDict[str, np.ndarray] = OrderedDict()
        self._size = cache_size

    def clear(self) -> None:
        self._lru.clear()

    def vectors_for(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._lru]
        fresh = embed_checked(self.embedder, missing) if missing else None
        if fresh is not None and len(missing) == len(texts):
            out = fresh  # every text new and distinct (a batch of new facts): as embedded
        else:
            got = dict(zip(missing, fresh, strict=True)) if fresh is not None else {}
            out = np.empty((len(texts), self.embedder.dim), dtype=np.float32)
            for i, t in enumerate(texts):
                v = got.get(t)
                if v is None:
                    v = self._lru[t]
                    self._lru.move_to_end(t)
                out[i] = v
        if fresh is not None:
            # the LRU keeps the last ``_size`` texts: older fresh ones would be evicted
            # by the newer ones anyway
            start = max(0, len(missing) - self._size)
            for t, v in zip(missing[start:], fresh[start:], strict=True):
                self._lru[t] = v
            while len(self._lru) > self._size:
                self._lru.popitem(last=False)
        return out

    def _write(
        self, conn: Connection, kind: str, rows: list[dict[str, Any]], texts: list[str]
    ) -> None:
        # the rows with a text to embed, and those texts (two lists: a batch's pairs
        # would be objects the garbage collector tracks until it is written)
        kept = [i for i, t in enumerate(texts) if t.strip()]
        if not kept:
            return
        if len(kept) < len(rows):
            rows = [rows[i] for i in kept]
            texts = [texts[i] for i in kept]
        vecs = self.vectors_for(texts)
        # one conversion and one copy out, not one per row: each row's blob is its
        # slice of the matrix's bytes (what its row's ``tobytes`` gives)
        whole = np.ascontiguousarray(vecs, dtype="<f4").tobytes()
        name, dim = self.embedder.name, self.embedder.dim
        size = len(whole) // len(rows)
        of(conn).insert_rows(
            conn,
            vectors,
            [
                {
                    "tenant": r["tenant"],
                    "kind": kind,
                    "item_id": r["id"],
                    "embedder": name,
                    "dim": dim,
                    "vec": whole[at : at + size],
                    "norm": 1.0,
                }
                for r, at in zip(rows, range(0, len(whole), size), strict=True)
            ],
        )
        if self.pgvector:
            from .pgvector import write_vectors

            write_vectors(conn, [r["tenant"] for r in rows], kind, [r["id"] for r in rows], vecs)
        of(conn).after_insert_vectors(conn, len(rows))  # PostgreSQL: ANALYZE now and then

    def on_versions(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        self._write(conn, "v", rows, [fact_text(r) for r in rows])

    def on_episodes(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        self._write(conn, "e", rows, [r["text"] for r in rows])


def check_embedder(conn: Connection, embedder: Embedder) -> str | None:
    """Record the store's embedder on first use; return the stored name when it differs."""
    # Read first: opening a store that has its record writes nothing (a read-only
    # file opens). Else insert-if-absent: two processes opening a new store at once
    # must not collide.
    query = select(meta.c.value).where(meta.c.key == "embedder")
    row = conn.execute(query).scalar()
    if row is None:
        value = f"{embedder.name}\x1f{embedder.dim}"
        of(conn).insert_ignore(conn, meta, [{"key": "embedder", "value": value}])
        row = conn.execute(query).scalar_one()
    name, _, dim = row.partition("\x1f")
    known = (embedder.name, *getattr(embedder, "aliases", ()))  # aliases: its former names
    if name in known and int(dim) == embedder.dim:
        return None
    return row


def mismatch_error(stored: str, embedder: Embedder) -> SchemaMismatch:
    name, _, dim = stored.partition("\x1f")
    return SchemaMismatch(
        f"this store's vectors were made by embedder {name!r} (dim {dim}); it was opened with "
        f"{embedder.name!r} (dim {embedder.dim}). Open it with the same embedder, or pass "
        "reembed=True to re-embed every fact and episode with the new one."
    )


def delete_vectors(conn: Connection, tenant: str, kind: str, ids: Sequence[str]) -> int:
    """Delete the ``kind`` (``"v"`` version, ``"e"`` episode) vectors of ``ids``."""
    n = 0
    for chunk in chunks(ids):
        n += conn.execute(
            delete(vectors).where(
                vectors.c.tenant == tenant, vectors.c.kind == kind, vectors.c.item_id.in_(chunk)
            )
        ).rowcount
    return n


def delete_all_vectors(conn: Connection) -> None:
    """Every tenant's vectors (re-embedding with a new embedder replaces them all)."""
    conn.execute(delete(vectors))
