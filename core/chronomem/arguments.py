"""Checking ``Memory``'s arguments: collections of names, metadata, fact and
source references, an assertion, an episode.

Collection arguments: one rule for every public method that takes many names.

A ``str`` is iterable, so ``facts(subjects="alice")`` would quietly read the
subjects ``"a"``, ``"l"``, … and ``search(predicates="lives_in")`` would
match nothing. Anything that is not a collection of names is refused with
``InvalidType`` before the database is touched: a bare ``str``/``bytes``, a
mapping (it iterates its keys), a non-iterable, a non-string item."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from .errors import InvalidInput, InvalidInterval, InvalidType
from .identity import encodable, fold_predicate, require_id, require_text
from .jsondepth import MAX_DEPTH
from .model import Episode, Fact
from .ops import AssertOp, WriteOp
from .predicates import Cardinality, PredicateSpec, Volatility
from .timeutil import opt_us

SourceLike = str | Episode
FactRef = str | Fact  # a fact id, the id of one of its versions, or a Fact


def collection(value: object, what: str, *, of: str = "names") -> tuple[Any, ...]:
    """``value`` as a tuple, if it is a collection (list, tuple, set, generator …)
    and not a bare string, bytes or mapping."""
    if isinstance(value, str | bytes | bytearray | memoryview):
        raise InvalidType(
            f"{what} takes a collection of {of}, not a bare {type(value).__name__} "
            f"(iterating {value!r} would give its characters); pass [{value!r}]"
        )
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise InvalidType(
            f"{what} takes a collection of {of} (a list, tuple or set), not {type(value).__name__}"
        )
    return tuple(value)


def names(value: object, what: str) -> tuple[str, ...]:
    """A collection of non-empty names (subjects, predicates, aliases), in order.
    A plain list or tuple (a point read's one subject) skips the ABC tests
    ``collection`` makes: what they say of it is known."""
    items = value if type(value) is tuple or type(value) is list else collection(value, what)
    if len(items) == 1:
        return (require_text(items[0], f"each of {what}"),)
    return tuple(require_text(item, f"each of {what}") for item in items)


def json_metadata(metadata: Mapping[str, Any] | None, name: str = "metadata") -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidType(f"{name} must be a mapping, not {type(metadata).__name__}")
    check_json_keys(metadata, name)
    try:
        text = json.dumps(dict(metadata), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name} must be JSON-serialisable (no NaN/inf): {exc}") from None
    encodable(text, name)
    out: dict[str, Any] = json.loads(text)
    return out


def check_json_keys(value: Any, name: str, path: frozenset[int] = frozenset()) -> None:
    """JSON object keys are strings; anything else would come back changed. A
    container that holds itself has no JSON form at all."""
    if isinstance(value, Mapping | list | tuple):
        if id(value) in path:
            raise InvalidInput(f"{name} contains itself (a reference cycle); JSON cannot hold it")
        path = path | {id(value)}
        if len(path) > MAX_DEPTH:  # before Python's recursion limit (chronomem.jsondepth)
            raise InvalidInput(f"{name} nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidType(f"{name} keys must be str (JSON), not {type(k).__name__}: {k!r}")
            check_json_keys(v, name, path)
    elif isinstance(value, list | tuple):
        for v in value:
            check_json_keys(v, name, path)


def ref_id(ref: object) -> str:
    """The id a fact reference gives: a ``Fact``'s fact id, or the id as passed."""
    if isinstance(ref, Fact):
        return require_id(ref.id, "fact_id")
    return require_id(ref, "fact_id")


def source_ids(source: SourceLike | Iterable[SourceLike] | None) -> tuple[str, ...]:
    if source is None:
        return ()
    try:
        items = [source] if isinstance(source, str | Episode) else list(source)
    except TypeError:
        raise InvalidType(
            f"source must be an episode id, an Episode or a list of them, not {source!r}"
        ) from None
    out = []
    for s in items:
        if isinstance(s, Episode):
            out.append(s.id)
        elif isinstance(s, str):
            out.append(require_id(s, "episode_id"))
        else:
            raise InvalidType(f"source must be an episode id or Episode, not {type(s).__name__}")
    return tuple(dict.fromkeys(out))


def assert_op(
    subject: str,
    predicate: str,
    obj: str,
    *,
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    source: SourceLike | Iterable[SourceLike] | None = None,
    metadata: Mapping[str, Any] | None = None,
    extractor: str | None = None,
    exact: bool = False,
    cardinality: Cardinality | str | None = None,
    index_text: str | None = None,
    valid_for: timedelta | None = None,
) -> AssertOp:
    """``Memory.assertion``'s arguments checked and made an ``AssertOp``.

    A batch builds one per fact, so the common arguments pass with few calls: a
    non-blank ASCII ``str`` is what ``require_text`` accepts without encoding it
    (anything else goes through it, and gets its error), and ``None`` for a time,
    the metadata or the sources is what their checks turn into ``None``, ``{}``, ``()``."""
    if not (type(subject) is str and subject.isascii() and subject.strip()):
        require_text(subject, "subject")
    if not (type(predicate) is str and predicate.isascii() and predicate.strip()):
        require_text(predicate, "predicate")
    if not (type(obj) is str and obj.isascii() and obj.strip()):
        require_text(obj, "obj")
    vf = None if valid_from is None else opt_us(valid_from, "valid_from")
    vt = None if valid_to is None else opt_us(valid_to, "valid_to")
    if vf is not None and vt is not None and vt <= vf:
        raise InvalidInterval("valid_to must be after valid_from")
    if extractor is not None:
        require_text(extractor, "extractor")
    for_us = None
    if valid_for is not None:
        if not isinstance(valid_for, timedelta):
            raise InvalidType("valid_for must be a timedelta")
        for_us = valid_for // timedelta(microseconds=1)
        if for_us <= 0 or valid_from is not None or valid_to is not None:
            raise InvalidInterval("valid_for must be positive and excludes valid_from/valid_to")
    return AssertOp(
        subject,
        predicate,
        obj,
        vf,
        vt,
        bounded=valid_to is not None,
        metadata={} if metadata is None else json_metadata(metadata),
        sources=() if source is None else source_ids(source),
        extractor=extractor,
        exact=exact if type(exact) is bool else bool(exact),
        cardinality=Cardinality(cardinality) if cardinality is not None else None,
        index_text=index_text,
        valid_for=for_us,
    )


def episode_row(item: object) -> tuple[str, str | None, int | None, dict[str, Any]]:
    """One of ``Memory.add_episodes``' items checked: text, role, occurred_at (µs), metadata."""
    if not isinstance(item, Mapping):
        raise InvalidType(f"add_episodes: each episode is a mapping, not {type(item).__name__}")
    text = item.get("text")
    if not isinstance(text, str):
        raise InvalidType(f"episode text must be a str, not {type(text).__name__}")
    encodable(text, "episode text")
    role = item.get("role")
    if role is not None:
        if not isinstance(role, str):
            raise InvalidType("role must be a str")
        encodable(role, "role")
    return (
        text,
        role,
        opt_us(item.get("occurred_at"), "occurred_at"),
        json_metadata(item.get("metadata")),
    )


def assert_ops(facts: object) -> list[WriteOp]:
    """``Memory.remember_many``'s facts: ``AssertOp``s as given, mappings of
    ``assertion``'s arguments checked and made ``AssertOp``s."""
    ops: list[WriteOp] = []
    for f in collection(facts, "remember_many", of="facts (mappings or AssertOps)"):
        if isinstance(f, AssertOp):
            ops.append(f)
        elif isinstance(f, Mapping):
            kw = dict(f)
            try:
                subject, predicate, obj = kw.pop("subject"), kw.pop("predicate"), kw.pop("obj")
            except KeyError as exc:
                raise InvalidInput(f"remember_many: a fact lacks {exc.args[0]!r}") from None
            ops.append(assert_op(subject, predicate, obj, **kw))
        else:
            raise InvalidType(
                f"remember_many: each fact is a mapping or an AssertOp, not {type(f).__name__}"
            )
    return ops


def predicate_spec(
    name: object, cardinality: object, volatility: object, aliases: object
) -> PredicateSpec:
    """``Memory.register_predicate``'s arguments checked and made a ``PredicateSpec``."""
    alias_names = names(aliases, "aliases")
    try:
        return PredicateSpec(
            fold_predicate(require_text(name, "name")),
            Cardinality(cardinality),
            Volatility(volatility),
            alias_names,
        )
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
