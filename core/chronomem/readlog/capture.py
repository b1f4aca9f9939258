"""Logging the three reads: ``Memory.facts``, ``search`` and ``recall`` are
decorated with ``logged``; with the log off a read pays one attribute check."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .args import encode
from .batch import pending, record
from .instant import read_clock, read_instant

if TYPE_CHECKING:
    from ..memory import Memory

F = TypeVar("F", bound=Callable[..., Any])

# set while a logged read runs the reads it is made of (recall runs search and facts):
# the inner reads add their items to the outer read instead of logging themselves
collect: ContextVar[list[tuple[str, str, float | None, str | None]] | None] = ContextVar(
    "chronomem_read_collect", default=None
)


def logged(op: str) -> Callable[[F], F]:
    """Decorate ``Memory.facts``/``search``/``recall``: with the log off, one check."""

    def deco(fn: F) -> F:
        sig = _Signature(inspect.signature(fn))

        @functools.wraps(fn)
        def wrapper(self: Memory, *args: Any, **kwargs: Any) -> Any:
            if not self._engine.read_log:
                return fn(self, *args, **kwargs)
            return _serve(self, op, fn, sig, args, kwargs)

        return cast(F, wrapper)

    return deco


def _items(op: str, out: Any) -> list[tuple[str, str, float | None, str | None]]:
    if op == "facts":
        return [("v", f.version_id, None, f.state.value) for f in out]
    found: list[tuple[str, str, float | None, str | None]] = []
    for h in out:
        if h.fact is not None:
            found.append(("v", h.fact.version_id, float(h.score), h.fact.state.value))
        elif h.episode is not None:
            found.append(("e", h.episode.id, float(h.score), None))
    return found


class _Signature:
    """A read's signature, with what binding a call needs worked out once:
    ``inspect.Signature.bind`` cost a fifth of a logged point read."""

    def __init__(self, sig: inspect.Signature):
        self.sig = sig
        params = list(sig.parameters.values())[1:]  # after self
        self.positional = tuple(
            p.name
            for p in params
            if p.kind
            in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        )
        self.names = frozenset(p.name for p in params)
        self.defaults = {p.name: p.default for p in params if p.default is not p.empty}
        self.simple = all(
            p.kind is not p.VAR_POSITIONAL and p.kind is not p.VAR_KEYWORD for p in params
        )

    def arguments(
        self, mem: Memory, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Every argument of the call by name, defaults included (None: the call
        does not bind, and raises its own error)."""
        if self.simple and len(args) <= len(self.positional):
            given = dict(zip(self.positional, args, strict=False))
            if not (given.keys() & kwargs.keys()) and kwargs.keys() <= self.names:
                call = {**self.defaults, **given, **kwargs}
                if len(call) == len(self.names):  # every parameter without a default given
                    return call
        try:
            bound = self.sig.bind(mem, *args, **kwargs)
        except TypeError:
            return None
        bound.apply_defaults()
        out = dict(bound.arguments)
        out.pop("self", None)
        return out


def _serve(
    mem: Memory,
    op: str,
    fn: Callable[..., Any],
    sig: _Signature,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    outer = collect.get()
    if outer is not None:  # part of a logged read (recall): it records the items
        out = fn(mem, *args, **kwargs)
        if op != "recall":
            outer.extend(_items(op, out))
        return out
    call = sig.arguments(mem, args, kwargs)
    if call is None:
        return fn(mem, *args, **kwargs)  # the call's own error
    if call.get("valid_at") is None and call.get("as_of") is None:
        call["valid_at"] = mem.now()  # what the read would use: logged, so replay pins it
    collected: list[tuple[str, str, float | None, str | None]] = []
    instants: list[int] = []
    pending(mem._engine)  # the clock listener is on the engine before the read begins
    token = collect.set(collected)
    clock = read_clock.set((mem.scope.tenant, instants))
    try:
        out = fn(mem, **call)
    finally:
        read_clock.reset(clock)
        collect.reset(token)
    items = collected if op == "recall" else _items(op, out)
    at = max(instants) if instants else read_instant(mem)
    record(mem, op, encode(call), items, at)
    return out
