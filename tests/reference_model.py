"""A small, pure-Python reference model of docs/design.md §3–§4, for model-based tests.

Written from the rules, not from the implementation: it imports nothing from
chronomem. The model keeps every version it ever believed in one plain list
(``recorded_at``/``superseded_at``/``closed_reason``, exactly like the store's
rows), applies each write as one transaction with one transaction time, and
answers ``facts(valid_at, known_at, states)`` by the docs/design.md §4 predicates.

Times are integer microseconds; ``None`` is unbounded. Intervals are
half-open ``[valid_from, valid_to)``.

Rules (statemachine.py's docstring, restated):

* assert ``(obj, vf, vt)``; ``vf`` defaults to the transaction time.
  - open-ended (no ``vt``): ``vt`` = the earliest ``valid_from > vf`` among the
    slot's current versions of ANY object (``None`` if there is none);
  - a same-object version covering ``[vf, vt)`` makes the write ``unchanged``,
    except for an explicit open-ended start strictly inside it (the new
    change point is recorded: the covering version is split);
  - bounded: merges with the same-object versions it overlaps or touches into
    one version spanning all of them; other objects' overlapping versions are
    cut (closed, the parts outside ``[vf, vt)`` re-inserted under their fact);
  - open-ended: every overlapping version (any object) is cut the same way.
* end at ``t``: every (matching) version running across ``t`` is replaced by
  one that stops at ``t``; versions starting at or after ``t`` are untouched.
* retract: the fact's current versions are closed as retracted.
* correct: retract + a bounded assert of the new object over each retracted
  interval, in the same transaction.
* erase: every version of the fact is deleted.

A version created and closed inside one transaction was never believed: it is
never stored. When a bounded assert merges versions of several facts, the store
keeps the fact id of the earliest-starting one (``tests/test_slot_plan_order.py``
checks that rule and that it ignores row order); the model keeps the candidates
and learns the store's choice in :meth:`ReferenceModel.bind`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

LIVE, ENDED, SCHEDULED, RETRACTED = "live", "ended", "scheduled", "retracted"
ALL_STATES = frozenset({LIVE, ENDED, SCHEDULED, RETRACTED})
SUPERSEDED_REASON, ENDED_REASON, RETRACTED_REASON = "superseded", "ended", "retracted"
TX_START = -(2**62)

# Content of a read row: (subject, predicate, object, valid_from, valid_to, state)
Row = tuple[str, str, str, int, "int | None", str]
Slot = tuple[str, str, "str | None"]  # (subject_key, predicate, object_key for MANY)


def simple_fold(text: str) -> str:
    """Identity key for the simple names the tests use (case and punctuation)."""
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


class ModelError(Exception):
    """The model rejects the write; the store must reject it too (nothing written)."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


@dataclass
class Version:
    vid: int
    fid: str
    slot: Slot
    subject: str
    predicate: str
    object: str
    object_key: str
    valid_from: int
    valid_to: int | None
    recorded_at: int
    superseded_at: int | None = None
    closed_reason: str | None = None
    # fact ids this version may carry (more than one only right after a merge)
    candidates: tuple[str, ...] = ()

    def overlaps(self, vf: int, vt: int | None) -> bool:
        return (vt is None or self.valid_from < vt) and (
            self.valid_to is None or self.valid_to > vf
        )

    def touches(self, vf: int, vt: int | None) -> bool:
        return (
            self.overlaps(vf, vt)
            or self.valid_to == vf
            or (vt is not None and self.valid_from == vt)
        )

    def covers(self, vf: int, vt: int | None) -> bool:
        if self.valid_from > vf:
            return False
        if self.valid_to is None:
            return True
        return vt is not None and vt <= self.valid_to

    def known_at(self, t: int | None) -> bool:
        if t is None:
            return self.superseded_at is None
        return self.recorded_at <= t and (self.superseded_at is None or self.superseded_at > t)


@dataclass
class Result:
    """What a write did, in the receipt's terms (counts)."""

    recorded_at: int
    added: int = 0
    unchanged: int = 0
    ended: int = 0
    retracted: int = 0
    superseded_count: int = 0
    inserted: list[Version] = field(default_factory=list)


