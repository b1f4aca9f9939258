"""An id's text is formatted as one number (``statemachine.id_text``): the same
24 characters the three-part form gave (13 hex digits of microseconds, or more
once they outgrow them, 3 of the counter, 8 of the random tail), for any parts;
``new_id`` and ``new_id_pair`` give what the three-part form gives for the
clock, counter and random draws they make."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import statemachine


def _three_parts(us: int, n: int, tail: int) -> str:
    return f"{us:013x}{n:03x}{tail:08x}"


@given(
    st.one_of(st.integers(0, 2**52), st.integers(2**52, 2**64)),
    st.integers(0, 0xFFF),
    st.integers(0, 2**32 - 1),
)
def test_id_text_is_the_three_part_form(us: int, n: int, tail: int) -> None:
    assert statemachine.id_text(us, n, tail) == _three_parts(us, n, tail)


@pytest.mark.parametrize("start", [0, 7, 0xFFE, 0xFFF])
def test_drawn_ids_are_the_three_part_form(monkeypatch: pytest.MonkeyPatch, start: int) -> None:
    times = [1_733_000_000_000_123_456, 1_733_000_000_000_123_999, 1_733_000_000_000_999_000]
    clock = iter(times)
    monkeypatch.setattr(statemachine.time, "time_ns", lambda: next(clock))
    monkeypatch.setattr(statemachine, "_counter", itertools.count(start))
    monkeypatch.setattr(statemachine, "_tail", random.Random(5))
    draws: Any = random.Random(5)
    read = iter(t // 1000 for t in times)
    a, b = statemachine.new_id_pair()
    tail = draws.getrandbits(64)
    n, m = start & 0xFFF, (start + 1) & 0xFFF
    us = next(read)
    assert a == _three_parts(us, n, tail >> 32)
    if m == 0:  # the counter wrapped: a later microsecond
        us = max(next(read), us + 1)
    assert b == _three_parts(us, m, tail & 0xFFFFFFFF)
    c = statemachine.new_id()
    assert c == _three_parts(next(read), (start + 2) & 0xFFF, draws.getrandbits(32))
