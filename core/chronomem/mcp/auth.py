"""Bearer tokens for the HTTP transport: each token maps to the chronomem scope
its holder may use. With tokens set, a request without a known token is refused
(401) before any tool runs; the comparison takes the same time whatever the
token's prefix."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from fastmcp.server.auth import AccessToken, TokenVerifier

TOKEN_ENV = "CHRONOMEM_MCP_TOKEN"


class ScopeTokens(TokenVerifier):
    """``{token: {"tenant": …, "user": …, "agent": …, "session": …}}``."""

    def __init__(self, tokens: Mapping[str, Mapping[str, str | None]]):
        super().__init__()
        if not tokens or any(not isinstance(t, str) or len(t) < 8 for t in tokens):
            raise ValueError("each MCP bearer token must be a string of at least 8 characters")
        self._tokens = {t.encode(): dict(scope) for t, scope in tokens.items()}

    async def verify_token(self, token: str) -> AccessToken | None:
        given = token.encode()
        match = None
        for known, scope in self._tokens.items():  # every token compared: no early exit
            if hmac.compare_digest(given, known):
                match = scope
        if match is None:
            return None
        claims = {k: v for k, v in match.items() if v is not None}
        return AccessToken(token=token, client_id="chronomem-mcp", scopes=[], claims=claims)


def token_scope(claims: Mapping[str, object]) -> dict[str, str]:
    """The chronomem scope a verified token's claims name."""
    keys = ("tenant", "user", "agent", "session")
    return {k: str(v) for k, v in claims.items() if k in keys and v is not None}
