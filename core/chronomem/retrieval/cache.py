"""An in-process mirror of one tenant's versions and episodes, for the vector
and entity-graph legs: time, scope and entity columns as numpy arrays, and
the vectors as one matrix.

It is synced incrementally by transaction time: every write bumps the
tenant's clock row, so a search reads that one row and fetches only versions
recorded or superseded since the last sync (works across processes). Erasure
bumps an erase marker, which forces a full reload."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection, and_, or_, select

from ..schema import episodes, txclock, vectors, versions

MAX = np.iinfo(np.int64).max


class Grow:
    """A 1-d numpy array with amortised appends."""

    def __init__(self, dtype: Any, fill: Any = 0):
        self.a = np.full(64, fill, dtype=dtype)
        self.n = 0
        self.fill = fill

    def extend(self, values: list[Any]) -> None:
        need = self.n + len(values)
        if need > len(self.a):
            cap = max(need, 2 * len(self.a))
            b = np.full(cap, self.fill, dtype=self.a.dtype)
            b[: self.n] = self.a[: self.n]
            self.a = b
        self.a[self.n : need] = values
        self.n = need

    @property
    def view(self) -> np.ndarray:
        return self.a[: self.n]


class Codes:
    """Strings to small ints; '' is always 0."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {"": 0}
        self.names: list[str] = [""]

    def code(self, s: str) -> int:
        c = self.index.get(s)
        if c is None:
            c = self.index[s] = len(self.names)
            self.names.append(s)
        return c

    def get(self, s: str | None) -> int:
        return self.index.get(s or "", -1) if s else 0


@dataclass
class Mirror:
    """Rows of one kind ('v' versions, 'e' episodes) of one tenant."""

    kind: str
    dim: int
    ids: list[str] = field(default_factory=list)
    pos: dict[str, int] = field(default_factory=dict)
    hashes: list[str] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.start = Grow(np.int64)  # valid_from / occurred_at
        self.end = Grow(np.int64, MAX)  # valid_to (versions)
        self.rec = Grow(np.int64)
        self.sup = Grow(np.int64, MAX)
        self.user = Grow(np.int32)
        self.agent = Grow(np.int32)
        self.session = Grow(np.int32)
        self.subj = Grow(np.int32)
        self.obj = Grow(np.int32)
        self.pred = Grow(np.int32)
        self.has_vec = Grow(np.bool_, False)
        # Column-major (dim x capacity): a sparse query (the hashing embedder's)
        # reads only the rows of its non-zero dimensions.
        self.mat_t = np.zeros((self.dim, 64), dtype=np.float32)
        self.by_entity: dict[int, list[int]] = {}  # entity code -> positions (subject or object)

    @property
    def n(self) -> int:
        return len(self.ids)

    def add_vectors(self, first: int, vecs: np.ndarray) -> None:
        need = first + len(vecs)
        if need > self.mat_t.shape[1]:
            cap = max(need, 2 * self.mat_t.shape[1])
            m = np.zeros((self.dim, cap), dtype=np.float32)
            m[:, :first] = self.mat_t[:, :first]
            self.mat_t = m
        self.mat_t[:, first:need] = vecs.T

    def scores(self, q: np.ndarray) -> np.ndarray:
        """Cosine similarity of the query with every row (unit vectors)."""
        n = self.n
        nz = np.flatnonzero(q)
        if len(nz) * 4 > self.dim:
            return q @ self.mat_t[:, :n]
        # Sparse query: one contiguous multiply-add per non-zero dimension
        # (a fancy-indexed gather would copy the rows first and cost 4x more).
        out = np.zeros(n, dtype=np.float32)
        tmp = np.empty(n, dtype=np.float32)
        for j in nz:
            np.multiply(self.mat_t[j, :n], q[j], out=tmp)
            out += tmp
        return out