class _Tx:
    """One write transaction: a working copy of the current versions of the slots it touches."""

    def __init__(self, model: ReferenceModel, tx: int):
        self.model = model
        self.tx = tx
        self.work: dict[int, Version] = {
            v.vid: v for v in model.versions if v.superseded_at is None
        }
        self.planned: dict[int, str] = {}  # vid -> kind ("added", "piece", "ended")
        self.closed: dict[int, str] = {}  # stored vid -> reason
        self.unchanged = 0
        self.retracted = 0

    def slot(self, slot: Slot) -> list[Version]:
        return sorted(
            (v for v in self.work.values() if v.slot == slot), key=lambda v: (v.valid_from, v.vid)
        )

    def remove(self, v: Version, reason: str) -> None:
        del self.work[v.vid]
        if v.vid in self.planned:  # born and closed in this transaction: never believed
            del self.planned[v.vid]
        else:
            self.closed[v.vid] = reason
            if reason == RETRACTED_REASON:
                self.retracted += 1

    def insert(
        self,
        kind: str,
        *,
        slot: Slot,
        subject: str,
        predicate: str,
        obj: str,
        okey: str,
        vf: int,
        vt: int | None,
        candidates: tuple[str, ...],
    ) -> Version:
        v = Version(
            vid=next(self.model._vids),
            fid=candidates[0],
            slot=slot,
            subject=subject,
            predicate=predicate,
            object=obj,
            object_key=okey,
            valid_from=vf,
            valid_to=vt,
            recorded_at=self.tx,
            candidates=candidates,
        )
        self.work[v.vid] = v
        self.planned[v.vid] = kind
        return v

    def cut(self, v: Version, vf: int, vt: int | None) -> None:
        """Close ``v``; re-insert its parts outside ``[vf, vt)`` under its own fact."""
        self.remove(v, SUPERSEDED_REASON)
        pieces = []
        if v.valid_from < vf:
            pieces.append((v.valid_from, vf))
        if vt is not None and (v.valid_to is None or v.valid_to > vt):
            pieces.append((vt, v.valid_to))
        for a, b in pieces:
            self.insert(
                "piece", slot=v.slot, subject=v.subject, predicate=v.predicate,
                obj=v.object, okey=v.object_key, vf=a, vt=b, candidates=v.candidates or (v.fid,),
            )  # fmt: skip

    # -- the rules ------------------------------------------------------------------
    def assert_(
        self,
        slot: Slot,
        subject: str,
        predicate: str,
        obj: str,
        okey: str,
        vf: int,
        vt: int | None,
        *,
        bounded: bool,
        explicit: bool,
    ) -> None:
        current = self.slot(slot)
        if not bounded:
            later = [v.valid_from for v in current if v.valid_from > vf]
            vt = min(later) if later else None
        same = [v for v in current if v.object_key == okey]
        for v in same:
            if v.covers(vf, vt) and (bounded or not explicit or v.valid_from == vf):
                self.unchanged += 1
                return
        if bounded:
            merged = [v for v in same if v.touches(vf, vt)]
            cut = [v for v in current if v.object_key != okey and v.overlaps(vf, vt)]
        else:
            merged = []
            cut = [v for v in current if v.overlaps(vf, vt)]
        lo, hi = vf, vt
        for v in merged:
            lo = min(lo, v.valid_from)
            hi = None if hi is None or v.valid_to is None else max(hi, v.valid_to)
        for v in cut:
            self.cut(v, vf, vt)
        candidates: list[str] = []
        for v in merged:
            self.remove(v, SUPERSEDED_REASON)
            for c in v.candidates or (v.fid,):
                if c not in candidates:
                    candidates.append(c)
        if not candidates:
            candidates = [self.model._new_fid()]
        self.insert(
            "added", slot=slot, subject=subject, predicate=predicate, obj=obj, okey=okey,
            vf=lo, vt=hi, candidates=tuple(candidates),
        )  # fmt: skip

    def end(self, slots: Iterable[Slot], okey: str | None, at: int) -> None:
        for slot in slots:
            for v in self.slot(slot):
                if okey is not None and v.object_key != okey:
                    continue
                if v.valid_from < at and (v.valid_to is None or v.valid_to > at):
                    self.remove(v, ENDED_REASON)
                    self.insert(
                        "ended", slot=v.slot, subject=v.subject, predicate=v.predicate,
                        obj=v.object, okey=v.object_key, vf=v.valid_from, vt=at,
                        candidates=v.candidates or (v.fid,),
                    )  # fmt: skip

    def retract(self, fid: str) -> list[Version]:
        gone = sorted(
            (v for v in self.work.values() if v.fid == fid), key=lambda v: (v.valid_from, v.vid)
        )
        for v in gone:
            self.remove(v, RETRACTED_REASON)
        return gone

    # -- commit -----------------------------------------------------------------------
    def commit(self) -> Result:
        res = Result(recorded_at=self.tx, unchanged=self.unchanged, retracted=self.retracted)
        by_vid = {v.vid: v for v in self.model.versions}
        for vid, reason in self.closed.items():
            v = by_vid[vid]
            v.superseded_at = self.tx
            v.closed_reason = reason
        res.superseded_count = len(self.closed)
        for vid, kind in self.planned.items():
            v = self.work[vid]
            self.model.versions.append(v)
            res.inserted.append(v)
            if kind == "added":
                res.added += 1
            elif kind == "ended":
                res.ended += 1
        self.model.last_tx = self.tx
        return res


