"""An item as chronomem holds it: ONE fact, the item's document.

The item's subject holds a single-valued slot ``item`` (``keys.DOC``) whose
object is the whole item as JSON::

    {"v": {...value...}, "c": created, "u": updated, "t": ttl, "i": [index paths]}

``v`` is the value as put (its field order kept), first, so a person reading
the store (``chronomem facts``) sees it; ``c`` is when this life of the item
began (``null``: the version's own start, i.e. this put created it); ``u`` is
the instant the put was planned, so every put is a new version even when the
value repeats; ``t`` the TTL in minutes; ``i`` the paths indexed for search (so
a TTL refresh re-asserts exactly what the put wrote). The version's
``valid_from`` is the put's transaction time: the item's ``updated_at``. When
the put indexes exactly one text (the default ``["$"]``, or one path with one
text) the version carries it as its ``index_text``: a put is one version. A put
whose paths yield several texts keeps each as an ``@index:…`` entry fact beside
the document (object: a digest of the text and the put's stamp; the text is
its ``index_text``).

Stores written by earlier versions of this package (a marker fact ``@item``
plus one fact per field, the field's name as predicate) are read as they are:
the value is rebuilt from the field facts (a field named ``item`` is told from
a document by its object). The next put of such an item writes its document
and ends the old facts (``writes.plan_put``), so items migrate as they are
written."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chronomem import Fact, FactRow, InvalidType
from chronomem.identity import encodable
from chronomem.timeutil import from_us, to_us

from . import keys

# what ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` builds on
# every call, built once (it keeps no state between calls)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dumps(value: Any) -> str:
    return _ENCODER.encode(value)


def encode_field(name: str, value: Any) -> str:
    """A field's value as JSON text. A value JSON cannot hold (or a cycle) is
    ``InvalidType``; a lone surrogate in the name or the value, which no
    database can store as text, is ``InvalidInput``."""
    encodable(name, "a field name")
    try:
        text = dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidType(f"field {name!r} is not JSON-serialisable: {exc}") from None
    return encodable(text, f"field {name!r}")


def encode_value(value: Mapping[str, Any]) -> str:
    """The whole value as JSON text (one dump; on failure the field at fault is
    named, as ``encode_field`` names it); a dict is encoded as it is, without a copy."""
    try:
        text = dumps(value if type(value) is dict else dict(value))
        return encodable(text, "the value")
    except Exception:
        for name, v in value.items():
            encode_field(name, v)
        raise


@dataclass(frozen=True)
class Marker:
    """What an item's document (or old-layout marker) says about the item."""

    created: int | None  # µs: when this life of the item began; None: the version's start
    updated: int  # µs: when the put was planned (makes every put's version new)
    ttl: float | None  # minutes, as put
    fields: tuple[str, ...]  # field names in the order they were put
    index: tuple[str, ...]  # the paths indexed for search ([] = not indexed)
    value: dict[str, Any] | None = None  # the document (None: the old layout's marker)

    @classmethod
    def decode(cls, text: str) -> Marker:
        """What a document (or marker) text says; a small document whose value
        holds atoms alone (no list or dict a caller could change through
        ``Record.value``'s copy) is decoded once per process (``_DECODED``: a
        version's text never changes, and the same text says the same)."""
        m = _DECODED.get(text)
        if m is None:
            m = cls._parse(text)
            v = m.value
            if len(text) <= DECODED_CHARS and v is not None and _flat(v):
                if len(_DECODED) >= DECODED_MAX:
                    _DECODED.clear()
                _DECODED[text] = m
        return m

    @classmethod
    def _parse(cls, text: str) -> Marker:
        d = json.loads(text)
        if "v" in d:
            v = d["v"]
            return cls(d.get("c"), int(d["u"]), d.get("t"), tuple(v), tuple(d.get("i", ())), v)
        return cls(
            None if d.get("created") is None else int(d["created"]),
            int(d["updated"]),
            d.get("ttl"),
            tuple(d.get("fields", ())),
            tuple(d.get("index", ())),
        )


# documents decoded once (``Marker.decode``): at most this many, of at most this
# many characters each; emptied when full
_DECODED: dict[str, Marker] = {}
DECODED_MAX = 4096
DECODED_CHARS = 2048
_ATOMS = frozenset((str, int, float, bool, type(None)))


def _flat(value: dict[str, Any]) -> bool:
    return all(v.__class__ in _ATOMS for v in value.values())


def is_doc(predicate: str, text: str) -> bool:
    """Whether a fact is an item's document (not an old-layout field named ``item``)."""
    return predicate == keys.DOC and text.startswith('{"v":') and ',"u":' in text


