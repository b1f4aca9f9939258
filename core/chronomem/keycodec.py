"""Injective one-string forms of tuples of strings (slot keys, scope keys, hashes).

Joining parts with a separator character is ambiguous as soon as a part may
contain that character: ``("a\\x1eb", "c")`` and ``("a", "b\\x1ec")`` would
join to the same string, so two facts would share one slot and the second
write would silently end the first. ``join`` escapes each part first, so
distinct tuples always give distinct strings:

* the escape character ``ESC`` (``\\x1d``) becomes ``ESC ESC``;
* the separator becomes ``ESC ~``;
* parts are then joined with the separator.

Reading left to right, an ``ESC`` always starts a two-character escape and a
bare separator always ends a part, so the joined string decodes to exactly one
tuple (``split`` is the inverse). A part without ``ESC`` and without the
separator is left unchanged, so every key built from such strings is the same
as under the plain join stores were written with before — only keys of
strings containing those two control characters differ (see ``legacy_join``
and ``chronomem.slotkeys`` for re-keying such rows)."""

from __future__ import annotations

from collections.abc import Iterable

ESC = "\x1d"
SEP_SLOT = "\x1e"
SEP_FIELD = "\x1f"
_SEP_CODE = "~"


def escape(part: str, sep: str) -> str:
    """``part`` with ``ESC`` and ``sep`` escaped (unchanged when it has neither)."""
    if ESC not in part and sep not in part:
        return part
    return part.replace(ESC, ESC + ESC).replace(sep, ESC + _SEP_CODE)


def join(parts: Iterable[str], sep: str) -> str:
    """An injective join: distinct tuples of strings give distinct strings."""
    if sep == ESC or len(sep) != 1:
        raise ValueError("the separator is one character other than the escape")
    parts = list(parts)
    raw = sep.join(parts)
    if ESC not in raw and raw.count(sep) == len(parts) - 1:
        return raw  # the common case: nothing to escape
    return sep.join(escape(p, sep) for p in parts)


def split(text: str, sep: str) -> list[str]:
    """The parts ``join`` was given (the inverse of ``join``)."""
    parts: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == ESC:
            nxt = text[i + 1 : i + 2]
            if nxt == ESC:
                cur.append(ESC)
            elif nxt == _SEP_CODE:
                cur.append(sep)
            else:
                raise ValueError(f"not a joined key: bad escape at {i}")
            i += 2
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
            i += 1
        else:
            cur.append(ch)
            i += 1
    parts.append("".join(cur))
    return parts


def legacy_join(parts: Iterable[str], sep: str) -> str:
    """The plain join that stores written before the escaped form used (ambiguous)."""
    return sep.join(parts)
