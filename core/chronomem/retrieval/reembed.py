"""Re-embedding every version and episode with a new embedder (``reembed=True``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from sqlalchemy import select, update

from ..schema import episodes, meta, versions
from .indexing import delete_all_vectors, fact_text

if TYPE_CHECKING:
    from ..engine import Engine
    from .search import Retrieval

BATCH = 256


def _progress(total: int, label: str) -> object:
    try:
        from tqdm import tqdm

        return tqdm(total=total, desc=label, unit="row", file=sys.stderr, disable=None)
    except ImportError:  # tqdm is optional
        return None


def reembed_all(engine: Engine, r: Retrieval, *, show_progress: bool = True) -> int:
    """Replace every stored vector (all tenants) with the new embedder's; returns rows embedded."""
    done = 0
    with engine.backend.write() as conn:
        delete_all_vectors(conn)
        for kind, cols in (
            ("v", [versions.c.tenant, versions.c.id, versions.c.subject, versions.c.predicate,
                             versions.c.object, versions.c.index_text]),
            ("e", [episodes.c.tenant, episodes.c.id, episodes.c.text]),
        ):  # fmt: skip
            rows = [dict(x) for x in conn.execute(select(*cols)).mappings()]
            bar = (
                _progress(len(rows), f"re-embedding {'facts' if kind == 'v' else 'episodes'}")
                if show_progress
                else None
            )
            for i in range(0, len(rows), BATCH):
                chunk = rows[i : i + BATCH]
                if kind == "v":
                    r.indexer._write(conn, "v", chunk, [fact_text(x) for x in chunk])
                else:
                    r.indexer._write(conn, "e", chunk, [x["text"] for x in chunk])
                done += len(chunk)
                if bar is not None:
                    bar.update(len(chunk))  # type: ignore[attr-defined]
            if bar is not None:
                bar.close()  # type: ignore[attr-defined]
        conn.execute(
            update(meta)
            .where(meta.c.key == "embedder")
            .values(value=f"{r.embedder.name}\x1f{r.embedder.dim}")
        )
    r.mirrors.clear()
    return done
