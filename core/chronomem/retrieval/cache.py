"""An in-process mirror of one tenant's versions and episodes, for the vector,
entity-graph legs, the context lift and the final scores: time, scope and entity
columns as numpy arrays, and the vectors quantised to int8.

Bounded (issue #19): every column is a fixed-width numpy array (ids and content
hashes as bytes, no Python object per row), the id -> position map and the
entity -> facts map are sorted arrays plus a small tail, and each vector is kept
as int8 codes with a per-vector scale (a quarter of float32). The vector leg
scans the codes and re-scores its candidates exactly from the float32 vectors in
``cm_vectors``; the quantisation error of every row is bounded, so the re-scored
ranking is the one an exact float32 scan gives (``vector_leg``). At 1M facts of
the 256-dim hashing embedder that is ~256 MB of codes instead of ~1 GB.

It is synced incrementally by transaction time: every write bumps the
tenant's clock row, so a search reads that one row and fetches only versions
recorded or superseded since the last sync (works across processes), streamed
in chunks (a full load never holds every row at once). Erasure bumps an erase
marker, which forces a full reload."""

from __future__ import annotations

import bisect
import contextlib
import json
import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
from sqlalchemy import Connection, and_, bindparam, func, or_, select

from .. import backends
from ..prepared import Ahead, Prepared, PreparedIn
from ..schema import episodes, txclock, vectors, versions
from .querytime import words

T = TypeVar("T")

MAX = np.iinfo(np.int64).max
BLOCK = 65_536  # vectors per block of int8 codes (column-major: dim x BLOCK)
SYNC_CHUNK = 20_000  # rows per fetched partition of a sync
TAIL = 4_096  # unindexed rows an index tolerates before it re-sorts (at least)
# The largest code point: a name starting with a prefix sorts below prefix + it,
# unless it continues with that very code point.
_LAST = chr(0x10FFFF)
DENSE_SLAB = 1_024  # rows of codes converted to float32 at once for a dense query
# A mirror whose float32 vectors fit in this many bytes keeps them too (10k rows of
# 256 dims: 10 MB), so the vector leg re-scores its candidates in process: no round
# trip to ``cm_vectors``. A larger one drops them (once) and re-scores from SQL.
FLOAT_BUDGET = 64 << 20