class ReferenceModel:
    """Belief history of one tenant (root scope), as plain versions."""

    def __init__(
        self,
        predicates: Mapping[str, tuple[str, bool]],
        fold: Any = simple_fold,
    ):
        """``predicates``: name or alias -> (canonical name, single-valued?)."""
        self.predicates = dict(predicates)
        self.fold = fold
        self.versions: list[Version] = []
        self.last_tx = TX_START
        self._vids = itertools.count(1)
        self._fids = itertools.count(1)
        self.fact_map: dict[str, str] = {}  # model fact id -> store fact id

    def _new_fid(self) -> str:
        return f"m{next(self._fids)}"

    def _stamp(self, now: int) -> int:
        return max(now, self.last_tx + 1)

    def _pred(self, predicate: str) -> tuple[str, bool]:
        return self.predicates.get(predicate, (predicate, False))

    def slot_of(self, subject: str, predicate: str, obj: str | None) -> Slot:
        name, one = self._pred(predicate)
        return (self.fold(subject), name, None if one else self.fold(obj or ""))

    # -- writes --------------------------------------------------------------------
    def remember(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        now: int,
        valid_from: int | None = None,
        valid_to: int | None = None,
    ) -> Result:
        if valid_from is not None and valid_to is not None and valid_to <= valid_from:
            raise ModelError("InvalidInterval")
        tx = self._stamp(now)
        vf = valid_from if valid_from is not None else tx
        if valid_to is not None and valid_to <= vf:
            raise ModelError("InvalidInterval")
        name, _ = self._pred(predicate)
        t = _Tx(self, tx)
        t.assert_(
            self.slot_of(subject, predicate, obj), subject, name, obj, self.fold(obj), vf, valid_to,
            bounded=valid_to is not None, explicit=valid_from is not None,
        )  # fmt: skip
        return t.commit()

    def end(self, subject: str, predicate: str, obj: str | None, *, at: int, now: int) -> Result:
        tx = self._stamp(now)
        name, one = self._pred(predicate)
        skey = self.fold(subject)
        okey = self.fold(obj) if obj is not None else None
        if one:
            slots: list[Slot] = [(skey, name, None)]
        elif okey is not None:
            slots = [(skey, name, okey)]
        else:
            slots = sorted(
                {v.slot for v in self.current() if v.slot[0] == skey and v.slot[1] == name},
                key=repr,
            )
        t = _Tx(self, tx)
        t.end(slots, okey, at)
        return t.commit()

    def retract(self, fid: str, *, now: int) -> Result:
        if not any(v.fid == fid for v in self.versions):
            raise ModelError("NotFound")
        t = _Tx(self, self._stamp(now))
        t.retract(fid)
        return t.commit()

    def correct(self, fid: str, obj: str, *, now: int) -> Result:
        if not any(v.fid == fid for v in self.versions):
            raise ModelError("NotFound")
        t = _Tx(self, self._stamp(now))
        gone = t.retract(fid)
        for v in gone:
            skey, name, okey = v.slot
            slot = (skey, name, None if okey is None else self.fold(obj))
            t.assert_(
                slot, v.subject, name, obj, self.fold(obj), v.valid_from, v.valid_to,
                bounded=True, explicit=True,
            )  # fmt: skip
        return t.commit()

    def erase(self, fid: str) -> int:
        """Physical deletion of every version of the fact; no transaction time."""
        gone = [v for v in self.versions if v.fid == fid]
        if not gone:
            raise ModelError("NotFound")
        self.versions = [v for v in self.versions if v.fid != fid]
        return len(gone)

    # -- reads -------------------------------------------------------------------------
    def current(self) -> list[Version]:
        return [v for v in self.versions if v.superseded_at is None]

    def fact_ids(self) -> list[str]:
        return sorted({v.fid for v in self.versions}, key=lambda f: int(f[1:]))

    def live_fact_ids(self) -> list[str]:
        """Facts with at least one current version."""
        return sorted({v.fid for v in self.current()}, key=lambda f: int(f[1:]))

    @staticmethod
    def state(v: Version, valid_at: int) -> str:
        if v.valid_from > valid_at:
            return SCHEDULED
        if v.valid_to is not None and v.valid_to <= valid_at:
            return ENDED
        return LIVE

    def _retracted_view(self, v: Version, known_at: int | None) -> bool:
        if v.closed_reason != RETRACTED_REASON or v.superseded_at is None:
            return False
        if known_at is not None and not (v.recorded_at <= known_at and v.superseded_at <= known_at):
            return False
        return not any(w.fid == v.fid and w.known_at(known_at) for w in self.versions)

    def facts(
        self, *, valid_at: int, known_at: int | None = None, states: Iterable[str] = (LIVE,)
    ) -> list[Row]:
        """The rows a ``facts()`` read returns, as sorted content tuples."""
        wanted = frozenset(states)
        assert wanted and wanted <= ALL_STATES, wanted
        out: list[Row] = []
        for v in self.versions:
            if v.known_at(known_at):
                s = self.state(v, valid_at)
                if s in wanted:
                    out.append(self.row(v, s))
            elif RETRACTED in wanted and self._retracted_view(v, known_at):
                out.append(self.row(v, RETRACTED))
        return sorted(out, key=row_key)

    @staticmethod
    def row(v: Version, state: str) -> Row:
        return (v.subject, v.predicate, v.object, v.valid_from, v.valid_to, state)

    # -- binding to the store -------------------------------------------------------
    def bind(self, result: Result, store_rows: Sequence[Mapping[str, Any]]) -> list[str]:
        """Learn which store fact id each version inserted by ``result`` carries.

        ``store_rows`` are the tenant's ``cm_versions`` rows (any order). A
        version's store fact id must be the image of one of its candidate model
        facts (already bound, or new and unbound); returns a list of problems."""
        problems: list[str] = []
        inverse = {s: m for m, s in self.fact_map.items()}
        by_content = {
            (r["subject_key"], r["predicate"], r["object_key"], r["valid_from"]): r
            for r in store_rows
            if r["recorded_at"] == result.recorded_at and r["superseded_at"] is None
        }
        pending = []
        for v in result.inserted:
            r = by_content.get((v.slot[0], v.slot[1], v.object_key, v.valid_from))
            if r is None:
                problems.append(f"store has no version inserted at tx for {self.row(v, '-')}")
                continue
            pending.append((v, r["fact_id"]))
        # first versions whose store fact is already known, then new facts
        for v, sfid in sorted(pending, key=lambda p: p[1] not in inverse):
            cands = v.candidates or (v.fid,)
            known = [c for c in cands if self.fact_map.get(c) == sfid]
            if known:
                chosen = known[0]
            else:
                free = [c for c in cands if c not in self.fact_map]
                if not free or sfid in inverse:
                    problems.append(
                        f"{self.row(v, '-')} carries store fact {sfid} "
                        f"(model fact {inverse.get(sfid)}), expected one of "
                        f"{[self.fact_map.get(c, c) for c in cands]}"
                    )
                    continue
                chosen = free[0]
                self.fact_map[chosen] = sfid
                inverse[sfid] = chosen
            v.fid = chosen
            v.candidates = ()
        return problems

    def table(self) -> list[tuple[Any, ...]]:
        """Every version as the store should hold it (fact ids mapped to the store's)."""
        return _sorted(self._table_row(v) for v in self.versions)

    def _table_row(self, v: Version) -> tuple[Any, ...]:
        return (
            v.subject, v.slot[0], v.predicate, v.object, v.object_key, v.valid_from,
            v.valid_to, v.recorded_at, v.superseded_at, v.closed_reason,
            self.fact_map.get(v.fid, v.fid),
        )  # fmt: skip


