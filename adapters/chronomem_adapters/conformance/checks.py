"""The conformance checks, as plain functions of a harness.

Each ``check_<semantic>`` proves one declared semantic through the adapter's
own API; ``check_undeclared`` proves an undeclared one is refused, not
ignored; the isolation checks run for every adapter. They raise
``AssertionError`` on a violation and call ``pytest.skip`` when the framework
cannot express a request; the pytest classes in ``suite`` only dispatch here
(so the kit can also be driven without pytest collecting a class)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ..declaration import spec_of
from ..semantics import TIME_TRAVEL, Semantic, UnsupportedSemantics
from .harness import Entry, Harness, NotExpressible, Status

MINUTE = {"minutes": 1}


def _pairs(entries: list[Entry]) -> list[tuple[str, Status]]:
    return [(e.value, Status(e.status)) for e in entries]


def _declares(h: Harness, semantic: Semantic) -> bool:
    return semantic in spec_of(h.adapter).semantics


def _expressible(call: Callable[[], object]) -> bool:
    """Run ``call``; ``False`` if the framework cannot express it."""
    try:
        call()
    except NotExpressible:
        return False
    return True


# -- declared semantics ---------------------------------------------------------------
def check_current_view(h: Harness) -> None:
    h.write("ada", "city", "Paris")
    assert h.read("ada", "city") == ["Paris"], "a fresh write must be current"
    h.clock.advance(**MINUTE)
    try:
        h.end("ada", "city")
    except NotExpressible as exc:
        raise AssertionError(f"CURRENT_VIEW needs a way to end a value: {exc}") from None
    assert h.read("ada", "city") == [], "an ended value must not be returned by a default read"
    assert h.read("nobody", "city") == []


def check_supersession(h: Harness) -> None:
    h.write("ada", "city", "Paris")
    h.clock.advance(**MINUTE)
    h.write("ada", "city", "Berlin")
    assert h.read("ada", "city") == ["Berlin"], "the new value must end the old one"
    h.write("ada", "job", "pilot")
    assert h.read("ada", "city") == ["Berlin"], "another attribute is another slot"
    assert h.read("ada", "job") == ["pilot"]


def check_valid_time(h: Harness) -> None:
    before = h.clock.mark()
    h.clock.advance(**MINUTE)
    h.write("ada", "city", "Paris")
    h.clock.advance(**MINUTE)
    in_paris = h.clock.mark()
    h.clock.advance(**MINUTE)
    h.write("ada", "city", "Berlin")
    h.clock.advance(**MINUTE)
    in_berlin = h.clock.mark()
    assert h.read_at("ada", "city", valid_at=before) == [], "nothing was true before the write"
    assert h.read_at("ada", "city", valid_at=in_paris) == ["Paris"]
    assert h.read_at("ada", "city", valid_at=in_berlin) == ["Berlin"]


def check_transaction_time(h: Harness) -> None:
    before = h.clock.mark()
    h.write("ada", "city", "Paris")
    then = h.clock.mark()
    seen_then = h.read("ada", "city")
    h.clock.advance(**MINUTE)
    h.write("ada", "city", "Berlin")
    middle = h.clock.mark()
    h.clock.advance(**MINUTE)
    replay = h.read_at("ada", "city", known_at=then)
    assert replay == seen_then == ["Paris"], "a read at a past belief instant replays it"
    assert h.read_at("ada", "city", known_at=before) == []
    assert h.read_at("ada", "city", known_at=middle) == ["Berlin"]
    if _expressible(lambda: h.delete("ada", "city")):
        h.clock.advance(**MINUTE)
        assert h.read_at("ada", "city", known_at=then) == replay, (
            "later deletes never rewrite the past"
        )
        assert h.read_at("ada", "city", known_at=middle) == ["Berlin"]
    h.write("ada", "city", "Oslo")
    assert h.read_at("ada", "city", known_at=then) == replay, "later writes never rewrite the past"


def check_history(h: Harness) -> None:
    h.write("ada", "city", "Paris")
    h.clock.advance(**MINUTE)
    if not _declares(h, Semantic.SUPERSESSION):  # a many-valued slot: end it explicitly
        h.end("ada", "city")
        h.clock.advance(**MINUTE)
    h.write("ada", "city", "Berlin")
    got = _pairs(h.history("ada", "city"))
    assert got == [("Paris", Status.PAST), ("Berlin", Status.CURRENT)], got


def check_retraction(h: Harness) -> None:
    h.write("ada", "city", "Paris")
    then = h.clock.mark()
    h.clock.advance(**MINUTE)
    h.delete("ada", "city")
    assert h.read("ada", "city") == [], "a deleted value is not current"
    got = _pairs(h.audit("ada", "city"))
    assert got == [("Paris", Status.RETRACTED)], (
        f"the delete must be recoverable as retracted: {got}"
    )
    if _declares(h, Semantic.TRANSACTION_TIME):
        assert h.read_at("ada", "city", known_at=then) == ["Paris"]
    h.write("bo", "city", "Oslo")
    h.clock.advance(**MINUTE)
    if _expressible(lambda: h.end("bo", "city")):
        got = _pairs(h.audit("bo", "city"))
        assert got == [("Oslo", Status.PAST)], f"an ended value is past, not retracted: {got}"


def check_erasure(h: Harness) -> None:
    h.write("ada", "city", "Paris")
    h.write("bo", "city", "Oslo")
    then = h.clock.mark()
    h.clock.advance(**MINUTE)
    h.erase("ada", "city")
    assert h.read("ada", "city") == []
    if _declares(h, Semantic.RETRACTION):
        assert h.audit("ada", "city") == [], "erased values leave no audit trail"
    if _declares(h, Semantic.HISTORY):
        assert h.history("ada", "city") == []
    if _declares(h, Semantic.TRANSACTION_TIME):
        assert h.read_at("ada", "city", known_at=then) == [], "erasure reaches the past too"
    assert h.read("bo", "city") == ["Oslo"], "erasure touches nothing else"


def check_provenance(h: Harness) -> None:
    source = "I moved to Paris last spring."
    h.write_with_source("ada", "city", "Paris", source)
    assert source in h.provenance("ada", "city")


def check_time_in_output(h: Harness) -> None:
    start = h.clock.mark()
    h.write("ada", "city", "Paris")
    after = h.clock.mark()
    (timed,) = h.read_timed("ada", "city")
    assert timed.value == "Paris"
    assert timed.valid_from is not None and start <= timed.valid_from <= after
    assert timed.valid_to is None


def check_transcript(h: Harness) -> None:
    first = [("user", "Hi  there\n"), ("assistant", "Hello — 你好 👋"), ("user", "  spaced  ")]
    h.append(first)
    h.clock.advance(**MINUTE)
    more = [("assistant", "ok"), ("user", "ok")]
    h.append(more)
    assert h.transcript() == first + more, "messages come back exactly, in order"


SEMANTIC_CHECKS: dict[Semantic, Callable[[Harness], None]] = {
    Semantic.CURRENT_VIEW: check_current_view,
    Semantic.SUPERSESSION: check_supersession,
    Semantic.VALID_TIME: check_valid_time,
    Semantic.TRANSACTION_TIME: check_transaction_time,
    Semantic.HISTORY: check_history,
    Semantic.RETRACTION: check_retraction,
    Semantic.ERASURE: check_erasure,
    Semantic.PROVENANCE: check_provenance,
    Semantic.TIME_IN_OUTPUT: check_time_in_output,
    Semantic.TRANSCRIPT: check_transcript,
}


def preskip_reason(harness_class: type, test: str, params: dict[str, object]) -> str | None:
    """Why a kit test will skip, known from the harness class alone (its ``adapter``
    and ``siblings`` class attributes), so the suite can skip it before building a
    store; ``None`` when only running it can tell."""
    adapter = getattr(harness_class, "adapter", None)
    spec = spec_of(adapter) if isinstance(adapter, type) else None
    siblings = getattr(harness_class, "siblings", None)
    semantic = params.get("semantic")
    if spec is not None and test.startswith("test_") and test[5:].upper() in Semantic.__members__:
        declared = Semantic[test[5:].upper()]
        if declared not in spec.semantics:
            return f"{spec.name} does not declare {declared.name}"
    if spec is not None and test == "test_undeclared_is_refused" and isinstance(semantic, Semantic):
        if semantic in spec.semantics:
            return f"{spec.name} declares {semantic.name}; its own tests run"
        if semantic not in REQUESTS:
            return f"{semantic.name} is a behaviour, not a request a caller can make"
    kind = params.get("kind")
    if test == "test_sibling_isolated" and isinstance(siblings, frozenset) and kind not in siblings:
        return f"the harness cannot make a sibling {kind}"
    return None


def check_declared(h: Harness, semantic: Semantic) -> None:
    """Run the tests of ``semantic`` if the adapter declares it, else skip."""
    spec = spec_of(h.adapter)
    if semantic not in spec.semantics:
        pytest.skip(f"{spec.name} does not declare {semantic.name}")
    SEMANTIC_CHECKS[semantic](h)


# -- undeclared semantics ---------------------------------------------------------------
# The request that asks for each semantic. Behaviours (CURRENT_VIEW, SUPERSESSION)
# are not requests a caller makes, so there is nothing to refuse.
REQUESTS: dict[Semantic, Callable[[Harness], object]] = {
    Semantic.VALID_TIME: lambda h: h.read_at("ada", "city", valid_at=h.clock.mark()),
    Semantic.TRANSACTION_TIME: lambda h: h.read_at("ada", "city", known_at=h.clock.mark()),
    Semantic.HISTORY: lambda h: h.history("ada", "city"),
    Semantic.RETRACTION: lambda h: h.audit("ada", "city"),
    Semantic.ERASURE: lambda h: h.erase("ada", "city"),
    Semantic.PROVENANCE: lambda h: h.provenance("ada", "city"),
    Semantic.TIME_IN_OUTPUT: lambda h: h.read_timed("ada", "city"),
    Semantic.TRANSCRIPT: lambda h: h.transcript(),
}


def check_undeclared(h: Harness, semantic: Semantic) -> None:
    """Asking an adapter for a semantic it does not declare raises ``UnsupportedSemantics``."""
    spec = spec_of(h.adapter)
    if semantic in spec.semantics:
        pytest.skip(f"{spec.name} declares {semantic.name}; its own tests run")
    request = REQUESTS.get(semantic)
    if request is None:
        pytest.skip(f"{semantic.name} is a behaviour, not a request a caller can make")
    if semantic is not Semantic.TRANSCRIPT:
        _expressible(lambda: h.write("ada", "city", "Paris"))  # something to ask about, if it can
    try:
        result = request(h)
    except NotExpressible as exc:
        pytest.skip(f"not expressible through the framework's API: {exc}")
    except UnsupportedSemantics as exc:
        # One ``as_of`` argument asks for both clocks: refusing it as either is honest.
        same = exc.semantic is semantic or {exc.semantic, semantic} <= TIME_TRAVEL
        assert same, f"raised for {exc.semantic.name}, asked {semantic.name}"
        return
    raise AssertionError(
        f"{spec.name} does not declare {semantic.name} but answered the request "
        f"({result!r}) instead of raising UnsupportedSemantics"
    )


# -- isolation (every adapter) ------------------------------------------------------------
SIBLING_NAMES = ("other", "kit%", "kit_", "kit*", "kit.x", "o'brien\"; --")
PREFIX_NAMES = ("a%", "a_", "a*", "a.", "a\\")


def check_sibling_isolated(h: Harness, kind: str, name: str) -> None:
    """Another user's / tenant's / sibling session's data never leaks, either way."""
    if kind not in h.siblings:
        pytest.skip(f"the harness cannot make a sibling {kind}")
    s = h.sibling(kind, name)
    h.write("ada", "city", "Paris")
    assert s.read("ada", "city") == [], f"{kind} {name!r} sees its sibling's data"
    s.write("ada", "city", "Rome")
    assert h.read("ada", "city") == ["Paris"], f"a {kind} {name!r} write leaked back"
    assert s.read("ada", "city") == ["Rome"]
    if _declares(h, Semantic.HISTORY):
        assert [e.value for e in s.history("ada", "city")] == ["Rome"]
        assert [e.value for e in h.history("ada", "city")] == ["Paris"]
    if _expressible(lambda: h.find("ada")):
        assert s.find("ada") <= {"ada"} and h.find("ada") <= {"ada"}


def check_prefix_not_widened(h: Harness) -> None:
    """``%``, ``_``, ``*``, ``.`` and ``\\`` in a name are characters, never wildcards."""
    written = set()
    for entity in ("ab", "abc", "a", *PREFIX_NAMES):
        try:
            h.write(entity, "city", f"city of {entity}")
        except ValueError:  # the framework refuses the name: it cannot widen anything
            continue
        except NotExpressible as exc:  # a message log has no named records at all
            pytest.skip(f"not expressible through the framework's API: {exc}")
        written.add(entity)
    if not _expressible(lambda: h.find("ab")):
        pytest.skip("the framework has no prefix read")
    for name in PREFIX_NAMES:
        try:
            found = h.find(name)
        except ValueError:
            continue
        wider = {e for e in found if not e.startswith(name)}
        assert not wider, f"prefix {name!r} widened to {sorted(wider)}"
        if name in written:
            assert name in found, f"prefix {name!r} does not find its own entity"
    assert "ab" in h.find("ab")
