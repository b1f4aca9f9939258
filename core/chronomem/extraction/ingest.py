"""From messages to facts: store every message, extract, write through the state machine.

``add_messages(memory, messages)`` is what ``Memory.add(messages)`` does:

1. every message is stored as an episode (``Memory.add_episodes``, one
   transaction), so the transcript is kept whatever extraction makes of it;
2. the extractor (default: the offline ``RuleExtractor``) reads the turns;
3. unknown predicates may get their cardinality from the extractor once
   (``SchemaAware``), persisted with ``Memory.register_predicate``;
4. every extracted fact becomes a write operation citing its episode and the
   extractor, and all of them go through ONE ``Memory.apply`` call: the same
   supersession state machine as every other write, one transaction time.

An end the speaker says *held* ("I quit Deloitte", "I used to live in
Madrid", "I no longer work at IBM"; ``Extracted.held``) is a fact even when the
store knows no earlier value: "worked at Deloitte until now". Core has no
"unknown" valid-time start, so such an end is written as an assertion from
the earliest instant it can have held -- the end of the slot's latest earlier
value (of any value for a one-valued predicate, of the same value for a
many-valued one), else the Unix epoch -- until the end time, with metadata
``{"valid_from": "unknown"}`` so readers can tell the start is not known. If
the store believes a different value of a one-valued predicate at that time
("works at Google" when told "I no longer work at IBM"), nothing is written:
the statement contradicts what is known and the transcript keeps it. A plain
denial ("I don't speak German") only ends what the store already holds.

The returned receipt says what the write did plus how extraction went:
``extracted`` (facts written), ``skipped`` (turns the salience gate dropped),
``unextracted`` (turns read but yielding nothing), ``failed``/``errors`` (turns
whose extraction failed; nothing from them was written)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from ..errors import ChronomemError, InvalidInput, InvalidType
from ..identity import fold, fold_predicate, require_text
from ..model import Episode, ExtractionReceipt, Fact, Receipt
from ..ops import AssertOp, EndOp, WriteOp
from ..predicates import Cardinality, PredicateSpec
from ..scope import Scope
from ..timeutil import EPOCH, to_us
from .base import (
    DEFAULT_SPEAKER,
    Extracted,
    ExtractionError,
    ExtractionResult,
    Extractor,
    Turn,
    normalize_messages,
)
from .rules import RuleExtractor

# Asserting one of these ends the other for the same object ("I love coffee now").
COMPLEMENTS = {"likes": "dislikes", "dislikes": "likes"}

_US = timedelta(microseconds=1)

_default: RuleExtractor | None = None


def default_extractor() -> RuleExtractor:
    """The shared offline rule extractor (its patterns are compiled once)."""
    global _default
    if _default is None:
        _default = RuleExtractor()
    return _default


class Store(Protocol):
    """What ingest asks of the store: ``Memory``'s public calls, nothing below them."""

    @property
    def scope(self) -> Scope: ...

    def now(self) -> datetime: ...

    def add_episodes(self, items: Iterable[Mapping[str, Any]]) -> list[Episode]: ...

    def assertion(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        valid_from: datetime | None = ...,
        valid_to: datetime | None = ...,
        source: str | None = ...,
        metadata: Mapping[str, Any] | None = ...,
        extractor: str | None = ...,
    ) -> AssertOp: ...

    def apply(self, ops: Sequence[WriteOp], *, recorded_at: datetime | None = ...) -> Receipt: ...

    def history(self, subject: str, predicate: str | None = ...) -> list[Fact]: ...

    def predicate(self, name: str) -> PredicateSpec: ...

    def predicate_known(self, name: str) -> bool: ...

    def register_predicate(
        self, name: str, *, cardinality: Cardinality | str = ...
    ) -> PredicateSpec: ...


def acquire_schema(memory: Store, extractor: object, facts: list[Extracted]) -> list[str]:
    """Register the cardinality of predicates the store does not know, asking a
    ``SchemaAware`` extractor (which asks its model at most once per name).
    Returns the names registered."""
    ask = getattr(extractor, "cardinality_of", None)
    if not callable(ask):
        return []
    registered = []
    examples: dict[str, Extracted] = {}
    for f in facts:
        examples.setdefault(fold_predicate(f.predicate), f)
    for name, example in examples.items():
        if memory.predicate_known(name):
            continue
        answer = ask(name, example)
        if answer is None:
            continue
        try:
            card = Cardinality(answer)
        except ValueError:
            continue
        memory.register_predicate(name, cardinality=card)
        registered.append(name)
    return registered


