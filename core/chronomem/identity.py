"""Folding of names into keys, so that one entity has one key.

``Acme Corp.`` == ``ACME, Inc.`` == ``acme``: NFKC, casefold, punctuation and
whitespace normalised, and a trailing legal suffix dropped."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from .errors import InvalidInput, InvalidType, NotFound

LEGAL_SUFFIXES = frozenset(
    [
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "company",
        "llc",
        "llp",
        "ltd",
        "limited",
        "plc",
        "gmbh",
        "ag",
        "sa",
        "sas",
        "srl",
        "spa",
        "bv",
        "nv",
        "oy",
        "ab",
        "as",
        "pty",
        "pte",
        "kk",
    ]
)

_SPACES = re.compile(r"\s+")


def _strip_punctuation(text: str) -> str:
    # Unicode categories P* (punctuation) and S* (symbols) become spaces; letters,
    # digits and marks stay, in every script. An ASCII text in one ``translate``
    # (the ASCII characters of those categories, each to a space).
    if text.isascii():
        return text.translate(_ASCII_PUNCTUATION)
    return "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)


_ASCII_PUNCTUATION = {c: " " for c in range(128) if unicodedata.category(chr(c))[0] in "PS"}


def fold(text: str) -> str:
    """The identity key of a subject or object name."""
    base = unicodedata.normalize("NFKC", text).casefold()
    words = _SPACES.sub(" ", _strip_punctuation(base)).strip().split(" ")
    while len(words) > 1 and words[-1] in LEGAL_SUFFIXES:
        words.pop()
    key = " ".join(w for w in words if w)
    if key:
        return key
    # Only punctuation or symbols (an emoji, "?!"): keep them, normalised.
    return _SPACES.sub(" ", base).strip()


def require_text(value: object, name: str) -> str:
    """A non-empty string argument, or a clear error."""
    if not isinstance(value, str):
        raise InvalidType(f"{name} must be a str, not {type(value).__name__}")
    if not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    return encodable(value, name)


def encodable(value: str, name: str) -> str:
    """Text that can be stored: any Unicode except lone surrogates (not UTF-8)."""
    if value.isascii():  # no surrogate: nothing to encode to know it
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            f"{name} contains a lone surrogate; it is not valid Unicode text"
        ) from None
    return value


_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


def require_id(value: object, name: str) -> str:
    """A fact or episode id: ours are short ASCII tokens, so anything else names nothing."""
    if not isinstance(value, str):
        raise InvalidType(f"{name} must be a str, not {type(value).__name__}")
    if not _ID.fullmatch(value):
        raise NotFound(f"no {name.replace('_', ' ')} {value[:80]!r}")
    return value


def key_hash(key: str) -> str:
    """A fixed-size stand-in for a key, for indexes (a long key would not fit a btree)."""
    return hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()


def fold_predicate(text: str) -> str:
    """Predicate names: ``Lives In`` / ``lives-in`` / ``livesIn`` -> ``lives_in``."""
    t = unicodedata.normalize("NFKC", text).strip()
    t = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", t).casefold()
    t = re.sub(r"[\W_]+", "_", t).strip("_")
    return t or unicodedata.normalize("NFKC", text).strip().casefold()
