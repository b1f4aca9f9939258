"""``Memory``'s erasure methods: physical deletion of facts, a subject, or a whole
scope, reaching vectors, text indexes, episodes and the read log (``chronomem.erasure``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import erasure
from .arguments import FactRef, ref_id
from .identity import fold, require_text

if TYPE_CHECKING:
    from .engine import Engine
    from .scope import Scope


class ErasureMethods:
    """Mixed into ``Memory``: irreversible deletion in its scope."""

    _engine: Engine
    scope: Scope

    def erase(self, fact_id: FactRef) -> dict[str, int]:
        """Physically delete every version of a fact, its vectors and text index
        entries, and its source episodes that no surviving fact cites. Irreversible.

        :param fact_id: the fact's id, the id of any of its versions, or a ``Fact``"""
        ref = ref_id(fact_id)
        self._engine.check_open()
        return erasure.erase(self._engine, self.scope, fact_ref=ref)

    def erase_subject(
        self, subject: str, *, exact: bool = False, descendants: bool = True
    ) -> dict[str, int]:
        """``erase`` every fact about ``subject`` (every predicate, every belief state).

        :param subject: who or what the facts are about
        :param exact: match the subject as given, without folding (default ``False``)
        :param descendants: also in every scope under this one (default ``True``: from
            the tenant, every user's, agent's and session's facts about it)"""
        key = require_text(subject, "subject") if exact else fold(require_text(subject, "subject"))
        self._engine.check_open()
        return erasure.erase(
            self._engine,
            self.scope,
            subject_key=key,
            subject=subject,
            descendants=bool(descendants),
        )

    def purge(self) -> dict[str, int]:
        """Physically delete everything in this scope and the scopes under it
        (a user's purge takes their sessions too; other users are untouched)."""
        self._engine.check_open()
        return erasure.purge(self._engine, self.scope)
