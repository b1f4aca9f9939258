"""An LLM extractor behind the same protocol: batched, with a strict output schema.

``LLMExtractor(complete)`` is generic over a ``complete(messages) -> str``
callable taking OpenAI-style chat messages, so any chat model plugs in:

    LLMExtractor(lambda msgs: chat_model.invoke(msgs).content)      # LangChain
    LLMExtractor(lambda msgs: str(llm.chat([...]).message.content))  # LlamaIndex

``OpenAICompatibleExtractor`` is the same over ``httpx`` against any
``/chat/completions`` endpoint (OpenAI, vLLM, Ollama, LiteLLM ...), with JSON
mode, retries on 429/5xx honouring ``Retry-After``, and clean timeouts.

One model call per batch of turns, never per turn. The answer must be
``{"facts": [{"turn", "subject", "predicate", "object", "op", "valid_from"?,
"valid_to"?, "confidence"?}]}``; it is validated in full *before* anything is
written: a malformed or partial answer fails its whole batch (every turn of
it carries the error; nothing from it is written)."""

from __future__ import annotations

import enum
import json
import re
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, cast

from ..errors import ChronomemError
from ..identity import fold, fold_predicate
from ..predicates import BUILTIN
from ..timeutil import parse_iso
from .base import Extracted, ExtractionError, ExtractionResult, Turn
from .salience import is_small_talk

Complete = Callable[[list[dict[str, str]]], str]


class Request(str, enum.Enum):
    """What a call to ``complete`` asks the model (``LLMExtractor(kinds=True)``
    passes it): the facts of a batch of turns (answered as ``ANSWER_SCHEMA``), or
    a predicate's cardinality (answered as ``CARDINALITY_SCHEMA``). A framework's
    model client picks the structured-output schema from it."""

    FACTS = "facts"
    CARDINALITY = "cardinality"


# ``complete`` when ``LLMExtractor(kinds=True)``: it is told what the call asks
KindedComplete = Callable[[list[dict[str, str]], Request], str]

# A fact's confidence when the model's answer gives none.
DEFAULT_CONFIDENCE = 0.8

# The answer ``parse_answer`` accepts, as a JSON schema (for structured output).
ANSWER_SCHEMA: dict[str, Any] = {
    "title": "extracted_facts",
    "description": "Durable first-person facts read from the numbered turns.",
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "turn": {"type": "integer"},
                    "subject": {"type": "string"},
                    "predicate": {"type": "string"},
                    "object": {"type": ["string", "null"]},
                    "op": {"type": "string", "enum": ["assert", "end"]},
                    "valid_from": {"type": ["string", "null"]},
                    "valid_to": {"type": ["string", "null"]},
                    "confidence": {"type": "number"},
                },
                "required": ["turn", "subject", "predicate", "object", "op"],
            },
        }
    },
    "required": ["facts"],
}

# The answer to a cardinality question (``Request.CARDINALITY``).
CARDINALITY_SCHEMA: dict[str, Any] = {
    "title": "predicate_cardinality",
    "type": "object",
    "properties": {"cardinality": {"type": "string", "enum": ["one", "many"]}},
    "required": ["cardinality"],
}

PROMPT_VERSION = "1"

_VOCAB = ", ".join(f"{s.name} ({s.cardinality.value})" for s in BUILTIN)

SYSTEM_PROMPT = f"""You read chat messages and extract durable facts that each speaker states \
about themself (where they live or work, their name, tastes, languages, allergies, birthday, \
family and pets, plans, projects).

Rules:
- Only facts the speaker asserts about themself, in the first person. Ignore questions, \
hypotheticals ("if I moved..."), requests, jokes, quotes, and statements about other people \
or about software ("the user lives in the settings page").
- subject: the speaker's name as given in the turn ("speaker" field).
- predicate: snake_case. Prefer this vocabulary (cardinality in brackets): {_VOCAB}. \
Invent a new snake_case predicate only when none fits.
- object: a short noun phrase ("Berlin", "Acme", "coffee", "dog named Rex").
- op: "assert" when the fact holds; "end" when it stopped holding ("I left Acme", \
"I no longer like coffee", "I moved out of Paris"); an "end" may have object null \
("I quit my job").
- valid_from / valid_to: ISO 8601 dates, only when the text says when, resolved against \
the turn's "at" timestamp ("last month" said on 2024-06-12 -> "2024-05-01"). For "end", \
valid_to is when it stopped.
- turn: the number of the turn the fact comes from.

Answer with a JSON object only, exactly: {{"facts": [{{"turn": 0, "subject": "...", \
"predicate": "...", "object": "...", "op": "assert", "valid_from": null}}]}}. \
No facts: {{"facts": []}}."""

