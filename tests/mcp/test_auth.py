"""Bearer tokens map to scopes: a known token gives its scope, any other none."""

from __future__ import annotations

import pytest

from chronomem.mcp.auth import ScopeTokens, token_scope


async def test_a_known_token_carries_its_scope_and_others_are_refused() -> None:
    tokens = ScopeTokens({"token-for-ada": {"user": "ada"}, "token-for-acme": {"tenant": "acme"}})
    ada = await tokens.verify_token("token-for-ada")
    assert ada is not None and token_scope(ada.claims) == {"user": "ada"}
    acme = await tokens.verify_token("token-for-acme")
    assert acme is not None and token_scope(acme.claims) == {"tenant": "acme"}
    for wrong in ("", "token-for-ad", "token-for-ada ", "TOKEN-FOR-ADA"):
        assert await tokens.verify_token(wrong) is None


def test_short_or_missing_tokens_are_refused_at_start() -> None:
    with pytest.raises(ValueError, match="8 characters"):
        ScopeTokens({"short": {}})
    with pytest.raises(ValueError):
        ScopeTokens({})
