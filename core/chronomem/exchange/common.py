"""What the exchange formats share: the dump's instants and optional progress bars."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import InvalidInput
from ..jsondepth import loads
from ..timeutil import MAX_US, MIN_US, from_us, parse_iso, to_us

FORMAT = 1
CHUNK = 500

SCOPE_COLUMNS = (("user", "user_id"), ("agent", "agent_id"), ("session", "session_id"))
VERSION_TEXT = ("subject", "subject_key", "predicate", "object", "object_key", "slot")
VERSION_OPT_TEXT = ("superseded_by", "closed_reason", "extractor", "index_text")


# -- instants ---------------------------------------------------------------------------
def instant(us: int | None) -> str | int | None:
    """Stored microseconds -> the dump's form (ISO 8601 UTC, or the integer outside
    the calendar)."""
    if us is None:
        return None
    return from_us(us).isoformat() if MIN_US <= us <= MAX_US else us


BIGINT = 2**63  # a stored instant is a signed 64-bit integer


def parse_instant(value: object, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        if not -BIGINT < value < BIGINT:
            raise InvalidInput(f"{what}: {value} microseconds is out of range")
        return value
    if isinstance(value, str):  # a dump writes every instant with its offset
        return to_us(parse_iso(value, what), what)
    raise InvalidInput(f"{what}: expected an ISO 8601 instant, not {type(value).__name__}")


def opt_instant(value: object, what: str) -> int | None:
    return None if value is None else parse_instant(value, what)


# -- progress -----------------------------------------------------------------------------
def bar(total: int | None, desc: str, enabled: bool) -> Any:
    """A tqdm bar on stderr when asked for and tqdm is installed, else a no-op."""
    if enabled:
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc=desc, unit="row", leave=False)
        except ImportError:  # pragma: no cover - tqdm comes with the cli extra
            pass
    return NoBar()


class NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def json_objects(lines: Iterable[str], what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line of JSON Lines input as ``(line number, object)``; a line
    that is not JSON, nests too deep or is not an object is ``InvalidInput``
    naming the line (``what``: what a line must be, for the message)."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = loads(line, f"line {n}")
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {n}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise InvalidInput(f"line {n}: each line is {what}")
        yield n, rec