class TenantMirror:
    """One tenant's mirror in this process: its versions (``v``) and episodes
    (``e``), with scope, entity and predicate codes shared by both. ``last`` is the
    transaction time synced to and ``erased`` the erase marker last seen; ``sync``
    (under ``lock``) brings both up to the tenant's clock row."""

    def __init__(self, tenant: str, dim: int):
        self.tenant = tenant
        self.dim = dim
        self.last = -(2**63)
        self.erased: int | None = None
        self.v = Mirror("v", dim)
        self.e = Mirror("e", dim)
        self.scopes = Codes()
        self.entities = Codes()
        self.preds = Codes()
        self.lock = threading.Lock()

    def _vecs(self, conn: Connection, kind: str, ids: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(ids), 900):
            rows = conn.execute(
                select(vectors.c.item_id, vectors.c.vec).where(
                    vectors.c.tenant == self.tenant,
                    vectors.c.kind == kind,
                    vectors.c.item_id.in_(ids[i : i + 900]),
                )
            )
            for item_id, blob in rows:
                out[item_id] = np.frombuffer(blob, dtype="<f4")
        return out

    def _append(self, m: Mirror, rows: Sequence[Any], conn: Connection) -> None:
        new = [r for r in rows if r.id not in m.pos]
        if not new:
            return
        first = m.n
        for j, r in enumerate(new):
            m.pos[r.id] = first + j
            m.ids.append(r.id)
            m.hashes.append(r.content_hash)
        sc = self.scopes.code
        m.user.extend([sc(r.user_id) for r in new])
        m.agent.extend([sc(r.agent_id) for r in new])
        m.session.extend([sc(r.session_id) for r in new])
        m.rec.extend([r.recorded_at for r in new])
        if m.kind == "v":
            ec = self.entities.code
            m.start.extend([r.valid_from for r in new])
            m.end.extend([MAX if r.valid_to is None else r.valid_to for r in new])
            m.sup.extend([MAX if r.superseded_at is None else r.superseded_at for r in new])
            m.subj.extend([ec(r.subject_key) for r in new])
            m.obj.extend([ec(r.object_key) for r in new])
            m.pred.extend([self.preds.code(r.predicate) for r in new])
            m.subjects.extend([r.subject_key for r in new])
            for j in range(len(new)):
                p = first + j
                for code in {int(m.subj.a[p]), int(m.obj.a[p])}:
                    m.by_entity.setdefault(code, []).append(p)
        else:
            m.start.extend([r.occurred_at for r in new])
            m.end.extend([MAX] * len(new))
            m.sup.extend([MAX] * len(new))
        vecs = self._vecs(conn, m.kind, [r.id for r in new])
        block = np.zeros((len(new), self.dim), dtype=np.float32)
        flags = []
        for j, r in enumerate(new):
            vec = vecs.get(r.id)
            if vec is not None and len(vec) == self.dim:
                block[j] = vec
                flags.append(True)
            else:
                flags.append(False)
        m.has_vec.extend(flags)
        m.add_vectors(first, block)

    def sync(self, conn: Connection) -> None:
        """Bring the mirror up to the database's latest transaction time."""
        with self.lock:
            row = conn.execute(
                select(txclock.c.last_us, txclock.c.erased_us).where(
                    txclock.c.tenant == self.tenant
                )
            ).first()
            if row is None:  # the tenant was purged (or never written): nothing to mirror
                if self.v.n or self.e.n:
                    self.__init__(self.tenant, self.dim)  # type: ignore[misc]
                return
            last, erased = row[0], row[1]
            if erased != self.erased:
                self.__init__(self.tenant, self.dim)  # type: ignore[misc]
                self.erased = erased
            if last is None or last == self.last:
                return
            since = self.last
            vcols = [
                versions.c.id, versions.c.content_hash, versions.c.user_id, versions.c.agent_id,
                versions.c.session_id, versions.c.valid_from, versions.c.valid_to,
                versions.c.recorded_at, versions.c.superseded_at, versions.c.subject_key,
                versions.c.object_key, versions.c.predicate,
            ]  # fmt: skip
            rows = conn.execute(
                select(*vcols)
                .where(
                    versions.c.tenant == self.tenant,
                    or_(versions.c.recorded_at > since, versions.c.superseded_at > since),
                )
                .order_by(versions.c.recorded_at, versions.c.id)
            ).all()
            m = self.v
            for r in rows:  # closes of versions we already hold
                p = m.pos.get(r.id)
                if p is not None and r.superseded_at is not None:
                    m.sup.a[p] = r.superseded_at
            self._append(m, rows, conn)
            ecols = [
                episodes.c.id, episodes.c.content_hash, episodes.c.user_id, episodes.c.agent_id,
                episodes.c.session_id, episodes.c.occurred_at, episodes.c.recorded_at,
            ]  # fmt: skip
            erows = conn.execute(
                select(*ecols)
                .where(and_(episodes.c.tenant == self.tenant, episodes.c.recorded_at > since))
                .order_by(episodes.c.recorded_at, episodes.c.id)
            ).all()
            self._append(self.e, erows, conn)
            self.last = last


class MirrorSet:
    """One mirror per tenant, created on first use."""

    def __init__(self, dim: int):
        self.dim = dim
        self._by_tenant: dict[str, TenantMirror] = {}
        self._lock = threading.Lock()

    def get(self, tenant: str) -> TenantMirror:
        with self._lock:
            m = self._by_tenant.get(tenant)
            if m is None:
                m = self._by_tenant[tenant] = TenantMirror(tenant, self.dim)
            return m

    def clear(self) -> None:
        with self._lock:
            self._by_tenant.clear()
