"""The errors chronomem raises. Every one is a ``ChronomemError``; where Python
has a natural built-in type for the mistake, the error is that type too."""

from __future__ import annotations


class ChronomemError(Exception):
    """Base class of every error chronomem raises on purpose."""


class InvalidInput(ChronomemError, ValueError):
    """A value the caller passed is not acceptable (nothing was written)."""


class InvalidType(ChronomemError, TypeError):
    """An argument has the wrong type (nothing was written)."""


class NaiveDatetime(InvalidInput):
    """A datetime without a timezone: chronomem never guesses one."""


class InvalidInterval(InvalidInput):
    """``valid_to`` is not after ``valid_from``."""


class InvalidTimeSelector(InvalidInput):
    """``as_of`` was combined with ``valid_at`` or ``known_at``, or a state name is unknown."""


class NotFound(ChronomemError, KeyError):
    """A fact or episode id that is not in this scope."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else "not found"


class StoreClosed(ChronomemError, RuntimeError):
    """The store was closed."""


class TimeTravel(ChronomemError, ValueError):
    """An import tried to record a belief before one already recorded for its slot."""


class SchemaMismatch(ChronomemError, RuntimeError):
    """The database was written by a newer chronomem, or by another embedder dimension."""


class ScopeError(ChronomemError, PermissionError):
    """A write reached for a fact outside the writer's scope (e.g. shared memory of
    an enclosing scope): change it through the scope that owns it."""


class StaleFact(ChronomemError, ValueError):
    """The fact has no current version (it was retracted or corrected): nothing to change."""


class UnknownPredicate(InvalidInput):
    """A predicate name that cannot be registered (empty, or an alias conflict)."""


class StoreUnavailable(ChronomemError, OSError):
    """The database cannot be opened or reached (a missing directory or file, a
    refused connection, an unknown host, missing permissions); the message says
    what to check. Nothing was written."""


class CorruptStore(ChronomemError, RuntimeError):
    """The file is not a chronomem store, or the database is damaged; the message
    says what to try (``chronomem doctor --repair``, a backup)."""


class ReadOnlyStore(ChronomemError, PermissionError):
    """A write to a store that was opened read-only (its file is not writable)."""


class MissingDriver(ChronomemError, ImportError):
    """A URL needs a driver that is not installed; the message names the extra that
    brings it (``pip install 'chronomem[postgres]'``)."""


class ReadOnlyView(ChronomemError, RuntimeError):
    """A write was sent to a read-only time-travel view (an adapter's ``as_of``:
    the LangGraph store's put, delete, erase or TTL refresh; a CrewAI memory's
    remember, update, forget, reset or erase). Write to the live object instead."""
