"""chronomem: bitemporal memory for AI agents.

Every fact lives on two clocks: when it was true in the world (valid time)
and when the store believed it (transaction time). Nothing is overwritten."""

from __future__ import annotations

from .errors import (
    ChronomemError,
    CorruptStore,
    InvalidInput,
    InvalidInterval,
    InvalidTimeSelector,
    InvalidType,
    MissingDriver,
    NaiveDatetime,
    NotFound,
    ReadOnlyStore,
    ReadOnlyView,
    SchemaMismatch,
    ScopeError,
    StaleFact,
    StoreClosed,
    StoreUnavailable,
    TimeTravel,
    UnknownPredicate,
)
from .memory import Memory
from .model import (
    Episode,
    ExtractionReceipt,
    Fact,
    FactRow,
    Provenance,
    Receipt,
    ScopeCounts,
    State,
    Stats,
)
from .ops import AssertOp, CorrectOp, EndOp, EndOthersOp, RetractOp
from .predicates import Cardinality, PredicateSpec, Volatility
from .readlog import ErasedRead, Read, Served
from .retrieval import SearchFailed
from .scope import Scope

__version__ = "0.1.0"

__all__ = [
    "AssertOp",
    "Cardinality",
    "ChronomemError",
    "CorrectOp",
    "CorruptStore",
    "EndOp",
    "EndOthersOp",
    "Episode",
    "ErasedRead",
    "ExtractionReceipt",
    "Fact",
    "FactRow",
    "InvalidInput",
    "InvalidInterval",
    "InvalidTimeSelector",
    "InvalidType",
    "Memory",
    "MissingDriver",
    "NaiveDatetime",
    "NotFound",
    "PredicateSpec",
    "Provenance",
    "Read",
    "ReadOnlyStore",
    "ReadOnlyView",
    "Receipt",
    "RetractOp",
    "SchemaMismatch",
    "Scope",
    "ScopeCounts",
    "ScopeError",
    "SearchFailed",
    "Served",
    "StaleFact",
    "State",
    "Stats",
    "StoreClosed",
    "StoreUnavailable",
    "TimeTravel",
    "UnknownPredicate",
    "Volatility",
]
