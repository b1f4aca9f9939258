"""``ChronomemStore.history``: every value a field of an item had, on both clocks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chronomem import Fact, State

from . import keys
from .records import Marker


@dataclass(frozen=True)
class FieldVersion:
    """One value of one field over one valid-time interval, as believed then.

    ``state`` is ``live`` (current), ``ended`` (a past value: changed, removed
    or expired), ``scheduled`` or ``retracted`` (deleted; only in the audit view)."""

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


def field_versions(facts: list[Fact], field: str | None = None) -> list[FieldVersion]:
    names: list[str] = [] if field is None else [field]
    for f in facts:
        if f.predicate == keys.MARKER:
            names += Marker.decode(f.object).fields
    out = []
    for f in facts:
        if not keys.is_field(f.predicate):
            continue
        name = keys.field_name(f.predicate, names)
        if name is None or (field is not None and name != field):
            continue
        out.append(
            FieldVersion(
                field=name,
                value=json.loads(f.object),
                state=f.state,
                valid_from=f.valid_from,
                valid_to=f.valid_to,
                recorded_at=f.recorded_at,
                superseded_at=f.superseded_at,
                fact_id=f.id,
            )
        )
    out.sort(key=lambda v: (v.valid_from, v.recorded_at, v.field))
    return out
