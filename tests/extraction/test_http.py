"""``OpenAICompatibleExtractor`` against hand-written vcrpy cassettes.

Cassettes follow the OpenAI chat-completions wire format and are played with
``record_mode="none"``: a request the cassette does not hold fails the test,
so nothing here ever touches the network. Each test checks what got written
to a real in-memory store (nothing, when the answer is unusable)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest
import vcr

from chronomem import Cardinality, Memory
from chronomem.extraction import ExtractionError, OpenAICompatibleExtractor, add_messages

from .conftest import REF

BASE_URL = "https://llm.example.test/v1"


def _chat_wire(r1, r2) -> None:
    """Requests must be chat-completions calls in JSON mode for the same model."""
    a, b = json.loads(r1.body), json.loads(r2.body)
    assert a["model"] == b["model"]
    assert a["response_format"] == {"type": "json_object"} == b["response_format"]
    assert [m["role"] for m in a["messages"]] == ["system", "user"]


player = vcr.VCR(
    cassette_library_dir=str(Path(__file__).with_name("cassettes")),
    record_mode="none",
    match_on=["method", "scheme", "host", "port", "path", "chat_wire"],
)
player.register_matcher("chat_wire", _chat_wire)


@pytest.fixture(autouse=True)
def _now_is_ref(clock) -> None:
    clock.now = REF  # the store's clock and the messages agree on "now"


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _extractor(**kw) -> tuple[OpenAICompatibleExtractor, Sleeps]:
    sleeps = Sleeps()
    kw.setdefault("api_key", "test-key")
    ex = OpenAICompatibleExtractor(BASE_URL, model="gpt-4o-mini", timeout=5.0, sleep=sleeps, **kw)
    return ex, sleeps


def test_success_writes_the_facts(mem: Memory):
    ex, sleeps = _extractor()
    with player.use_cassette("success.yaml") as cassette, ex:
        receipt = add_messages(
            mem, ["I moved to Lisbon last month", "and I have really gotten into surfing"],
            extractor=ex, occurred_at=REF,
        )  # fmt: skip
        assert cassette.all_played and cassette.play_count == 1
    assert ex.calls == 1 and ex.attempts == 1 and sleeps == []
    assert (receipt.extracted, receipt.failed) == (2, 0)
    (home,) = mem.facts(subject="user", predicate="lives_in")
    assert (home.object, home.valid_from) == ("Lisbon", datetime(2024, 5, 1, tzinfo=timezone.utc))
    assert home.extractor == "openai:gpt-4o-mini/1"
    assert mem.why(home.id).episodes[0].text == "I moved to Lisbon last month"
    assert [f.object for f in mem.facts(subject="user", predicate="likes")] == ["surfing"]


def test_rate_limit_is_retried_after_the_servers_delay(mem: Memory):
    ex, sleeps = _extractor()
    with player.use_cassette("rate_limit_then_success.yaml") as cassette, ex:
        receipt = add_messages(mem, "I work at Tidewater Labs", extractor=ex, occurred_at=REF)
        assert cassette.all_played and cassette.play_count == 2
    assert sleeps == [2.0]  # Retry-After: 2
    assert ex.attempts == 2 and receipt.failed == 0
    assert mem.facts(subject="user", predicate="works_at")[0].object == "Tidewater Labs"


def test_server_errors_write_nothing(mem: Memory):
    ex, sleeps = _extractor(max_retries=1, backoff=0.25)
    with player.use_cassette("server_error.yaml") as cassette, ex:
        receipt = add_messages(mem, "I live in Porto", extractor=ex, occurred_at=REF)
        assert cassette.all_played and cassette.play_count == 2
    assert sleeps == [0.25] and ex.attempts == 2
    assert receipt.failed == 1 and "HTTP 500" in receipt.errors[0]
    assert (receipt.extracted, receipt.added) == (0, [])
    assert mem.facts(subject="user") == []
    assert [e.text for e in mem.episodes()] == ["I live in Porto"]  # the transcript is kept


def test_malformed_json_writes_nothing(mem: Memory):
    ex, _ = _extractor()
    with player.use_cassette("malformed_json.yaml"), ex:
        receipt = add_messages(
            mem, "I live in Porto and I love sardines", extractor=ex, occurred_at=REF
        )
    assert receipt.failed == 1 and "not JSON" in receipt.errors[0]
    assert ex.attempts == 1  # a bad answer is not a transport error: no retry
    assert mem.facts(subject="user") == []


def test_partial_answer_writes_nothing_of_the_batch(mem: Memory):
    ex, _ = _extractor()
    with player.use_cassette("partial_answer.yaml"), ex:
        receipt = add_messages(
            mem, ["I live in Porto", "I love sardines"], extractor=ex, occurred_at=REF
        )
    # the lives_in fact was valid, but the answer is used whole or not at all
    assert receipt.failed == 2 and "missing object, op" in receipt.errors[1]
    assert mem.facts(subject="user") == []


def test_partial_answer_can_raise(mem: Memory):
    ex, _ = _extractor()
    with player.use_cassette("partial_answer.yaml"), ex, pytest.raises(ExtractionError) as info:
        add_messages(mem, ["I live in Porto", "I love sardines"], extractor=ex, occurred_at=REF,
                     on_error="raise")  # fmt: skip
    assert set(info.value.failures) == {0, 1}
    assert mem.facts(subject="user") == []


def test_an_answer_that_is_not_a_chat_completion(mem: Memory):
    ex, _ = _extractor()
    with player.use_cassette("not_a_completion.yaml"), ex:
        receipt = add_messages(mem, "I live in Porto", extractor=ex, occurred_at=REF)
    assert receipt.failed == 1 and "not a chat completion" in receipt.errors[0]
    assert mem.facts(subject="user") == []


def test_unauthorized_is_not_retried(mem: Memory):
    ex, sleeps = _extractor(api_key="wrong-key")
    with player.use_cassette("unauthorized.yaml") as cassette, ex:
        receipt = add_messages(mem, "I live in Porto", extractor=ex, occurred_at=REF)
        assert cassette.play_count == 1
    assert sleeps == [] and ex.attempts == 1
    assert "HTTP 401" in receipt.errors[0] and mem.facts(subject="user") == []


def test_schema_question_over_http_is_asked_once(mem: Memory, clock):
    ex, _ = _extractor()
    with player.use_cassette("schema_acquisition.yaml") as cassette, ex:
        add_messages(mem, "My go-to coffee order is a flat white", extractor=ex, occurred_at=REF)
        assert mem.predicate("coffee_order").cardinality is Cardinality.ONE
        clock.now = datetime(2024, 6, 13, 9, tzinfo=timezone.utc)
        add_messages(mem, "These days I order an oat cortado", extractor=ex,
                     occurred_at=datetime(2024, 6, 13, 9, tzinfo=timezone.utc))  # fmt: skip
        # three requests in all: a second schema question would find no cassette entry
        assert cassette.all_played and cassette.play_count == 3
    assert ex.schema_questions == 1 and ex.calls == 2
    assert [f.object for f in mem.facts(subject="user", predicate="coffee_order")] == [
        "oat cortado"
    ]


# -- timeouts and transport errors (no cassette can time out: a mock transport does) ------


def test_timeouts_are_retried_then_reported_cleanly(mem: Memory):
    seen: list[float | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"]["read"])
        raise httpx.ReadTimeout("read timed out", request=request)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    ex, sleeps = _extractor(client=client, max_retries=2, backoff=0.5)
    receipt = add_messages(mem, "I live in Porto", extractor=ex, occurred_at=REF)
    assert seen == [5.0, 5.0, 5.0]  # every attempt bounded by the timeout
    assert sleeps == [0.5, 1.0]  # exponential backoff between attempts
    assert receipt.failed == 1 and "timed out" in receipt.errors[0]
    assert mem.facts(subject="user") == []
    client.close()


def test_retry_after_as_http_date_and_cap():
    ex, _ = _extractor(max_backoff=10.0)
    assert ex._delay(0, "3") == 3.0
    assert ex._delay(0, "120") == 10.0  # capped
    assert ex._delay(0, "Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert ex._delay(2, None) == 2.0  # 0.5 * 2**2
    assert ex._delay(0, "soon") == 0.5
    ex.close()
