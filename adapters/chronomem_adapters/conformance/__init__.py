"""chronomem's conformance kit: framework-free, importable by third parties.

An adapter package implements a ``Harness`` (usually a ``HarnessBase``
subclass of a few lines) and subclasses ``ConformanceTests`` with a
``harness`` fixture. See ``harness`` for the contract and ``checks`` for
what each semantic's tests assert."""

from __future__ import annotations

from .checks import (
    SEMANTIC_CHECKS,
    check_declared,
    check_prefix_not_widened,
    check_sibling_isolated,
    check_undeclared,
)
from .clock import KitClock
from .harness import SIBLING_KINDS, Entry, Harness, HarnessBase, NotExpressible, Status, Timed
from .kit import (
    AUDIT_STATES,
    BASE_SCOPE,
    HISTORY_STATES,
    KIT,
    STATUS,
    KitExtractor,
    Version,
    VersionsHarness,
    entries,
    kit_message,
    open_scope,
    sibling_scope,
    status_of,
)
from .suite import (
    ConformanceTests,
    DeclarationTests,
    IsolationTests,
    SemanticsTests,
    UndeclaredTests,
)

__all__ = [
    "AUDIT_STATES",
    "BASE_SCOPE",
    "HISTORY_STATES",
    "KIT",
    "SEMANTIC_CHECKS",
    "SIBLING_KINDS",
    "STATUS",
    "ConformanceTests",
    "DeclarationTests",
    "Entry",
    "Harness",
    "HarnessBase",
    "IsolationTests",
    "KitClock",
    "KitExtractor",
    "NotExpressible",
    "SemanticsTests",
    "Status",
    "Timed",
    "UndeclaredTests",
    "Version",
    "VersionsHarness",
    "check_declared",
    "check_prefix_not_widened",
    "check_sibling_isolated",
    "check_undeclared",
    "entries",
    "kit_message",
    "open_scope",
    "sibling_scope",
    "status_of",
]
