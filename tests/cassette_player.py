"""One vcrpy player for the framework extractors' HTTP-level tests: cassettes in
OpenAI's ``/chat/completions`` wire format, played with ``record_mode="none"``
(a request the cassette does not hold fails the test; nothing reaches the
network). Its matcher checks what each framework's own provider class sent: the
same model, core's extraction prompt verbatim, the same turns at the same
instants, and structured output with that framework's schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import vcr

from chronomem.extraction.llm import SYSTEM_PROMPT


def player(directory: Path, schema: str, *, strict: bool | None = None) -> vcr.VCR:
    """A player for the cassettes in ``directory``; ``schema`` is the json_schema
    name the client must ask for (``strict``: and its strict flag, if given)."""

    def structured(r1: Any, r2: Any) -> None:
        a, b = json.loads(r1.body), json.loads(r2.body)
        assert a["model"] == b["model"]
        for body in (a, b):
            fmt = body["response_format"]
            assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == schema
            if strict is not None:
                assert fmt["json_schema"].get("strict") is strict
            assert [m["role"] for m in body["messages"]] == ["system", "user"]
            assert body["messages"][0]["content"] == SYSTEM_PROMPT
        assert a["messages"][1] == b["messages"][1]  # the same turns, the same instants

    p = vcr.VCR(
        cassette_library_dir=str(directory),
        record_mode="none",
        match_on=["method", "scheme", "host", "port", "path", "structured"],
    )
    p.register_matcher("structured", structured)
    return p