def is_head(predicate: str, text: str) -> bool:
    """An item's document, or an old-layout item's marker."""
    return predicate == keys.MARKER or is_doc(predicate, text)


def doc_stamp(created: int | None, updated: int) -> str:
    return f"{created}:{updated}"


def encode_doc(
    value_text: str, created: int | None, updated: int, ttl: float | None, paths: Iterable[str]
) -> str:
    """A document's object text around an already-encoded value (no second dump)."""
    c = "null" if created is None else str(int(created))
    t = "null" if ttl is None else json.dumps(ttl)
    return (
        f'{{"v":{value_text},"c":{c},"u":{int(updated)},"t":{t},"i":{_paths_json(tuple(paths))}}}'
    )


@functools.lru_cache(maxsize=256)  # a store puts with a few index configurations
def _paths_json(paths: tuple[str, ...]) -> str:
    return dumps(list(paths))


# A live fact as a record holds it: a ``Fact``, or the ``FactRow`` of a point read
# (``Memory.rows``), which has every attribute a record and a put plan use.
Live = Fact | FactRow


@dataclass(slots=True)
class Record:
    """The facts of one item live at a read's instants."""

    subject: str
    namespace: tuple[str, ...]
    key: str
    marker_fact: Live | None = None  # the document's version (or an old-layout marker)
    facts: dict[str, Live] = field(default_factory=dict)  # predicate -> fact (not @item)
    # the version last decoded, and what it said (a get reads it several times)
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

    @property
    def legacy(self) -> bool:
        """Written in the old layout (a marker plus field facts), not yet migrated."""
        m = self.marker
        return m is not None and m.value is None

    def value(self) -> dict[str, Any]:
        """The item's value: the document's, or (old layout) rebuilt from the live
        field facts in put order."""
        m = self.marker
        if m is None:
            return {}
        if m.value is not None:
            return dict(m.value)
        out: dict[str, Any] = {}
        for name in m.fields:
            f = self.facts.get(keys.field_predicate(name))
            if f is not None:
                out[name] = json.loads(f.object)
        return out

    def item_parts(self) -> tuple[dict[str, Any], datetime, datetime]:
        """``value()``, ``created_at`` and ``updated_at`` at once (the document
        looked up once: what an ``Item`` is built from)."""
        m = self.marker
        f = self.marker_fact
        if m is None or m.value is None or f is None:
            return self.value(), self.created_at, self.updated_at
        updated = f.valid_from
        return dict(m.value), updated if m.created is None else from_us(m.created), updated

    @property
    def updated_us(self) -> int:
        """When the latest put took effect (the start of the ``@item`` version)."""
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
        m = self.marker
        if m is not None and m.created is not None:
            return from_us(m.created)
        return self.updated_at

    @property
    def updated_at(self) -> datetime:
        """The document version's start, as read (no round trip through µs)."""
        assert self.marker_fact is not None
        return self.marker_fact.valid_from

    @property
    def light(self) -> bool:
        """Read as ``FactRow`` values (a point read), not as ``Fact`` values."""
        return isinstance(self.marker_fact, FactRow)

    def entry_versions(self) -> list[str]:
        """The version ids that may carry the item's search-index texts (the
        document's own, and any ``@index`` entry beside it)."""
        out = [f.version_id for p, f in self.facts.items() if p.startswith(keys.INDEX_PREFIX)]
        if self.marker_fact is not None and not self.legacy:
            out.append(self.marker_fact.version_id)
        return out

    def extra_facts(self) -> bool:
        """Facts beside the document (index entries, or old-layout fields)."""
        return bool(self.facts)

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
        if is_head(f.predicate, f.object):
            if rec.marker_fact is None or f.predicate == keys.DOC:
                rec.marker_fact = f
        else:
            rec.facts[f.predicate] = f
    return out


def alive(records: Mapping[str, Record]) -> list[Record]:
    return [r for r in records.values() if r.alive]


def live_record(facts: Iterable[Live], subject: str) -> Record | None:
    """``subject``'s record among ``facts`` when it is alive (None: no such item)."""
    rec = group(facts).get(subject)
    return rec if rec is not None and rec.alive else None


def item_value(fact: Fact | FactRow | str) -> dict[str, Any] | None:
    """The item value an ``item`` fact (or its object text) holds: what a
    ``Memory.facts`` / ``Memory.served`` caller reads a LangGraph item as
    (``None`` for an old-layout marker, whose value is in its field facts)."""
    text = fact if isinstance(fact, str) else fact.object
    m = Marker.decode(text)
    return None if m.value is None else dict(m.value)