SCHEMA_PROMPT = """A memory store keeps facts as (subject, predicate, object). For the \
predicate below, answer whether one subject has ONE value at a time (a new value replaces \
the old: like "lives_in") or can have MANY values at once (like "likes"). Answer with a JSON \
object only: {"cardinality": "one"} or {"cardinality": "many"}."""

_PREDICATE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_SELF = frozenset({"user", "i", "me", "myself", "the user", "speaker", "the speaker"})
_REQUIRED = ("turn", "subject", "predicate", "object", "op")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _parse_when(value: object, where: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ExtractionError(f"{where} must be an ISO 8601 date or null, not {value!r}")
    try:  # a model's answer: a time without an offset is UTC
        return parse_iso(value, where, naive="utc", error=ExtractionError)
    except ChronomemError as e:  # out of the calendar: a bad answer, not a bad call
        raise ExtractionError(str(e)) from None


def parse_answer(raw: object, turns: dict[int, Turn]) -> dict[int, list[Extracted]]:
    """Validate a model's answer against the schema; facts by turn number.

    Raises ``ExtractionError`` on anything malformed or partial: the answer is
    used whole or not at all."""
    if not isinstance(raw, str):
        raise ExtractionError(f"the model answer must be text, not {type(raw).__name__}")
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ExtractionError(f"the model answer is not JSON: {exc}") from None
    if not isinstance(data, dict) or "facts" not in data:
        raise ExtractionError('the model answer must be an object with a "facts" list')
    items = data["facts"]
    if not isinstance(items, list):
        raise ExtractionError('"facts" must be a list')
    out: dict[int, list[Extracted]] = {}
    for n, item in enumerate(items):
        where = f"facts[{n}]"
        if not isinstance(item, dict):
            raise ExtractionError(f"{where} must be an object")
        missing = [k for k in _REQUIRED if k not in item]
        if missing:
            raise ExtractionError(f"{where} is missing {', '.join(missing)}")
        turn_no = item["turn"]
        if isinstance(turn_no, bool) or not isinstance(turn_no, int) or turn_no not in turns:
            raise ExtractionError(f"{where}.turn {turn_no!r} is not a turn of this batch")
        op = item["op"]
        if op not in ("assert", "end"):
            raise ExtractionError(f"{where}.op must be 'assert' or 'end', not {op!r}")
        subject, predicate, obj = item["subject"], item["predicate"], item["object"]
        if not isinstance(subject, str) or not subject.strip():
            raise ExtractionError(f"{where}.subject must be a non-empty string")
        if not isinstance(predicate, str) or not _PREDICATE.match(fold_predicate(predicate)):
            raise ExtractionError(f"{where}.predicate must be a snake_case name, not {predicate!r}")
        if obj is None and op == "end":
            pass
        elif not isinstance(obj, str) or not obj.strip() or len(obj) > 500:
            raise ExtractionError(f"{where}.object must be a non-empty string (<= 500 chars)")
        vf = _parse_when(item.get("valid_from"), f"{where}.valid_from")
        vt = _parse_when(item.get("valid_to"), f"{where}.valid_to")
        if vf is not None and vt is not None and vt <= vf:
            raise ExtractionError(f"{where}: valid_to is not after valid_from")
        conf = item.get("confidence", DEFAULT_CONFIDENCE)
        if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0 <= conf <= 1:
            raise ExtractionError(f"{where}.confidence must be a number in [0, 1]")
        turn = turns[turn_no]
        if fold(subject) in _SELF or fold(subject) == fold(turn.speaker):
            subject = turn.speaker
        out.setdefault(turn_no, []).append(
            Extracted(
                subject=subject.strip(),
                predicate=fold_predicate(predicate),
                obj=obj.strip() if isinstance(obj, str) else None,
                op=op,
                valid_from=vf,
                valid_to=vt,
                confidence=float(conf),
            )
        )
    return out


class LLMExtractor:
    """Facts read by a chat model, one call per batch of turns.

    ``complete``: takes OpenAI-style ``[{"role", "content"}]`` messages and
    returns the model's text. ``batch_size``: turns per call. ``roles``: which
    turns are read (others, and small talk, are skipped before any call).
    Model and transport failures never raise out of ``extract``: the batch's
    turns come back with ``error`` set and no facts. ``kinds=True``: ``complete``
    takes ``(messages, kind)``, the ``Request`` the call makes, so a model client
    can ask for the matching structured output without reading the prompt."""

    version = PROMPT_VERSION

    def __init__(
        self,
        complete: Complete | KindedComplete,
        *,
        name: str = "llm",
        batch_size: int = 16,
        roles: Sequence[str] = ("user",),
        max_chars: int = 4000,
        kinds: bool = False,
    ):
        if not callable(complete):
            raise TypeError("complete must be a callable(messages) -> str")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("batch_size must be a positive int")
        self.complete = complete
        self.kinds = kinds
        self.name = name
        self.batch_size = batch_size
        self.roles = frozenset(roles)
        self.max_chars = max_chars
        self.calls = 0  # model calls made for extraction (one per batch)
        self.schema_questions = 0  # model calls made to learn a predicate's cardinality
        self._schema: dict[str, str | None] = {}

    # -- extraction ------------------------------------------------------------------------
    def extract(self, turns: Sequence[Turn]) -> list[ExtractionResult]:
        results: list[ExtractionResult | None] = [None] * len(turns)
        kept: list[int] = []
        for i, t in enumerate(turns):
            if t.role not in self.roles or is_small_talk(t.text):
                results[i] = ExtractionResult(t, [], skipped=True)
            else:
                kept.append(i)
        for start in range(0, len(kept), self.batch_size):
            batch = kept[start : start + self.batch_size]
            try:
                self.calls += 1
                answer = self._ask(self._messages(turns, batch), Request.FACTS)
                facts = parse_answer(answer, {i: turns[i] for i in batch})
            except ExtractionError as exc:
                for i in batch:
                    results[i] = ExtractionResult(turns[i], [], error=str(exc))
                continue
            except Exception as exc:  # a model client's own failure: report, never crash
                msg = f"{type(exc).__name__}: {exc}"
                for i in batch:
                    results[i] = ExtractionResult(turns[i], [], error=msg)
                continue
            for i in batch:
                results[i] = ExtractionResult(turns[i], facts.get(i, []))
        return [r for r in results if r is not None]

    def _messages(self, turns: Sequence[Turn], batch: list[int]) -> list[dict[str, str]]:
        shown = []
        for i in batch:
            t = turns[i]
            item: dict[str, Any] = {
                "turn": i,
                "speaker": t.speaker,
                "at": t.occurred_at.isoformat() if t.occurred_at else None,
                "text": t.text[: self.max_chars],
            }
            prev = turns[i - 1] if i > 0 else None
            if prev is not None and prev.role == "assistant":
                item["replying_to"] = prev.text[:500]  # "Where do you live?" -> "Paris"
            shown.append(item)
        user = "Turns:\n" + json.dumps(shown, ensure_ascii=False, indent=1)
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def _ask(self, messages: list[dict[str, str]], kind: Request) -> str:
        if self.kinds:
            return cast(KindedComplete, self.complete)(messages, kind)
        return cast(Complete, self.complete)(messages)

    # -- schema acquisition ----------------------------------------------------------------
    def cardinality_of(self, predicate: str, example: Extracted | None = None) -> str | None:
        """ "one" or "many" for a predicate the store does not know, asked of the
        model at most once per name (the answer, or the failure, is remembered)."""
        key = fold_predicate(predicate)
        if key in self._schema:
            return self._schema[key]
        self._schema[key] = None  # recorded first: a failure is not retried either
        ask = f"Predicate: {key}"
        if example is not None and example.obj:
            ask += f'\nExample: ("{example.subject}", "{key}", "{example.obj}")'
        self.schema_questions += 1
        try:
            raw = self._ask(
                [{"role": "system", "content": SCHEMA_PROMPT}, {"role": "user", "content": ask}],
                Request.CARDINALITY,
            )
            text = raw.strip() if isinstance(raw, str) else ""
            fenced = _FENCE.match(text)
            data = json.loads(fenced.group(1) if fenced else text)
            value = str(data["cardinality"]).strip().lower()
        except Exception:
            return None
        if value not in ("one", "many"):
            return None
        self._schema[key] = value
        return value


class OpenAICompatibleExtractor(LLMExtractor):
    """``LLMExtractor`` over an OpenAI-compatible ``/chat/completions`` endpoint.

    POSTs ``{"model", "messages", "response_format": {"type": "json_object"},
    "temperature": 0}``; retries 429 and 5xx answers and transport errors up
    to ``max_retries`` times with exponential backoff (``backoff * 2**n``,
    capped at ``max_backoff``), honouring ``Retry-After``; every request is
    bounded by ``timeout`` seconds. Needs ``httpx`` (``pip install
    'chronomem[http]'``)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        model: str = "gpt-4o-mini",
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        batch_size: int = 16,
        temperature: float = 0.0,
        headers: dict[str, str] | None = None,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        try:
            import httpx
        except ImportError:  # pragma: no cover - depends on the install
            raise ImportError(
                "OpenAICompatibleExtractor needs httpx: pip install 'chronomem[http]'"
            ) from None
        super().__init__(self._complete, name=f"openai:{model}", batch_size=batch_size)
        self._httpx = httpx
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.timeout = timeout
        self.max_retries = max(0, int(max_retries))
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.temperature = temperature
        self.headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self._own_client = client is None
        self.client = client if client is not None else httpx.Client(timeout=timeout)
        self.sleep = sleep
        self.attempts = 0  # HTTP requests sent, retries included

    def close(self) -> None:
        if self._own_client:
            self.client.close()

    def __enter__(self) -> OpenAICompatibleExtractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                seconds = float(retry_after)
            except ValueError:
                try:
                    when = parsedate_to_datetime(retry_after)
                    seconds = (when - datetime.now(timezone.utc)).total_seconds()
                except (TypeError, ValueError):
                    seconds = self.backoff * 2**attempt
            return min(max(seconds, 0.0), self.max_backoff)
        return min(self.backoff * 2**attempt, self.max_backoff)

    def _complete(self, messages: list[dict[str, str]]) -> str:
        httpx = self._httpx
        body = {
            "model": self.model,
            "messages": messages,
            "response_format": {"type": "json_object"},
            "temperature": self.temperature,
        }
        last = ""
        for attempt in range(self.max_retries + 1):
            self.attempts += 1
            retry_after = None
            try:
                resp = self.client.post(
                    self.url, json=body, headers=self.headers, timeout=self.timeout
                )
            except httpx.TimeoutException:
                last = f"timed out after {self.timeout}s"
            except httpx.TransportError as exc:
                last = f"transport error: {type(exc).__name__}: {exc}"
            else:
                code = resp.status_code
                if code == 429 or code >= 500:
                    last = f"HTTP {code}"
                    retry_after = resp.headers.get("Retry-After")
                elif code >= 400:
                    raise ExtractionError(f"HTTP {code} from {self.url}: {resp.text[:300]}")
                else:
                    return self._content(resp)
            if attempt < self.max_retries:
                self.sleep(self._delay(attempt, retry_after))
        raise ExtractionError(f"{last} ({self.max_retries + 1} attempts) from {self.url}")

    @staticmethod
    def _content(resp: Any) -> str:
        try:
            data = resp.json()
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ExtractionError(
                "the endpoint's answer is not a chat completion (no choices[0].message.content)"
            ) from None
        if not isinstance(content, str):
            raise ExtractionError("choices[0].message.content is not text")
        return content
