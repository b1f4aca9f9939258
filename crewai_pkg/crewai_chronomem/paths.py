"""CrewAI scope paths (``/crew/research/agent/writer``), path-aware.

CrewAI organises memories in a tree of slash-separated paths and reads "a
scope" as that path and everything under it. Its LanceDB storage matches
scopes as a *character* prefix, so ``/a`` also matches ``/ab``; here a prefix
matches whole segments only: ``/a`` covers ``/a`` and ``/a/b``, never
``/ab``. Paths are compared as given (after normalisation), so ``%``, ``_``,
``*`` and ``.`` are characters, never wildcards."""

from __future__ import annotations

from chronomem import InvalidInput, InvalidType

ROOT = "/"
MAX_PATH = 1024


def normalize(path: object, name: str = "scope") -> str:
    """``crew//x/`` -> ``/crew/x``; ``None``/``""`` -> ``/``."""
    if path is None:
        return ROOT
    if not isinstance(path, str):
        raise InvalidType(f"{name} must be a str path like '/crew/x', not {type(path).__name__}")
    if len(path) > MAX_PATH:
        raise InvalidInput(f"{name} is longer than {MAX_PATH} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        raise InvalidInput(f"{name} must not contain control characters: {path[:80]!r}")
    parts = [p for p in path.strip().split("/") if p]
    return ROOT + "/".join(parts) if parts else ROOT


def join(root: str | None, inner: str | None) -> str:
    """``root`` + ``inner`` as one normalised path (CrewAI's ``join_scope_paths``)."""
    r = normalize(root)
    i = normalize(inner)
    if r == ROOT:
        return i
    if i == ROOT:
        return r
    return r + i


def within(path: str, prefix: str | None) -> bool:
    """Whether ``path`` is ``prefix`` or below it (whole segments only)."""
    p = normalize(prefix)
    if p == ROOT:
        return True
    return path == p or path.startswith(p + "/")


def child_of(path: str, parent: str) -> str | None:
    """The immediate child of ``parent`` on the way to ``path`` (or ``None``)."""
    par = normalize(parent)
    if path == par or not within(path, par):
        return None
    rest = path[len(par) :].lstrip("/") if par != ROOT else path.lstrip("/")
    head = rest.split("/", 1)[0]
    return (par.rstrip("/") + "/" + head) if par != ROOT else ROOT + head