def store_table(rows: Iterable[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """The same projection of ``cm_versions`` rows as :meth:`ReferenceModel.table`."""
    return _sorted(_store_row(r) for r in rows)


def _store_row(r: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        r["subject"], r["subject_key"], r["predicate"], r["object"], r["object_key"],
        r["valid_from"], r["valid_to"], r["recorded_at"], r["superseded_at"],
        r["closed_reason"], r["fact_id"],
    )  # fmt: skip


def _sorted(items: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Sorted, with ``None`` before every value (tuples mix ints and ``None``)."""
    return sorted(items, key=lambda t: tuple((0, 0) if x is None else (1, x) for x in t))


def row_key(row: Row) -> tuple[Any, ...]:
    s, p, o, vf, vt, st = row
    return (s, p, o, vf, -1 if vt is None else vt, st)


def i1_violations(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Invariant I1 over ``cm_versions`` rows: current versions of a slot are disjoint."""
    by_slot: dict[tuple[str, str], list[tuple[int, int | None, str]]] = {}
    for r in rows:
        if r["superseded_at"] is None:
            by_slot.setdefault((r["tenant"], r["slot"]), []).append(
                (r["valid_from"], r["valid_to"], r["id"])
            )
    bad = []
    for slot, items in by_slot.items():
        items.sort(key=lambda x: x[0])
        for (af, at, aid), (bf, bt, bid) in itertools.pairwise(items):
            if at is None or at > bf:
                bad.append(f"slot {slot}: {aid} [{af}, {at}) overlaps {bid} [{bf}, {bt})")
    return bad