class Grow:
    """A 1-d numpy array with amortised appends (x1.5; ``reserve`` sizes exactly)."""

    def __init__(self, dtype: Any, fill: Any = 0):
        self.a = np.full(64, fill, dtype=dtype)
        self.n = 0
        self.fill = fill

    def reserve(self, cap: int) -> None:
        if cap > len(self.a):
            b = np.full(cap, self.fill, dtype=self.a.dtype)
            b[: self.n] = self.a[: self.n]
            self.a = b

    def extend(self, values: Any) -> None:
        need = self.n + len(values)
        if need > len(self.a):
            self.reserve(max(need, len(self.a) + len(self.a) // 2))
        self.a[self.n : need] = values
        self.n = need

    @property
    def view(self) -> np.ndarray:
        return self.a[: self.n]


class Strs(Grow):
    """ASCII-ish strings as fixed-width bytes (UTF-8; the width grows to the longest)."""

    def __init__(self) -> None:
        super().__init__("S1", b"")

    def extend(self, values: Any) -> None:
        enc = [s.encode("utf-8", "surrogatepass") for s in values]
        width = max((len(b) for b in enc), default=1)
        if width > self.a.dtype.itemsize:
            self.a = self.a.astype(f"S{width}")
        super().extend(enc)

    def __getitem__(self, p: Any) -> str:
        return bytes(self.a[p]).decode("utf-8", "surrogatepass")

    def take(self, positions: Any) -> list[str]:
        """The strings at ``positions`` (one gather, then one decode each)."""
        return [b.decode("utf-8", "surrogatepass") for b in self.a[positions].tolist()]

    def __len__(self) -> int:
        return self.n


class Ids(Strs):
    """Row ids with ``get(id) -> position``: a sorted copy of the first ``base`` ids
    (binary search) and a dict for the rows appended since; the sorted part is
    rebuilt when the tail outgrows ``max(TAIL, base / 8)`` (amortised O(log n))."""

    def __init__(self) -> None:
        super().__init__()
        # (sorted ids, their positions, tail id -> position), replaced as a whole
        self._state: tuple[np.ndarray, np.ndarray, dict[str, int]] = (
            np.empty(0, dtype="S1"),
            np.empty(0, dtype=np.int64),
            {},
        )
        self._upto = 0  # rows the state covers
        self._lock = threading.Lock()

    def _refresh(self) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
        if self._upto == self.n:
            return self._state
        with self._lock:
            n = self.n
            keys, _, tail = self._state
            if n - len(keys) > max(TAIL, len(keys) // 8):
                order = np.argsort(self.a[:n], kind="stable")
                self._state = (self.a[:n][order], order, {})
            else:
                for p in range(self._upto, n):
                    tail[self[p]] = p
            self._upto = n
            return self._state

    def get(self, s: str, default: int | None = None) -> int | None:
        keys, order, tail = self._refresh()
        p = tail.get(s)
        if p is not None:
            return p
        b = s.encode("utf-8", "surrogatepass")
        if not b or len(b) > keys.dtype.itemsize:
            return default
        i = int(np.searchsorted(keys, b))
        if i < len(keys) and keys[i] == b:
            return int(order[i])
        return default

    def __contains__(self, s: object) -> bool:
        return isinstance(s, str) and self.get(s) is not None

    def get_many(self, ss: Sequence[str]) -> np.ndarray:
        """``get`` of each id at once (one binary search over all of them): their
        positions, -1 for an id not held."""
        keys, order, tail = self._refresh()
        out = np.full(len(ss), -1, dtype=np.int64)
        if not len(ss):
            return out
        width = keys.dtype.itemsize
        enc = [s.encode("utf-8", "surrogatepass") for s in ss]
        lens = np.fromiter(map(len, enc), dtype=np.int64, count=len(enc))
        fits = (lens > 0) & (lens <= width)
        if len(keys) and fits.any():
            want = np.array(enc, dtype=keys.dtype if lens.max() <= width else None)
            i = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
            hit = fits & (keys[i] == want)
            out[hit] = order[i[hit]]
        if tail:
            for j, s in enumerate(ss):
                p = tail.get(s)
                if p is not None:
                    out[j] = p
        return out


class EntityIndex:
    """Entity code -> positions of the versions whose subject or object it is:
    the codes of the first ``base`` rows sorted once (and re-sorted as the
    ``Ids`` tail is), the rows after them scanned."""

    def __init__(self, subj: Grow, obj: Grow):
        self.subj, self.obj = subj, obj
        # (sorted codes, their positions, rows covered), replaced as a whole
        self._state: tuple[np.ndarray, np.ndarray, int] = (
            np.empty(0, dtype=np.int32),
            np.empty(0, dtype=np.int64),
            0,
        )
        self._lock = threading.Lock()

    def get(self, code: int, default: Any = ()) -> Any:
        n = self.subj.n
        if n - self._state[2] > max(TAIL, self._state[2] // 8):
            with self._lock:
                if n - self._state[2] > max(TAIL, self._state[2] // 8):
                    both = np.concatenate([self.subj.a[:n], self.obj.a[:n]])
                    order = np.argsort(both, kind="stable")
                    self._state = (both[order], order % n, n)
        codes, pos, base = self._state
        # the rows of ``code``: searched as the array's own integer type (a Python list
        # of ints made numpy convert the whole array to int64 first, ~30 us a call)
        c = codes.dtype.type(code)
        lo, hi = codes.searchsorted(c, "left"), codes.searchsorted(c, "right")
        tail = np.flatnonzero((self.subj.a[base:n] == code) | (self.obj.a[base:n] == code))
        out = np.unique(np.concatenate([pos[lo:hi], tail + base]))
        return [int(p) for p in out] if len(out) else default


class Codes:
    """Strings to small ints; '' is always 0."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {"": 0}
        self.names: list[str] = [""]
        # the first ``base`` names sorted, and their codes; replaced as a whole
        self._sorted: tuple[list[str], np.ndarray, int] = ([""], np.zeros(1, np.int64), 1)
        self._lock = threading.Lock()

    def code(self, s: str) -> int:
        c = self.index.get(s)
        if c is None:
            c = self.index[s] = len(self.names)
            self.names.append(s)
        return c

    def get(self, s: str | None) -> int:
        return self.index.get(s or "", -1) if s else 0

    def with_prefix(self, prefix: str) -> np.ndarray:
        """The codes of the names starting with ``prefix``: those names are one run
        of the names in sorted order, found by binary search (sorted once, again
        when the unsorted tail outgrows ``TAIL`` or an eighth), plus a scan of
        the names added since."""
        n = len(self.names)
        if n - self._sorted[2] > max(TAIL, self._sorted[2] // 8):
            with self._lock:
                if n - self._sorted[2] > max(TAIL, self._sorted[2] // 8):
                    names = self.names[:n]
                    order = sorted(range(n), key=names.__getitem__)
                    self._sorted = ([names[i] for i in order], np.asarray(order, np.int64), n)
        names_sorted, codes, base = self._sorted
        lo = bisect.bisect_left(names_sorted, prefix)
        # every name above the prefix and below prefix + the last code point starts
        # with it; names continuing past that code point (rare) follow the run
        hi = bisect.bisect_left(names_sorted, prefix + _LAST, lo)
        while hi < len(names_sorted) and names_sorted[hi].startswith(prefix):
            hi += 1
        tail = [c for c in range(base, n) if self.names[c].startswith(prefix)]
        return np.concatenate([codes[lo:hi], np.asarray(tail, np.int64)])


def speaker_of(role: str | None, meta: str | None) -> str | None:
    """An episode's speaker: its ``metadata["speaker"]`` (what ``add`` records for a
    named message) or else its role."""
    speaker = role
    if meta and '"speaker"' in meta:
        with contextlib.suppress(ValueError, AttributeError):
            named = json.loads(meta).get("speaker")
            if isinstance(named, str):
                speaker = named
    return speaker


class Quantized:
    """Vectors as int8 codes (``round(v / scale)``, ``scale = max|v| / 127`` per
    vector), column-major in blocks of ``BLOCK`` rows, with each vector's scale and
    its largest rounding error (``max |v - codes * scale|``, kept as ``slack`` with
    float rounding added). For a query ``q`` the approximate score is off the
    float32 one by at most ``|q|_1 * slack``: ``bound``."""

    def __init__(self, dim: int):
        self.dim = dim
        self.blocks: list[np.ndarray] = []
        self.scale = Grow(np.float32)
        self.slack = Grow(np.float32)  # per vector: its rounding error bound

    @property
    def n(self) -> int:
        return self.scale.n

    def reserve(self, cap: int) -> None:
        self.scale.reserve(cap)
        self.slack.reserve(cap)

    def extend(self, vecs: np.ndarray) -> None:
        first = self.n
        amax = np.abs(vecs).max(axis=1) if len(vecs) else np.empty(0, np.float32)
        scale = (amax / 127).astype(np.float32)
        safe = np.where(scale > 0, scale, 1).astype(np.float32)
        codes = np.clip(np.rint(vecs / safe[:, None]), -127, 127).astype(np.int8)
        # a non-zero component never rounds to 0: a row's codes are zero on a query's
        # dimensions exactly when its vector is (its score is then exactly 0: touched)
        tiny = (codes == 0) & (vecs != 0)
        codes[tiny] = np.sign(vecs[tiny]).astype(np.int8)
        resid = np.abs(vecs - codes.astype(np.float32) * scale[:, None]).max(axis=1, initial=0)
        # plus float32 rounding of a dim-term sum of products of size <= max|v|
        slack = resid + 1e-6 * self.dim * amax
        self.scale.extend(scale)
        self.slack.extend(slack.astype(np.float32))
        done = 0
        while done < len(vecs):
            p = first + done
            b, off = divmod(p, BLOCK)
            if b == len(self.blocks):
                self.blocks.append(np.zeros((self.dim, BLOCK), dtype=np.int8))
            take = min(BLOCK - off, len(vecs) - done)
            self.blocks[b][:, off : off + take] = codes[done : done + take].T
            done += take

    def approx(self, q: np.ndarray) -> np.ndarray:
        """Approximate cosine of the query with every row (float32)."""
        n = self.n
        out = np.zeros(n, dtype=np.float32)
        nz = np.flatnonzero(q)
        sparse = len(nz) * 4 <= self.dim
        tmp = np.empty(BLOCK, dtype=np.float32)
        # a dense query: codes converted a cache-sized slab at a time, then one BLAS
        # product per slab (a larger slab, or the whole block, ran several times slower)
        slab = np.empty((self.dim, DENSE_SLAB), dtype=np.float32)
        for b, block in enumerate(self.blocks):
            lo = b * BLOCK
            cnt = min(BLOCK, n - lo)
            if cnt <= 0:
                break
            dst = out[lo : lo + cnt]
            if sparse:
                # one contiguous multiply-add per non-zero dimension of the query
                t = tmp[:cnt]
                for j in nz:
                    np.multiply(block[j, :cnt], q[j], out=t)
                    dst += t
            else:
                for s in range(0, cnt, DENSE_SLAB):
                    e = min(cnt, s + DENSE_SLAB)
                    part = slab[:, : e - s]
                    np.copyto(part, block[:, s:e], casting="unsafe")
                    np.matmul(q, part, out=dst[s:e])
        out *= self.scale.view
        return out

    def touched(self, q: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Whether each row at ``positions`` has a non-zero code on a non-zero
        dimension of the query (a row that has not scores exactly 0)."""
        nz = np.flatnonzero(q)
        out = np.zeros(len(positions), dtype=bool)
        blk, off = np.divmod(positions, BLOCK)
        for b in np.unique(blk):
            sel = blk == b
            out[sel] = (self.blocks[int(b)][nz][:, off[sel]] != 0).any(axis=0)
        return out

    def bound(self, q: np.ndarray) -> np.ndarray:
        """Per row, how far ``approx`` can be from the float32 score: ``|q|_1`` times
        the row's ``slack`` (its largest rounding error plus float32 rounding of a
        dim-term sum), plus a constant for the query's own rounding."""
        return float(np.abs(q).sum()) * self.slack.view + np.float32(1e-6)


class Floats:
    """The float32 vectors themselves (row-major, amortised growth) while they fit
    in ``FLOAT_BUDGET`` bytes; past that, none (``rows`` is None from then on)."""

    def __init__(self, dim: int):
        self.dim = dim
        self.a: np.ndarray | None = np.zeros((0, dim), dtype=np.float32)
        self.n = 0

    def fits(self, rows: int) -> bool:
        return rows * self.dim * 4 <= FLOAT_BUDGET

    def reserve(self, cap: int) -> None:
        if self.a is None or cap <= len(self.a):
            return
        if not self.fits(cap):
            self.a = None
            return
        b = np.zeros((cap, self.dim), dtype=np.float32)
        b[: self.n] = self.a[: self.n]
        self.a = b

    def extend(self, vecs: np.ndarray) -> None:
        need = self.n + len(vecs)
        if self.a is not None and need > len(self.a):
            grown = max(need, len(self.a) + len(self.a) // 2)
            self.reserve(grown if self.fits(grown) else need)
        if self.a is None:
            return
        self.a[self.n : need] = vecs
        self.n = need

    def rows(self, positions: np.ndarray) -> np.ndarray | None:
        """The vectors at ``positions`` (a copy), or None when not kept."""
        a = self.a
        if a is None or (len(positions) and int(positions.max()) >= self.n):
            return None
        return a[positions]


# the tenant's clock row, read by every search (compiled once)
_CLOCK = Prepared(
    select(txclock.c.last_us, txclock.c.erased_us, txclock.c.registry_us).where(
        txclock.c.tenant == bindparam("tenant")
    )
)
# the stored float32 vectors of some rows (compiled once per id-list length)
_EXACT = PreparedIn(
    lambda ids: select(vectors.c.item_id, vectors.c.vec).where(
        vectors.c.tenant == bindparam("t"),
        vectors.c.kind == bindparam("k"),
        vectors.c.item_id.in_(ids),
    )
)


def stored_vectors(
    conn: Connection, tenant: str, kind: str, ids: Sequence[str]
) -> dict[str, bytes]:
    """item id -> its stored float32 vector (bytes), for those of ``ids`` that have one."""
    return {i: v for i, v in _EXACT.rows(conn, {"t": tenant, "k": kind}, ids)}


@dataclass
class Mirror:
    """Rows of one kind ('v' versions, 'e' episodes) of one tenant."""

    kind: str
    dim: int
    tenant: str = ""
    with_vectors: bool = True
    ids: Ids = field(default_factory=Ids)
    hashes: Strs = field(default_factory=Strs)

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
        self.speaker = Grow(np.int32)  # episodes: the speaker's code (speaker_of)
        self.role = Grow(np.int32)  # episodes: the role's code (in the speakers' codes)
        self.vecs = Quantized(self.dim)
        self.floats = Floats(self.dim)  # while small: exact re-scores in process
        self.by_entity = EntityIndex(self.subj, self.obj)  # entity code -> positions

    @property
    def n(self) -> int:
        return self.ids.n

    @property
    def pos(self) -> Ids:
        """id -> position (``.get``, ``in``)."""
        return self.ids

    def reserve(self, cap: int) -> None:
        cols = [self.start, self.end, self.rec, self.sup, self.user, self.agent, self.session]
        if self.kind == "v":
            cols += [self.subj, self.obj, self.pred]
        else:
            cols += [self.speaker, self.role]
        for g in [*cols, self.has_vec, self.ids, self.hashes]:
            g.reserve(cap)
        if self.with_vectors:
            self.vecs.reserve(cap)
            self.floats.reserve(cap)

    def scores(self, q: np.ndarray) -> np.ndarray:
        """Approximate cosine similarity of the query with every row (int8 codes): a
        new array, the caller's to change."""
        return self.vecs.approx(q)

    def exact(self, conn: Connection, positions: Sequence[int], q: np.ndarray) -> np.ndarray:
        """The float32 cosine of the query with the rows at ``positions``, from the
        vectors stored in ``cm_vectors`` (-inf where the row has none any more), or
        from the mirror's own float32 copy of them while it keeps one (``Floats``:
        the same vectors, so the same scores, without a round trip)."""
        at = np.asarray(positions, dtype=np.int64)
        out = np.full(len(at), -np.inf, dtype=np.float32)
        held = self.floats.rows(at)
        if held is not None:
            mat = held
            have = self.has_vec.a[at]
        else:
            ids = self.ids.take(at)
            found = stored_vectors(conn, self.tenant, self.kind, ids)
            mat = np.zeros((len(ids), self.dim), dtype=np.float32)
            blobs = [found.get(i) for i in ids]
            size = 4 * self.dim
            have = np.fromiter((b is not None and len(b) == size for b in blobs), bool, len(ids))
            if have.any():
                kept = b"".join(b for b, h in zip(blobs, have.tolist(), strict=True) if h and b)
                mat[have] = np.frombuffer(kept, dtype="<f4").reshape(-1, self.dim)
        if len(at):
            # per row, numpy's pairwise sum of the products: a row's score does not
            # depend on which other rows are re-scored with it (a BLAS product may)
            out[have] = (mat * q.astype(np.float32)).sum(axis=1, dtype=np.float32)[have]
        return out


class TenantMirror:
    """One tenant's mirror in this process: its versions (``v``) and episodes
    (``e``), with scope, entity and predicate codes shared by both. ``last`` is the
    transaction time synced to and ``erased`` the erase marker last seen (it also
    moves when a write is stamped at or before the clock's last stamp, whose rows a
    sync from ``last`` would never read: ``Backend.advance_clock``); ``sync``
    (under ``lock``) brings both up to the tenant's clock row. Without vectors
    (``with_vectors=False``: PostgreSQL with pgvector ranks vectors in SQL) the
    mirror holds the columns only."""

    def __init__(self, tenant: str, dim: int, with_vectors: bool = True):
        self.tenant = tenant
        self.dim = dim
        self.with_vectors = with_vectors
        self.last = -(2**63)
        self.erased: int | None = None
        # the clock row's registry version as the last sync read it (a search
        # hands it to ``Registry.load``, sparing that read)
        self.registry_us: int | None = None
        self.v = Mirror("v", dim, tenant, with_vectors)
        self.e = Mirror("e", dim, tenant, with_vectors)
        self.scopes = Codes()
        self.entities = Codes()
        self.preds = Codes()
        self.speakers = Codes()
        self._speaker_words: list[frozenset[str]] = []  # per speaker code, its words
        self.lock = threading.Lock()

    def _reset(self) -> None:
        self.__init__(self.tenant, self.dim, self.with_vectors)  # type: ignore[misc]

    def _append(self, m: Mirror, rows: Sequence[Any], held_upto: int) -> None:
        """Append the rows not held yet (only one recorded by ``held_upto``, the
        latest recorded_at held before this sync, can be)."""
        new = [r for r in rows if r.recorded_at > held_upto or r.id not in m.pos]
        if not new:
            return
        m.ids.extend([r.id for r in new])
        m.hashes.extend([r.content_hash for r in new])
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
        else:
            m.start.extend([r.occurred_at for r in new])
            m.end.extend([MAX] * len(new))
            m.sup.extend([MAX] * len(new))
            spk = self.speakers.code
            m.speaker.extend([spk(speaker_of(r.role, r.metadata) or "") for r in new])
            m.role.extend([spk(r.role or "") for r in new])
            names = self.speakers.names
            for c in range(len(self._speaker_words), len(names)):
                self._speaker_words.append(frozenset(words(names[c])))
        if not self.with_vectors:
            m.has_vec.extend([False] * len(new))
            return
        size = 4 * self.dim
        flags = [r.vec is not None and len(r.vec) == size for r in new]
        block = np.zeros((len(new), self.dim), dtype=np.float32)
        for j, r in enumerate(new):
            if flags[j]:
                block[j] = np.frombuffer(r.vec, dtype="<f4")
        m.has_vec.extend(flags)
        m.vecs.extend(block)
        m.floats.extend(block)

    def spoken_by(
        self, positions: np.ndarray, terms: Sequence[str], roles: frozenset[str] = frozenset()
    ) -> np.ndarray:
        """Whether each episode at ``positions`` was spoken by someone the query
        names: a word of its speaker (``speaker_of``) is one of ``terms``, or its
        role is one of ``roles`` (``legs.addressed_roles``)."""
        known = self._speaker_words  # kept by _append, under the sync's lock
        wanted = set(terms)
        codes = self.e.speaker.a[positions]
        hit = [c for c in np.unique(codes).tolist() if not wanted.isdisjoint(known[c])]
        out = np.isin(codes, hit)
        named = [c for c in (self.speakers.get(r) for r in roles) if c > 0]
        if named:
            out |= np.isin(self.e.role.a[positions], named)
        return out

    def _rows(self, conn: Connection, tbl: Any, kind: str, cols: list[Any], where: Any) -> Any:
        """The rows (with their stored vector, when the mirror keeps vectors), in
        partitions of ``SYNC_CHUNK`` (a full load is never materialised at once)."""
        if self.with_vectors:
            join = tbl.outerjoin(
                vectors,
                and_(
                    vectors.c.tenant == tbl.c.tenant,
                    vectors.c.kind == kind,
                    vectors.c.item_id == tbl.c.id,
                ),
            )
            stmt = select(*cols, vectors.c.vec).select_from(join)
        else:
            stmt = select(*cols)
        stmt = (
            stmt.where(where)
            .order_by(tbl.c.recorded_at, tbl.c.id)
            .execution_options(yield_per=SYNC_CHUNK)
        )
        return conn.execute(stmt).partitions()

    def clock_read(self) -> Ahead:
        """The tenant's clock row as a read that can go ahead of another statement
        (a search's lexical leg), for ``sync`` to start from."""
        return Ahead(_CLOCK, {"tenant": self.tenant})

    def sync(self, conn: Connection, clock: Ahead | None = None) -> None:
        """Bring the mirror up to the database's latest transaction time: the clock
        row ``clock`` read (``clock_read``), or else its own read of it. A row read
        before another thread synced the mirror past it is read again."""
        with self.lock:
            rows = clock.rows if clock is not None else None
            if rows is not None and rows and rows[0][0] is not None and rows[0][0] < self.last:
                rows = None
            if rows is None:
                rows = _CLOCK.rows(conn, {"tenant": self.tenant})
            row = rows[0] if rows else None
            if row is None:  # the tenant was purged (or never written): nothing to mirror
                if self.v.n or self.e.n:
                    self._reset()
                self.registry_us = None
                return
            last, erased = row[0], row[1]
            if erased != self.erased:
                self._reset()
                self.erased = erased
            self.registry_us = row[2]
            if last is None or last == self.last:
                return
            # the rows stream through a server-side cursor, which needs a transaction
            # (a search reads the clock outside one: Backend.statement_read)
            with backends.of(conn).transaction_block(conn):
                self._catch_up(conn, last)

    def _catch_up(self, conn: Connection, last: int) -> None:
        """Read the rows recorded (or closed) since ``self.last`` up to ``last``."""
        since = self.last
        if self.v.n == 0 and self.e.n == 0:  # a full load: size the columns once
            for m, tbl in ((self.v, versions), (self.e, episodes)):
                count = conn.execute(
                    select(func.count()).select_from(tbl).where(tbl.c.tenant == self.tenant)
                ).scalar_one()
                m.reserve(int(count))
        vcols = [
            versions.c.id, versions.c.content_hash, versions.c.user_id, versions.c.agent_id,
            versions.c.session_id, versions.c.valid_from, versions.c.valid_to,
            versions.c.recorded_at, versions.c.superseded_at, versions.c.subject_key,
            versions.c.object_key, versions.c.predicate,
        ]  # fmt: skip
        m = self.v
        held_v = int(m.rec.view.max()) if m.n else -(2**63)
        held_e = int(self.e.rec.view.max()) if self.e.n else -(2**63)
        changed = and_(
            versions.c.tenant == self.tenant,
            or_(versions.c.recorded_at > since, versions.c.superseded_at > since),
        )
        for part in self._rows(conn, versions, "v", vcols, changed):
            for r in part:  # closes of versions we already hold
                if r.superseded_at is not None and r.recorded_at <= held_v:
                    p = m.pos.get(r.id)
                    if p is not None:
                        m.sup.a[p] = r.superseded_at
            self._append(m, part, held_v)
        ecols = [
            episodes.c.id, episodes.c.content_hash, episodes.c.user_id, episodes.c.agent_id,
            episodes.c.session_id, episodes.c.occurred_at, episodes.c.recorded_at,
            episodes.c.role, episodes.c.metadata,
        ]  # fmt: skip
        recorded = and_(episodes.c.tenant == self.tenant, episodes.c.recorded_at > since)
        for part in self._rows(conn, episodes, "e", ecols, recorded):
            self._append(self.e, part, held_e)
        self.last = last


HELD_ROWS = 8_192  # version rows ``HeldRows`` keeps at most (a prefix search reads <= 2,000)
STAMPED_READS = 1_024  # reads ``HeldRows.stamped`` answers at most (then dropped whole)


class HeldRows:
    """Version rows as a search within a prefix read them (``retrieval/within.py``:
    every column, the indexed text, the stored vector), by tenant and version id.
    A version never changes but for what a close sets (``reads.CLOSING_COLUMNS``,
    docs/design.md §2), so a search whose rows are all held reads only those
    columns and takes the rest from here. Erasure deletes rows (a deleted version
    is no longer read, so never looked up); the set is dropped whole when full
    and with the mirrors (``MirrorSet.clear``: erasure, repair, import,
    re-embedding in this process).

    ``view`` keeps, beside the rows, what a caller derives from a whole row set
    (``within.Rows``: term counts, the entity index, the vector matrix), keyed by
    the closing read's values: the same values name the same rows (the held
    columns never change while they are held), so a search of a namespace nothing
    was written to since derives nothing again. Views go with the rows.

    ``stamped`` skips even the closing read: a view is also kept by what the read
    asked (``stamp``: its scope, prefix, filters and belief instant) with the
    tenant's clock stamp the search read before it (``reads.PrefixSize.stamp``)
    and the valid instants over which its time filter keeps the same versions;
    a search reading the same stamp inside them is answered by it."""

    def __init__(self, cap: int = HELD_ROWS):
        self.cap = cap
        # (tenant, version id) -> (the row, its values of the closing read's columns)
        self._rows: dict[tuple[str, str], tuple[dict[str, Any], tuple[Any, ...]]] = {}
        # (tenant, columns, the closing read's rows) -> what ``view``'s ``derive`` built,
        # and how many rows those views were derived from (at most ``cap``, as held)
        self._views: dict[tuple[Any, ...], Any] = {}
        self._view_rows = 0
        # what a read asked -> (the clock stamp, the first valid instant and the one
        # past the last it holds for, None: no end; the view), views of ``_views``
        # (dropped with them, so they hold no more rows)
        self._stamped: dict[Hashable, tuple[Any, int, int | None, Any]] = {}
        self._lock = threading.Lock()

    def stamped(self, asked: Hashable, stamp: Any, valid_at: int) -> Any:
        """The view ``stamp`` kept for ``asked`` at the clock stamp ``stamp``, when
        ``valid_at`` is inside the valid instants it holds for; else None."""
        found = self._stamped.get(asked)
        if found is None:
            return None
        at, since, until, view = found
        if at != stamp or valid_at < since or (until is not None and valid_at >= until):
            return None
        return view

    def stamp_of(self, asked: Hashable, valid_at: int) -> Any:
        """The clock stamp a view is kept at for ``asked`` when ``valid_at`` is
        inside the valid instants it holds for (``stamped`` answers with it while
        the clock is at that stamp); else None."""
        found = self._stamped.get(asked)
        if found is None:
            return None
        at, since, until, _ = found
        if valid_at < since or (until is not None and valid_at >= until):
            return None
        return at

    def stamp(self, asked: Hashable, stamp: Any, since: int, until: int | None, view: Any) -> None:
        """Keep ``view`` for ``asked`` at the clock stamp ``stamp``: the rows of the
        read at that stamp at every valid instant in ``[since, until)`` (``until``
        None: every one from ``since`` on). A stamp read before the rows were
        (another snapshot, on PostgreSQL) only names rows as new or newer."""
        with self._lock:
            if len(self._stamped) >= STAMPED_READS and asked not in self._stamped:
                self._stamped = {}
            self._stamped[asked] = (stamp, since, until, view)

    def view(
        self,
        tenant: str,
        columns: Sequence[str],
        closing: Sequence[Sequence[Any]],
        derive: Callable[[list[dict[str, Any]]], T],
    ) -> T | None:
        """``derive`` of the rows ``complete`` gives for ``closing``, kept by the
        closing read's values (the same values: the same rows, the value derived
        before); None unless every row is held."""
        key = (tenant, tuple(columns), tuple(map(tuple, closing)))
        found = self._views.get(key)
        if found is not None:
            return cast(T, found)
        rows = self.complete(tenant, columns, closing)
        if rows is None:
            return None
        out = derive(rows)
        with self._lock:
            self._keep_view(key, len(rows), out)
        return out

    def _keep_view(self, key: tuple[Any, ...], size: int, view: Any) -> None:
        """Keep ``view`` (of ``size`` rows), dropping every view first when the
        views would be of more than ``cap`` rows in all (a row closed since it was
        held is a copy of its own in each view holding it). Under the lock."""
        if self._view_rows + size > self.cap:
            self._views = {}
            self._view_rows = 0
            self._stamped = {}
        if size <= self.cap and key not in self._views:
            self._views[key] = view
            self._view_rows += size

    def complete(
        self, tenant: str, columns: Sequence[str], closing: Sequence[Sequence[Any]]
    ) -> list[dict[str, Any]] | None:
        """Each row of ``closing`` (a ``closing_only`` read: ``columns``, the version
        id first) completed from the held row of its version, its own values
        winning; None unless every one is held. A row whose values are those held
        (a current version stays so until it is closed) is the held row itself:
        callers read the rows, never write them (but for what they derive from
        the unchanging columns alone: ``within.lexical``'s term counts)."""
        rows = self._rows
        out = []
        for c in closing:
            found = rows.get((tenant, c[0]))
            if found is None:
                return None
            held, seen = found
            c = tuple(c)
            out.append(held if c == seen else {**held, **dict(zip(columns, c, strict=True))})
        return out

    def hold(
        self,
        tenant: str,
        columns: Sequence[str],
        rows: Sequence[dict[str, Any]],
        view: Any = None,
    ) -> None:
        """Keep ``rows`` (whole rows, read with the closing read's ``columns``), and
        ``view`` (what ``view``'s ``derive`` gives for them) if given."""
        closing = [tuple(r[k] for k in columns) for r in rows]
        with self._lock:
            if len(self._rows) + len(rows) > self.cap:
                self._rows = {}
                self._views = {}
                self._view_rows = 0
                self._stamped = {}
            if len(rows) <= self.cap:
                self._rows.update(
                    ((tenant, r["id"]), (r, seen)) for r, seen in zip(rows, closing, strict=True)
                )
                if view is not None:
                    self._keep_view((tenant, tuple(columns), tuple(closing)), len(rows), view)

    def clear(self) -> None:
        with self._lock:
            self._rows = {}
            self._views = {}
            self._view_rows = 0
            self._stamped = {}

    def __len__(self) -> int:
        return len(self._rows)


class MirrorSet:
    """One mirror per tenant, created on first use; and the rows searches within a
    prefix hold (``held``)."""

    def __init__(self, dim: int, with_vectors: bool = True):
        self.dim = dim
        self.with_vectors = with_vectors
        self._by_tenant: dict[str, TenantMirror] = {}
        self._lock = threading.Lock()
        self.held = HeldRows()

    def get(self, tenant: str) -> TenantMirror:
        with self._lock:
            m = self._by_tenant.get(tenant)
            if m is None:
                m = self._by_tenant[tenant] = TenantMirror(tenant, self.dim, self.with_vectors)
            return m

    def clear(self) -> None:
        with self._lock:
            self._by_tenant.clear()
        self.held.clear()
