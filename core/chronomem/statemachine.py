"""The supersession state machine (docs/design.md §3), as pure planning over one slot.

Every write path (structured ``remember``, extraction, every adapter, imports)
goes through ``SlotPlan``: it is loaded with the slot's current versions,
receives operations, and yields the versions to close and the versions to
insert. It knows nothing of SQL; the store applies a plan in one transaction
under the slot's lock. Times are integer microseconds, ``None`` = unbounded.

Valid-time rules, in one place:

* **assert** ``(obj, vf, vt)``. An open-ended assert runs until the next known
  change point: ``vt`` = the earliest ``valid_from > vf`` among the slot's
  current versions. Each explicit open-ended ``valid_from`` is a change point
  and is kept as a version boundary, so open-ended asserts with distinct
  ``valid_from`` give the same timeline in any order. A same-object version
  already covering the interval makes the write ``unchanged`` (retries and
  at-least-once delivery are idempotent) — unless the write names an explicit
  start strictly inside it, which records the new change point. A bounded
  assert merges with same-object versions it overlaps or touches; the merged
  version keeps the fact id of the earliest-starting one (ties: the earlier
  version id), whatever order the database returned the rows in. Other
  objects' versions overlapping the new interval are closed and their parts
  outside it re-inserted.
* **end** at ``t``: each version running across ``t`` is replaced by one that
  stops at ``t``.
* **retract**: the fact's current versions are closed as retracted; valid
  time untouched. **correct** = retract + bounded assert over each retracted
  interval, in the same plan.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .model import CloseReason

_counter = itertools.count()
_id_lock = threading.Lock()
# The random tail's source: seeded from the OS once per process, and again in a
# forked child (which would otherwise repeat its parent's sequence). One
# ``os.urandom`` call per id cost a system call per version written.
_tail = random.Random(os.urandom(32))
os.register_at_fork(after_in_child=lambda: _tail.seed(os.urandom(32)))
_placeholders = itertools.count()


def id_text(us: int, n: int, tail: int) -> str:
    """An id's text: ``us`` in 13 hex digits (more once it outgrows them), the
    12-bit counter ``n`` in 3 and the 32-bit ``tail`` in 8, formatted as one
    number (one format, not three: ``us`` shifted by the other two's 44 bits)."""
    return f"{(us << 44) | (n << 32) | tail:024x}"


def new_id() -> str:
    """A 24-character id that sorts in creation order within a process: microseconds,
    a counter, then 32 random bits. Creation order makes ties in search break the
    same way in every ingest of one corpus; the random tail keeps processes apart."""
    with _id_lock:
        n = next(_counter) & 0xFFF
        tail = _tail.getrandbits(32)
    return id_text(time.time_ns() // 1000, n, tail)


def new_id_pair() -> tuple[str, str]:
    """Two ``new_id``s, in creation order (what two calls give: the second one's
    counter follows the first's), with one lock, clock read and random draw."""
    with _id_lock:
        n = next(_counter) & 0xFFF
        m = next(_counter) & 0xFFF
        tail = _tail.getrandbits(64)
    us = time.time_ns() // 1000
    a = f"{(us << 44) | (n << 32) | (tail >> 32):024x}"  # id_text, inline
    if m == 0:  # the counter wrapped: the second id must still sort after the first
        us = max(time.time_ns() // 1000, us + 1)
    return a, f"{(us << 44) | (m << 32) | (tail & 0xFFFFFFFF):024x}"


_HEX3 = tuple(f"{n:03x}" for n in range(0x1000))  # a counter's three hex digits
_EIGHT = re.compile("[0-9a-f]{8}")  # one id's tail in a batch's run of tails


def new_ids(count: int) -> list[str]:
    """``count`` ``new_id``s, in creation order (what as many calls give; where the
    counter wraps, the ids after it take a later microsecond, as in
    ``new_id_pair``), with one lock, clock read and random draw: a batch's ids."""
    if count <= 0:
        return []
    with _id_lock:
        counters = list(itertools.islice(_counter, count))
        tail = _tail.getrandbits(32 * count)
    us = time.time_ns() // 1000
    tails = f"{tail:0{8 * count}x}"  # 8 hex digits (32 random bits) per id
    stamp = f"{us:013x}"
    first = counters[0] & 0xFFF
    if first + count <= 0x1000 and counters[-1] - counters[0] == count - 1:
        # the counter does not wrap: the same ids, their parts joined in C (the
        # counters' digits from a table, the tails cut by one ``findall``)
        heads = map(stamp.__add__, _HEX3[first : first + count])
        return list(map(str.__add__, heads, _EIGHT.findall(tails)))
    out: list[str] = []
    for i, n in enumerate(counters):
        n &= 0xFFF
        if n == 0 and i:  # the counter wrapped: the rest must still sort after
            us = max(time.time_ns() // 1000, us + 1)
            stamp = f"{us:013x}"
        out.append(f"{stamp}{n:03x}{tails[8 * i : 8 * i + 8]}")
    return out


def _placeholder() -> str:
    """A successor id standing in until the real successor exists (``_rebind``
    replaces it in the same plan; it is never stored). Not an id's shape, so it
    can never equal one."""
    return f"~{next(_placeholders)}"


@dataclass(slots=True)
class SlotVersion:
    """A current version of a slot, stored or planned in this transaction."""

    id: str
    fact_id: str
    object: str
    object_key: str
    valid_from: int
    valid_to: int | None
    planned: bool = False  # inserted by this plan, not yet in the database
    extra: dict[str, Any] = field(default_factory=dict)  # row data carried to new pieces


def _ends_by(a: int | None, b: int | None) -> bool:
    """Interval end ``a`` <= end ``b`` (``None`` = +infinity)."""
    return b is None or (a is not None and a <= b)


def _overlaps(v: SlotVersion, vf: int, vt: int | None) -> bool:
    return (vt is None or v.valid_from < vt) and (v.valid_to is None or v.valid_to > vf)


def _touches(v: SlotVersion, vf: int, vt: int | None) -> bool:
    return _overlaps(v, vf, vt) or v.valid_to == vf or (vt is not None and v.valid_from == vt)


@dataclass
class Outcome:
    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    retracted: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)  # stored ids closed by the plan
    fact_ids: list[str] = field(default_factory=list)
    merges: list[tuple[str, str]] = field(default_factory=list)  # (fact merged away, into fact)


# ``trivial_assert``: the assert inserts one new version, alone in its slot.
NEW = object()


def trivial_assert(
    current: Iterable[SlotVersion],
    key: str,
    vf: int,
    vt: int | None,
    *,
    bounded: bool,
    explicit_start: bool,
) -> object | SlotVersion | None:
    """What ``SlotPlan(current).assert_`` does when that is trivial, without a plan:
    ``NEW`` when the slot holds no version (one new version over ``[vf, vt)``, or
    ``[vf, None)`` unbounded: nothing later to stop at), the version left
    unchanged when a same-object version already covers the write (the same rule
    as ``assert_``), and None when the write changes what the slot holds (a plan
    is needed). The writer's batch path calls it for a slot only one operation
    touches; ``tests/test_trivial_plans.py`` checks it against ``SlotPlan``."""
    versions = current if isinstance(current, list | tuple) else list(current)
    if not versions:
        return NEW
    if not bounded:
        later = [v.valid_from for v in versions if v.valid_from > vf]
        vt = min(later) if later else None
    # the earliest-starting covering version first, as ``SlotPlan`` orders them
    for v in sorted(versions, key=lambda v: (v.valid_from, v.id)):
        if v.object_key != key:
            continue
        covers = v.valid_from <= vf and _ends_by(vt, v.valid_to)
        if covers and (bounded or not explicit_start or v.valid_from == vf):
            return v
    return None


class SlotPlan:
    """Plans writes against one slot's current versions."""

    def __init__(self, current: Iterable[SlotVersion]):
        # In a fixed order, not the database's: a scan returns a slot's rows in
        # physical order, which VACUUM and free-space reuse change on PostgreSQL,
        # and the plan must not depend on it (which fact survives a merge does).
        ordered = sorted(current, key=lambda v: (v.valid_from, v.id))
        self.current: dict[str, SlotVersion] = {v.id: v for v in ordered}
        self.stored_fact_ids = {v.fact_id for v in self.current.values()}
        self.closes: dict[str, tuple[CloseReason, str | None]] = {}  # stored id -> (reason, by)
        self.inserts: dict[str, SlotVersion] = {}
        self.outcome = Outcome()

    # -- primitives -------------------------------------------------------
    def _close(self, v: SlotVersion, reason: CloseReason, by: str | None) -> None:
        del self.current[v.id]
        if v.planned:  # born and closed in one transaction: never believed at any instant
            del self.inserts[v.id]
            for lst in (self.outcome.added, self.outcome.ended):
                if v.id in lst:
                    lst.remove(v.id)
            # what it had superseded is now superseded by its own successor (or by nothing)
            self._rebind(v.id, by)
        else:
            self.closes[v.id] = (reason, by)
            self.outcome.superseded.append(v.id)

    def _insert(
        self, fact_id: str, obj: str, key: str, vf: int, vt: int | None, extra: dict[str, Any]
    ) -> SlotVersion:
        v = SlotVersion(new_id(), fact_id, obj, key, vf, vt, planned=True, extra=dict(extra))
        self.current[v.id] = v
        self.inserts[v.id] = v
        return v

    def _cut_outside(self, v: SlotVersion, vf: int, vt: int | None, by: str) -> None:
        """Close ``v`` and re-insert its parts outside ``[vf, vt)``."""
        self._close(v, CloseReason.SUPERSEDED, by)
        if v.valid_from < vf:
            self._insert(v.fact_id, v.object, v.object_key, v.valid_from, vf, v.extra)
        if vt is not None and (v.valid_to is None or v.valid_to > vt):
            self._insert(v.fact_id, v.object, v.object_key, vt, v.valid_to, v.extra)

    # -- operations -------------------------------------------------------
    def assert_(
        self,
        obj: str,
        key: str,
        vf: int,
        vt: int | None,
        *,
        bounded: bool,
        explicit_start: bool,
        fact_id: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> SlotVersion | None:
        """Assert ``obj`` over ``[vf, vt)``; returns the version now carrying it
        (``None`` when the write changed nothing)."""
        extra = extra or {}
        if not bounded:
            later = [v.valid_from for v in self.current.values() if v.valid_from > vf]
            vt = min(later) if later else None
        same = [v for v in self.current.values() if v.object_key == key]
        for v in same:
            covers = v.valid_from <= vf and _ends_by(vt, v.valid_to)
            if covers and (bounded or not explicit_start or v.valid_from == vf):
                self.outcome.unchanged.append(v.id)
                if v.fact_id not in self.outcome.fact_ids:
                    self.outcome.fact_ids.append(v.fact_id)
                return None
        placeholder = _placeholder()
        if bounded:
            merged = [v for v in same if _touches(v, vf, vt)]
            others = [
                v for v in self.current.values() if v.object_key != key and _overlaps(v, vf, vt)
            ]
        else:
            merged = []
            others = [v for v in self.current.values() if _overlaps(v, vf, vt)]
        new_vf, new_vt = vf, vt
        for v in merged:
            new_vf = min(new_vf, v.valid_from)
            new_vt = None if (new_vt is None or v.valid_to is None) else max(new_vt, v.valid_to)
        fid = merged[0].fact_id if merged else (fact_id or new_id())
        self.outcome.merges += [(v.fact_id, fid) for v in merged if v.fact_id != fid]
        for v in others:
            self._cut_outside(v, vf, vt, placeholder)
        for v in merged:
            self._close(v, CloseReason.SUPERSEDED, placeholder)
        version = self._insert(fid, obj, key, new_vf, new_vt, extra)
        self._rebind(placeholder, version.id)
        self.outcome.added.append(version.id)
        if fid not in self.outcome.fact_ids:
            self.outcome.fact_ids.append(fid)
        return version

    def end(self, at: int, key: str | None) -> list[SlotVersion]:
        ended: list[SlotVersion] = []
        for v in list(self.current.values()):
            if key is not None and v.object_key != key:
                continue
            if v.valid_from < at and (v.valid_to is None or v.valid_to > at):
                placeholder = _placeholder()
                self._close(v, CloseReason.ENDED, placeholder)
                nv = self._insert(v.fact_id, v.object, v.object_key, v.valid_from, at, v.extra)
                self._rebind(placeholder, nv.id)
                self.outcome.ended.append(nv.id)
                if v.fact_id not in self.outcome.fact_ids:
                    self.outcome.fact_ids.append(v.fact_id)
                ended.append(nv)
        return ended

    def retract(self, fact_id: str) -> list[SlotVersion]:
        gone = [v for v in self.current.values() if v.fact_id == fact_id]
        for v in gone:
            self._close(v, CloseReason.RETRACTED, None)
            self.outcome.retracted.append(v.id)
        if gone and fact_id not in self.outcome.fact_ids:
            self.outcome.fact_ids.append(fact_id)
        return gone

    def _rebind(self, placeholder: str, real: str | None) -> None:
        if not self.closes:
            return
        for sid, (reason, by) in list(self.closes.items()):
            if by == placeholder:
                self.closes[sid] = (reason, real)