def _canonical(memory: Store, name: str, cache: dict[str, str]) -> str:
    if name not in cache:
        cache[name] = memory.predicate(name).name
    return cache[name]


UNKNOWN_START = "unknown"  # metadata["valid_from"] of an end written with an unknown start

# (subject, predicate, object) identity keys asserted earlier in the same batch
_Batch = set[tuple[str, str, str]]


def _batch_key(
    memory: Store, subject: str, predicate: str, obj: str, cache: dict[str, str]
) -> tuple[str, str, str]:
    return (fold(subject), _canonical(memory, predicate, cache), fold(obj))


def _held_start(
    memory: Store, subject: str, predicate: str, obj: str, at: datetime
) -> datetime | None:
    """Where an end with an unknown start begins, or ``None`` if nothing should
    be written (the value is known and live: end it; or another value of a
    one-valued slot is believed then)."""
    spec = memory.predicate(predicate)
    key = fold(obj)
    start = EPOCH
    for f in memory.history(subject, spec.name):
        same = f.object_key == key or fold(f.object) == key
        if f.valid_from < at and (f.valid_to is None or f.valid_to >= at):
            if same or spec.cardinality is Cardinality.ONE:
                return None  # live then: a plain end (same) or a contradiction (other)
            continue
        slot_value = same or spec.cardinality is Cardinality.ONE
        if slot_value and f.valid_to is not None and start < f.valid_to <= at:
            start = f.valid_to
    return start if start < at else None


def _ops_for(
    memory: Store,
    turn: Turn,
    fact: Extracted,
    label: str,
    cache: dict[str, str],
    batch: _Batch | None = None,
) -> list[WriteOp]:
    """The write operations for one extracted fact (validated by ``Memory.assertion``)."""
    at_turn = turn.occurred_at
    assert at_turn is not None  # set by add_messages before extraction
    subject = fact.subject or turn.speaker or DEFAULT_SPEAKER
    batch = batch if batch is not None else set()
    if fact.op == "end":
        at = fact.valid_to or fact.valid_from or at_turn
        require_text(subject, "subject")
        require_text(fact.predicate, "predicate")
        end = EndOp(subject, fact.predicate, fact.obj, to_us(at, "valid_to"))
        if fact.obj is None:
            return [end]
        require_text(fact.obj, "obj")
        if not fact.held or _batch_key(memory, subject, fact.predicate, fact.obj, cache) in batch:
            return [end]
        start = _held_start(memory, subject, fact.predicate, fact.obj, at)
        if start is None:
            return [end]  # a known live value is ended; a contradiction ends nothing
        meta_end: dict[str, Any] = {
            "confidence": round(float(fact.confidence), 3),
            "valid_from": UNKNOWN_START,
        }
        return [
            memory.assertion(
                subject, fact.predicate, fact.obj, valid_from=start, valid_to=at,
                source=turn.episode_id, metadata=meta_end, extractor=label,
            )
        ]  # fmt: skip
    assert fact.obj is not None  # Extracted refuses an assert without an object
    vf = fact.valid_from or at_turn
    vt = fact.valid_to
    if vt is not None and vt <= vf:
        if fact.valid_from is None:  # "I lived in Paris until 2019": it ended then
            return [EndOp(subject, fact.predicate, fact.obj, to_us(vt, "valid_to"))]
        raise InvalidInput("valid_to must be after valid_from")
    meta: dict[str, Any] = {"confidence": round(float(fact.confidence), 3)}
    op = memory.assertion(
        subject, fact.predicate, fact.obj, valid_from=vf, valid_to=vt,
        source=turn.episode_id, metadata=meta, extractor=label,
    )  # fmt: skip
    batch.add(_batch_key(memory, subject, fact.predicate, fact.obj, cache))
    ops: list[WriteOp] = []
    other = COMPLEMENTS.get(_canonical(memory, fact.predicate, cache))
    if other is not None:
        ops.append(EndOp(subject, other, fact.obj, to_us(vf, "valid_from")))
    ops.append(op)
    return ops


