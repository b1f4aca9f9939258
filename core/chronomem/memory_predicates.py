"""``Memory``'s predicate registry methods: registering a predicate and its
aliases in a tenant, and resolving a name (``chronomem.registry``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .arguments import predicate_spec
from .identity import require_text
from .predicates import Cardinality, PredicateSpec, Volatility

if TYPE_CHECKING:
    from .engine import Engine
    from .scope import Scope


class PredicateMethods:
    """Mixed into ``Memory``: its tenant's predicate registry."""

    _engine: Engine
    scope: Scope

    def register_predicate(
        self,
        name: str,
        *,
        cardinality: Cardinality | str = Cardinality.MANY,
        volatility: Volatility | str = Volatility.SLOW,
        aliases: Sequence[str] = (),
    ) -> PredicateSpec:
        """Persist a predicate (and its aliases) in this tenant's registry.

        :param name: the predicate's name (folded: lower case, words joined by ``_``)
        :param cardinality: ``"one"`` (one value at a time) or ``"many"`` (default)
        :param volatility: how fast a value goes stale (recency decay): ``"stable"``,
            ``"slow"`` (default) or ``"fast"``
        :param aliases: other names that resolve to it (default none)"""
        self._engine.check_open()
        spec = predicate_spec(name, cardinality, volatility, aliases)
        self._engine.register_predicate(self.scope.tenant, spec)
        return spec

    def predicate(self, name: str) -> PredicateSpec:
        """The registry's spec for a predicate name or alias (unknown: MANY).

        :param name: a predicate name or alias"""
        self._engine.check_open()
        return self._engine.resolve_predicate(self.scope.tenant, name)

    def predicate_known(self, name: str) -> bool:
        """Whether ``name`` is a built-in predicate or alias, or registered in this
        tenant (``predicate`` resolves an unknown name to ``MANY`` too).

        :param name: a predicate name or alias"""
        self._engine.check_open()
        return self._engine.predicate_known(self.scope.tenant, require_text(name, "name"))
