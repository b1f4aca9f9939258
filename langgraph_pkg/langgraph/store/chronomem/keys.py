"""How a LangGraph item is keyed in chronomem: subjects and predicates.

An item is a logical document. Its subject encodes namespace and key without
ambiguity, and so that a namespace prefix is a character prefix of the
subjects under it::

    ("users", "42"), "prefs"  ->  "lg:users.42..prefs"

Namespace labels never contain ``.`` (LangGraph refuses them), so each label
ends at its ``.``; labels are never empty, so a second ``.`` ends the
namespace; the key is the rest, with ``\\`` and NUL escaped. ``("a",)``
prefixes ``"lg:a."``, which ``("ab",)``'s ``"lg:ab."`` does not start with, and
``%``/``_``/``*`` are plain characters: chronomem matches prefixes by exact
comparison, never by pattern.

Predicates: an item is one fact, ``item``, whose object is its document
(``records``; a person reading the store sees the item's value there). The
old layout (still read) kept a marker ``@item`` and one fact per field, whose
predicate was its name (``\\``-escaped when it starts with
``@`` or ``\\``; a hash for names chronomem cannot key: blank, over 200
characters, or containing NUL). Reserved predicates start with ``@``: the
item's marker and its search index entries."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

SUBJECT_PREFIX = "lg:"
DOC = "item"  # the item's document: one version per put (records.py)
MARKER = "@item"  # the old layout's marker (stores written before the document)
INDEX_PREFIX = "@index:"
HASHED_PREFIX = "@h:"
MAX_NAME = 200


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def digest_text(text: str) -> str:
    """The object of an index entry: a digest of its text (the text itself is the
    entry's ``index_text``), so a changed text supersedes the old entry."""
    return _digest(text)


def namespace_prefix(namespace: Sequence[str]) -> str:
    """The subject prefix shared by every item whose namespace starts with ``namespace``."""
    if type(namespace) is tuple:
        try:
            return _tuple_prefix(namespace)
        except TypeError:  # a label that is not hashable: formatted as before, uncached
            pass
    return SUBJECT_PREFIX + "".join(f"{label}." for label in namespace)


@functools.lru_cache(maxsize=4096)  # a batch puts many items into a few namespaces
def _tuple_prefix(namespace: tuple[str, ...]) -> str:
    return SUBJECT_PREFIX + "".join(f"{label}." for label in namespace)


def _escape_key(key: str) -> str:
    if "\\" not in key and "\x00" not in key:
        return key  # nothing to escape (the common case)
    return key.replace("\\", "\\\\").replace("\x00", "\\0")


def _unescape_key(text: str) -> str:
    if "\\" not in text:
        return text  # nothing escaped (the common case): no walk over the characters
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append("\x00" if nxt == "0" else nxt)
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def subject(namespace: Sequence[str], key: str) -> str:
    """The subject of the item ``key`` in ``namespace``."""
    return namespace_prefix(namespace) + "." + _escape_key(key)


@functools.lru_cache(maxsize=65_536)  # every read parses the subjects it groups
def parse_subject(text: str) -> tuple[tuple[str, ...], str] | None:
    """``(namespace, key)`` of a subject written by ``subject``; ``None`` for others."""
    if not text.startswith(SUBJECT_PREFIX):
        return None
    rest = text[len(SUBJECT_PREFIX) :]
    labels: list[str] = []
    while True:
        if rest.startswith("."):
            return tuple(labels), _unescape_key(rest[1:])
        dot = rest.find(".")
        if dot <= 0:
            return None
        labels.append(rest[:dot])
        rest = rest[dot + 1 :]


def field_predicate(name: str) -> str:
    """The predicate that keys the top-level field ``name``."""
    if not name.strip() or len(name) > MAX_NAME or "\x00" in name:
        return HASHED_PREFIX + _digest(name)
    return "\\" + name if name[0] in "@\\" else name


@functools.lru_cache(maxsize=1024)  # a store indexes a few paths: each named once
def index_predicate(path: str, position: int | None = None) -> str:
    """The predicate of one search-index entry (``position`` for a path with several texts)."""
    name = path if position is None else f"{path}#{position}"
    if len(name) > MAX_NAME or "\x00" in name:
        name = "#" + _digest(name)
    return INDEX_PREFIX + name


def is_field(predicate: str) -> bool:
    return not predicate.startswith("@") or predicate.startswith(HASHED_PREFIX)


def field_name(predicate: str, names: Sequence[str] = ()) -> str | None:
    """The field a predicate keys; hashed ones are found among ``names``."""
    if predicate.startswith(HASHED_PREFIX):
        return next((n for n in names if field_predicate(n) == predicate), None)
    if predicate.startswith("@"):
        return None
    return predicate[1:] if predicate.startswith("\\") else predicate
