"""Write operations as data: what a caller asked for, before the state machine.

Every public write (``remember``, ``end``, ``retract``, ``correct``, batch
ingest, extraction, imports, adapters) is turned into a list of these and
applied by one function, in one transaction, with one transaction time."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from .predicates import Cardinality
from .timeutil import FOREVER_US

if TYPE_CHECKING:
    from .model import FactRow


# ``AssertOp``'s default metadata: stands for a new empty dict per op
_NEW_DICT: Any = object()
_SET = object.__setattr__


@dataclass(frozen=True)
class AssertOp:
    subject: str
    predicate: str
    obj: str
    valid_from: int | None  # None: the transaction time
    valid_to: int | None
    bounded: bool  # valid_to was given (None then means "forever", not "until the next change")
    metadata: dict[str, Any] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    extractor: str | None = None
    # Adapters whose identities are exact (a LangGraph namespace and key, a
    # document field) pass them unfolded, and may fix the slot's cardinality.
    exact: bool = False
    cardinality: Cardinality | None = None
    # What search indexes for this fact: None = "subject predicate object", "" = nothing.
    index_text: str | None = None
    # A validity length in microseconds from the transaction time (a TTL): the
    # fact holds over [tx, tx + valid_for). Needs valid_from=None and valid_to=None.
    valid_for: int | None = None

    def __init__(
        self,
        subject: str,
        predicate: str,
        obj: str,
        valid_from: int | None,
        valid_to: int | None,
        bounded: bool,
        metadata: dict[str, Any] = _NEW_DICT,  # a new {} per op, as ``default_factory``
        sources: tuple[str, ...] = (),
        extractor: str | None = None,
        exact: bool = False,
        cardinality: Cardinality | None = None,
        index_text: str | None = None,
        valid_for: int | None = None,
    ) -> None:
        """What the generated ``__init__`` of a frozen dataclass does (its fields,
        in order, then ``__post_init__``'s cut), with ``object.__setattr__`` looked
        up once (``_SET``), not once per field: a batch builds one op per fact
        (``Memory.assertion``). (Writing the instance's ``__dict__`` directly would
        be cheaper still, but it makes every later attribute read of the op a dict
        lookup, and the writer reads each op's fields many times.) A subclass
        declared a dataclass gets the generated one again."""
        put = _SET
        put(self, "subject", subject)
        put(self, "predicate", predicate)
        put(self, "obj", obj)
        put(self, "valid_from", valid_from)
        put(self, "valid_to", valid_to)
        put(self, "bounded", bounded)
        put(self, "metadata", {} if metadata is _NEW_DICT else metadata)
        put(self, "sources", sources)
        put(self, "extractor", extractor)
        put(self, "exact", exact)
        put(self, "cardinality", cardinality)
        put(self, "index_text", index_text)
        put(
            self,
            "valid_for",
            FOREVER_US if isinstance(valid_for, int) and valid_for > FOREVER_US else valid_for,
        )

    def __post_init__(self) -> None:
        # A validity that outlasts the calendar never ends (read back as valid_to
        # None); cut to a length that does, so tx + valid_for fits a SQL BIGINT.
        if isinstance(self.valid_for, int) and self.valid_for > FOREVER_US:
            object.__setattr__(self, "valid_for", FOREVER_US)


@dataclass(frozen=True)
class EndOp:
    subject: str
    predicate: str
    obj: str | None
    at: int | None  # None: the transaction time
    exact: bool = False
    cardinality: Cardinality | None = None


@dataclass(frozen=True)
class EndOthersOp:
    """End every current value of ``subject`` whose predicate is not in ``keep``
    (a document put that drops fields). Which slots that is gets decided inside the
    write transaction, after the tenant's clock lock, so two concurrent puts of one
    document cannot leave the union of their fields live."""

    subject: str
    keep: frozenset[str]
    at: int | None = None  # None: the transaction time
    exact: bool = False


@dataclass(frozen=True)
class RetractOp:
    fact_id: str


@dataclass(frozen=True)
class CorrectOp:
    fact_id: str
    obj: str
    extractor: str | None = None
    exact: bool = False


WriteOp = AssertOp | EndOp | EndOthersOp | RetractOp | CorrectOp


class DocumentOp(NamedTuple):
    """A subject's document put, as a plan (``PlannedWrite``) returns it: exactly
    ``ops()`` — an exact assert of ``obj`` into the ONE slot (``subject``,
    ``predicate``) from the transaction time forever (``bounded``), indexed as
    ``index_text``, then, when ``end_others``, the end of the subject's other
    values. The writer applies a batch of them set-wise where that gives the
    same rows (each a new subject, or one whose only current version is a
    running other value of that slot: ``writer._documents``), else as ``ops()``.
    A tuple: an item store's batch plans one per item."""

    subject: str
    predicate: str
    obj: str
    index_text: str
    end_others: bool

    # what the writer reads of an assert (``writer._fresh_rows``, ``checked_plan``)
    @property
    def exact(self) -> bool:
        return True

    @property
    def extractor(self) -> None:
        return None

    @property
    def metadata(self) -> dict[str, Any]:
        return {}

    def ops(self) -> list[WriteOp]:
        first = AssertOp(
            self.subject,
            self.predicate,
            self.obj,
            None,
            None,
            bounded=True,
            exact=True,
            cardinality=Cardinality.ONE,
            index_text=self.index_text,
        )
        if not self.end_others:
            return [first]
        return [first, EndOthersOp(self.subject, frozenset((self.predicate,)), exact=True)]


# what a ``PlannedWrite``'s plan returns
PlannedOp = WriteOp | DocumentOp


def expanded(ops: Iterable[PlannedOp]) -> list[WriteOp]:
    """The operations, each ``DocumentOp`` as its ``ops()``, in order."""
    out: list[WriteOp] = []
    for op in ops:
        if type(op) is DocumentOp:
            out += op.ops()
        else:
            out.append(op)  # type: ignore[arg-type]  # not a DocumentOp
    return out


@dataclass(frozen=True)
class PlannedWrite:
    """Write operations planned from what some subjects hold, read inside the
    write transaction (``Memory.apply_planned``): ``plan`` receives the live facts
    of ``subjects`` (exact keys) at ``valid_at`` (µs), as ``Memory.rows`` gives
    them, and returns the operations, applied before ``then``. It may return
    asserts, ends and ``DocumentOp``s; an end of a subject's values
    (``EndOthersOp``, ``EndOp`` without an object, a ``DocumentOp`` ending its
    others) must name one of ``subjects``, whose live facts were read."""

    subjects: tuple[str, ...]
    valid_at: int
    plan: Callable[[list[FactRow]], Sequence[PlannedOp]]
    then: tuple[WriteOp, ...] = ()
