"""The click type of every option that takes an instant (``--known-at``, ``--valid-from`` …):
a bad value is a usage error naming the option, not a bare "Invalid isoformat string"."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click

from .output import parse_instant

__all__ = ["INSTANT", "Instant"]


class Instant(click.ParamType):
    name = "instant"

    def convert(self, value: Any, param: Any, ctx: Any) -> datetime | None:
        if value is None or isinstance(value, datetime):
            return value
        try:
            return parse_instant(str(value))
        except ValueError:
            self.fail(
                f"{value!r} is not an ISO 8601 instant (e.g. 2026-02-01, "
                "2026-02-01T09:30:00Z or 2026-02-01T09:30:00+02:00)",
                param,
                ctx,
            )


INSTANT = Instant()
