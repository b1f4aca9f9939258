"""The MCP tools' arguments: their documented bounds, and the checks that turn a
bad one into an error naming it before anything is read or written.

Every instant is an ISO 8601 string; one without an offset (``2026-03-03``,
``2026-03-03T09:00``) is read as UTC, as the CLI reads it. The bounds keep one
call small: a tool call whose text is longer than its bound is refused whole
(nothing is stored), never cut."""

from __future__ import annotations

from datetime import datetime

from ..errors import ChronomemError
from ..timeutil import parse_iso

MAX_TEXT = 32_000  # characters of remember's text (one episode)
MAX_NAME = 1_000  # characters of a subject, predicate, object, query or fact id
MAX_K = 100  # hits one search may return


class ArgumentError(ChronomemError, ValueError):
    """A tool argument the server refuses; the message starts with its name."""

    def __init__(self, name: str, problem: str):
        self.argument = name
        super().__init__(f"{name}: {problem}")


def instant(value: object, name: str) -> datetime | None:
    """``None`` or an ISO 8601 string -> an aware UTC datetime (years 1-9999)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ArgumentError(name, f"must be an ISO 8601 string, not {type(value).__name__}")
    if len(value.strip()) > 64:
        raise ArgumentError(name, "is not an ISO 8601 instant (too long)")
    try:  # timeutil's one ISO-8601 reader; a time without an offset is UTC here
        return parse_iso(value, name, naive="utc", error=ValueError)
    except ChronomemError as exc:  # outside years 1-9999
        raise ArgumentError(name, str(exc)) from None
    except ValueError:
        raise ArgumentError(
            name, f"{value!r} is not an ISO 8601 instant (e.g. 2026-03-03T09:00:00Z)"
        ) from None


def text(value: object, name: str, *, limit: int = MAX_NAME, optional: bool = False) -> str:
    """A non-blank string of at most ``limit`` characters."""
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise ArgumentError(name, f"must be a string, not {type(value).__name__}")
    if len(value) > limit:
        raise ArgumentError(name, f"is {len(value)} characters; the bound is {limit}")
    if not value.strip():
        raise ArgumentError(name, "must not be empty")
    return value


def count(value: object, name: str, *, limit: int = MAX_K) -> int:
    """A whole number from 1 to ``limit``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(name, f"must be a whole number, not {type(value).__name__}")
    if not 1 <= value <= limit:
        raise ArgumentError(name, f"must be between 1 and {limit}, not {value}")
    return value


def flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ArgumentError(name, f"must be true or false, not {type(value).__name__}")
    return value
