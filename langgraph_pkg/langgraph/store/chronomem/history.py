"""``ChronomemStore.history``: every value a field of an item had, on both clocks.

An item's versions are whole documents (``records``); a field's history is
derived from them: each document version gives each of its fields a value over
the version's valid interval, and consecutive intervals of one field that meet
with an equal value (and both retracted or both not) are one field version, as
if the field had been kept on its own. Facts of the old layout (one per field)
are read as they are and join the same derivation."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from chronomem import Fact, State

from . import keys
from .records import Marker, is_doc, is_head


@dataclass(frozen=True)
class FieldVersion:
    """One value of one field over one valid-time interval, as believed then.

    ``state`` is ``live`` (current), ``ended`` (a past value: changed, removed
    or expired), ``scheduled`` or ``retracted`` (deleted; only in the audit view).
    ``recorded_at`` is when the value was first recorded for that interval,
    ``superseded_at`` when its latest version stopped being believed, and
    ``fact_id`` the fact of its first version."""

    field: str
    value: Any
    state: State
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    superseded_at: datetime | None
    fact_id: str

    @property
    def past(self) -> bool:
        return self.state is State.ENDED


def _segments(facts: list[Fact], field: str | None) -> list[FieldVersion]:
    names: list[str] = [] if field is None else [field]
    docs: list[tuple[Fact, Marker]] = []
    for f in facts:
        if is_head(f.predicate, f.object):
            m = Marker.decode(f.object)
            if m.value is None:
                names += m.fields  # an old-layout marker: its field facts follow
            else:
                docs.append((f, m))
    out: list[FieldVersion] = []

    def add(name: str, value: Any, f: Fact) -> None:
        out.append(
            FieldVersion(
                field=name,
                value=value,
                state=f.state,
                valid_from=f.valid_from,
                valid_to=f.valid_to,
                recorded_at=f.recorded_at,
                superseded_at=f.superseded_at,
                fact_id=f.id,
            )
        )

    for f, m in docs:
        assert m.value is not None
        for name, value in m.value.items():
            if field is None or name == field:
                add(name, value, f)
    for f in facts:
        if not keys.is_field(f.predicate) or is_doc(f.predicate, f.object):
            continue
        old_name = keys.field_name(f.predicate, names)  # an old-layout field fact
        if old_name is not None and (field is None or old_name == field):
            add(old_name, json.loads(f.object), f)
    return out


def _joins(a: FieldVersion, b: FieldVersion) -> bool:
    return (
        a.field == b.field
        and a.valid_to is not None
        and a.valid_to == b.valid_from
        and (a.state is State.RETRACTED) == (b.state is State.RETRACTED)
        and a.value == b.value
        and type(a.value) is type(b.value)
    )


def field_versions(facts: list[Fact], field: str | None = None) -> list[FieldVersion]:
    """The field versions of one item's facts (every state a read returned)."""
    segs = _segments(facts, field)
    segs.sort(key=lambda v: (v.field, v.valid_from, v.recorded_at))
    out: list[FieldVersion] = []
    for v in segs:
        prev = out[-1] if out else None
        if prev is not None and _joins(prev, v):
            out[-1] = replace(
                prev,
                valid_to=v.valid_to,
                state=prev.state if prev.state is State.LIVE else v.state,
                superseded_at=v.superseded_at,
            )
        else:
            out.append(v)
    out.sort(key=lambda v: (v.valid_from, v.recorded_at, v.field))
    return out
