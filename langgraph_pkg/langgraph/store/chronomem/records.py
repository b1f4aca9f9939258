"""An item as chronomem holds it: a marker fact plus one fact per field and per
search-index entry, all single-valued slots of the item's subject.

The marker's object records what the item's own facts cannot: when the item
was created, its TTL, the order of its fields, and which paths were indexed
(so a TTL refresh re-indexes exactly what the put indexed). Every put writes a
new marker (a refresh merges into the running one), so the marker's version
starts at the latest put's transaction time: that is the item's
``updated_at``, and, for the put that created it, its ``created_at``."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chronomem import Fact, FactRow, InvalidType
from chronomem.identity import encodable
from chronomem.timeutil import from_us, to_us

from . import keys


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def encode_field(name: str, value: Any) -> str:
    """A field's value as the JSON text stored as its fact's object. A value JSON
    cannot hold (or a cycle) is ``InvalidType``; a lone surrogate in the name or
    the value, which no database can store as text, is ``InvalidInput``."""
    encodable(name, "a field name")
    try:
        text = dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidType(f"field {name!r} is not JSON-serialisable: {exc}") from None
    return encodable(text, f"field {name!r}")


@dataclass(frozen=True)
class Marker:
    """What the marker fact's object says about its item."""

    created: int | None  # µs: when this life of the item began; None: the marker's start
    updated: int  # µs: when the latest put was planned (makes every put's marker new)
    ttl: float | None  # minutes, as put
    fields: tuple[str, ...]  # field names in the order they were put
    index: tuple[str, ...]  # the paths indexed for search ([] = not indexed)

    def encode(self) -> str:
        return dumps(
            {
                "created": self.created,
                "updated": self.updated,
                "ttl": self.ttl,
                "fields": list(self.fields),
                "index": list(self.index),
            }
        )

    @classmethod
    def decode(cls, text: str) -> Marker:
        d = json.loads(text)
        return cls(
            None if d.get("created") is None else int(d["created"]),
            int(d["updated"]),
            d.get("ttl"),
            tuple(d.get("fields", ())),
            tuple(d.get("index", ())),
        )


# A live fact as a record holds it: a ``Fact``, or the ``FactRow`` of a point read
# (``Memory.rows``), which has every attribute a record and a put plan use.
Live = Fact | FactRow


@dataclass
class Record:
    """The facts of one item live at a read's instants."""

    subject: str
    namespace: tuple[str, ...]
    key: str
    marker_fact: Live | None = None
    facts: dict[str, Live] = field(default_factory=dict)  # predicate -> fact (not the marker)
    # the marker fact last decoded, and what it said (a get reads it three times)
    _decoded: tuple[Live, Marker] | None = field(default=None, repr=False, compare=False)

    @property
    def marker(self) -> Marker | None:
        f = self.marker_fact
        if f is None:
            return None
        if self._decoded is None or self._decoded[0] is not f:
            self._decoded = (f, Marker.decode(f.object))
        return self._decoded[1]

    @property
    def alive(self) -> bool:
        return self.marker_fact is not None

    def value(self) -> dict[str, Any]:
        """The item's value rebuilt from its live field facts, in put order."""
        m = self.marker
        names = list(m.fields) if m is not None else []
        out: dict[str, Any] = {}
        for name in names:
            f = self.facts.get(keys.field_predicate(name))
            if f is not None:
                out[name] = json.loads(f.object)
        return out

    @property
    def updated_us(self) -> int:
        """When the latest put took effect (the start of the marker's version)."""
        assert self.marker_fact is not None
        return to_us(self.marker_fact.valid_from)

    @property
    def created_us(self) -> int:
        """When this life of the item began (its first put after absence)."""
        m = self.marker
        assert m is not None
        return m.created if m.created is not None else self.updated_us

    @property
    def created_at(self) -> datetime:
        return from_us(self.created_us)

    @property
    def updated_at(self) -> datetime:
        return from_us(self.updated_us)

    @property
    def light(self) -> bool:
        """Read as ``FactRow`` values (a point read), not as ``Fact`` values."""
        return isinstance(self.marker_fact, FactRow)

    def all_facts(self) -> list[Live]:
        out = list(self.facts.values())
        if self.marker_fact is not None:
            out.append(self.marker_fact)
        return out


def group(facts: Iterable[Live]) -> dict[str, Record]:
    """Live facts grouped into records by subject (facts of other subjects are skipped)."""
    out: dict[str, Record] = {}
    for f in facts:
        rec = out.get(f.subject)
        if rec is None:
            parsed = keys.parse_subject(f.subject)
            if parsed is None:
                continue
            rec = out[f.subject] = Record(f.subject, parsed[0], parsed[1])
        if f.predicate == keys.MARKER:
            rec.marker_fact = f
        else:
            rec.facts[f.predicate] = f
    return out


def alive(records: Mapping[str, Record]) -> list[Record]:
    return [r for r in records.values() if r.alive]
