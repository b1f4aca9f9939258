"""Scope: tenant > user > agent > session.

A write lands in exactly one scope. A read sees its own scope and every
ancestor of it (a session sees its user's durable memory), never a sibling
(another session, another user) and never another tenant. Names are plain
strings: ``%``, ``_``, ``*``, ``/`` and quotes in them are just characters,
because scope is matched by equality, never by pattern."""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

from . import keycodec
from .errors import InvalidInput, InvalidType

LEVELS = ("user", "agent", "session")
MAX_NAME = 255
DEFAULT_TENANT = "default"


def _check(name: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidType(f"scope {name} must be a str, not {type(value).__name__}")
    if not value or value != value.strip() or len(value) > MAX_NAME:
        raise InvalidInput(
            f"scope {name} must be a non-empty name of at most {MAX_NAME} characters "
            f"without surrounding blanks; got {value[:80]!r}"
        )
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in value):
        raise InvalidInput(f"scope {name} must not contain control characters; got {value[:80]!r}")
    return value


@dataclass(frozen=True)
class Scope:
    tenant: str = DEFAULT_TENANT
    user: str | None = None
    agent: str | None = None
    session: str | None = None

    def __post_init__(self) -> None:
        if _check("tenant", self.tenant) is None:
            raise InvalidInput("scope tenant must be a non-empty name")
        for level in LEVELS:
            _check(level, getattr(self, level))

    def child(
        self,
        *,
        tenant: str | None = None,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
    ) -> Scope:
        """A narrower scope. Changing the tenant starts from an empty scope."""
        if tenant is not None and tenant != self.tenant:
            return Scope(tenant, user, agent, session)
        return Scope(
            self.tenant,
            user if user is not None else self.user,
            agent if agent is not None else self.agent,
            session if session is not None else self.session,
        )

    def columns(self) -> dict[str, str]:
        """Stored form: '' for a level that is not set."""
        return {
            "tenant": self.tenant,
            "user_id": self.user or "",
            "agent_id": self.agent or "",
            "session_id": self.session or "",
        }

    def as_dict(self) -> dict[str, str]:
        return {
            k: v
            for k, v in (("tenant", self.tenant), *((lv, getattr(self, lv)) for lv in LEVELS))
            if v
        }

    @functools.cached_property
    def key(self) -> str:
        """An unambiguous one-string form (used in slot keys): an injective join
        (names cannot hold control characters anyway, so it is the plain join).
        Computed once per scope (a write computes a slot key per operation)."""
        return keycodec.join(self.columns().values(), keycodec.SEP_FIELD)