def _stamp_times(turns: list[Turn], base: datetime) -> list[Turn]:
    """Messages without their own time get ``base``, one microsecond apart in
    message order, so the transcript reads back in order."""
    out = []
    for i, t in enumerate(turns):
        out.append(t if t.occurred_at is not None else replace(t, occurred_at=base + i * _US))
    return out


def add_messages(
    memory: Store,
    messages: object,
    *,
    extractor: Extractor | None = None,
    occurred_at: datetime | None = None,
    on_error: Literal["report", "raise"] = "report",
) -> ExtractionReceipt:
    """Store ``messages`` as episodes, extract facts from them and write the
    facts through the state machine in one ``Memory.apply``.

    ``messages``: anything ``normalize_messages`` accepts (a str, OpenAI-style
    dicts, framework message objects). ``extractor``: default the offline rule
    extractor. ``occurred_at``: when the messages were said (default: now);
    a message's own ``occurred_at``/``timestamp`` wins. ``on_error``: a failed
    extraction batch writes nothing from that batch and is reported on the
    receipt (``failed``, ``errors``); ``"raise"`` raises ``ExtractionError``
    after the rest was written, carrying the receipt."""
    if on_error not in ("report", "raise"):
        raise InvalidInput("on_error must be 'report' or 'raise'")
    ext = extractor if extractor is not None else default_extractor()
    if not (isinstance(ext, Extractor) and callable(getattr(ext, "extract", None))):
        raise InvalidType("extractor must have name, version and extract(turns)")
    if occurred_at is not None:
        to_us(occurred_at, "occurred_at")
    turns = normalize_messages(messages)
    if not turns:
        return ExtractionReceipt()
    turns = _stamp_times(turns, occurred_at if occurred_at is not None else memory.now())

    episodes = memory.add_episodes(
        [
            {
                "text": t.text,
                "role": t.role,
                "occurred_at": t.occurred_at,
                "metadata": _episode_metadata(t),
            }
            for t in turns
        ]
    )
    turns = [
        replace(t, episode_id=ep.id, occurred_at=ep.occurred_at)
        for t, ep in zip(turns, episodes, strict=True)
    ]

    results = ext.extract(turns)
    if not isinstance(results, list) or len(results) != len(turns):
        raise ExtractionError(
            f"extractor {ext.name!r} returned {len(results) if isinstance(results, list) else '?'}"
            f" results for {len(turns)} turns"
        )
    label = f"{ext.name}/{ext.version}"
    acquire_schema(memory, ext, [f for r in results if not r.error for f in r.facts])

    ops: list[WriteOp] = []
    cache: dict[str, str] = {}
    batch: _Batch = set()
    extracted = skipped = unextracted = 0
    errors: dict[int, str] = {}
    for i, (turn, res) in enumerate(zip(turns, results, strict=True)):
        if not isinstance(res, ExtractionResult):
            raise ExtractionError(f"extractor {ext.name!r} returned a {type(res).__name__}")
        if res.skipped:
            skipped += 1
            continue
        if res.error is not None:
            errors[i] = res.error
            unextracted += 1
            continue
        turn_ops: list[WriteOp] = []
        try:
            for fact in res.facts:
                turn_ops += _ops_for(memory, turn, fact, label, cache, batch)
        except ChronomemError as exc:  # a fact the store refuses: drop the turn's facts
            errors[i] = f"invalid fact: {exc}"
            unextracted += 1
            continue
        if not res.facts:
            unextracted += 1
        extracted += len(res.facts)
        ops += turn_ops

    receipt = ExtractionReceipt.of(memory.apply(ops) if ops else Receipt())
    receipt.extracted = extracted
    receipt.skipped = skipped
    receipt.unextracted = unextracted
    receipt.episode_ids = [ep.id for ep in episodes]
    receipt.failed = len(errors)
    receipt.errors = errors
    if errors and on_error == "raise":
        raise ExtractionError(
            f"extraction failed for {len(errors)} of {len(turns)} turns "
            f"(first: {next(iter(errors.values()))})",
            failures=errors,
            receipt=receipt,
        )
    return receipt


def _episode_metadata(turn: Turn) -> Mapping[str, Any]:
    meta = dict(turn.metadata)
    default = DEFAULT_SPEAKER if turn.role == "user" else turn.role
    if turn.speaker != default:
        meta.setdefault("speaker", turn.speaker)
    return meta
