"""A deliberately small adapter over ``chronomem.Memory`` used to test the kit
itself: it keeps CURRENT_VIEW, SUPERSESSION and HISTORY, has an ``as_of``
argument it must refuse (it keeps no past instants) and a ``sources`` read
it must refuse too. ``broken=True`` makes it ignore those requests silently,
which the kit has to catch."""

from __future__ import annotations

from datetime import datetime

from chronomem import Cardinality, Memory, State
from chronomem.ops import EndOp
from chronomem.timeutil import to_us
from chronomem_adapters import Semantic, TimeKeeping, UnsupportedSemantics, declare
from chronomem_adapters.conformance import Entry, HarnessBase, KitClock, Status


@declare(
    {Semantic.CURRENT_VIEW, Semantic.SUPERSESSION, Semantic.HISTORY},
    as_of=TimeKeeping.NONE,
    name="Toy adapter",
)
class ToyAdapter:
    def __init__(self, memory: Memory, *, broken: bool = False):
        self.memory = memory
        self.broken = broken

    def set(self, entity: str, attribute: str, value: str) -> None:
        op = self.memory.assertion(entity, attribute, value, exact=True, cardinality="one")
        self.memory.apply([op])

    def unset(self, entity: str, attribute: str) -> None:
        at = to_us(self.memory.now())
        self.memory.apply(
            [EndOp(entity, attribute, None, at, exact=True, cardinality=Cardinality.ONE)]
        )

    def get(self, entity: str, attribute: str, *, as_of: datetime | None = None) -> list[str]:
        if as_of is not None and not self.broken:
            raise UnsupportedSemantics(Semantic.TRANSACTION_TIME, "Toy adapter")
        facts = self.memory.facts(subject=entity, predicate=attribute, exact=True)
        return [f.object for f in facts]

    def past(self, entity: str, attribute: str) -> list[tuple[str, State]]:
        facts = self.memory.facts(
            subject=entity, predicate=attribute, exact=True, states=["live", "ended"]
        )
        return [(f.object, f.state) for f in sorted(facts, key=lambda f: f.valid_from)]

    def sources(self, entity: str, attribute: str) -> list[str]:
        if not self.broken:
            raise UnsupportedSemantics(Semantic.PROVENANCE, "Toy adapter")
        return []


class ToyHarness(HarnessBase):
    adapter = ToyAdapter
    siblings = frozenset({"user", "tenant"})

    def __init__(self, root: Memory, clock: KitClock, *, broken: bool = False, scope=None):
        self.root, self.clock, self.broken = root, clock, broken
        self.scope = scope or {"user": "u"}
        self.toy = ToyAdapter(root.scoped(**self.scope), broken=broken)

    def write(self, entity, attribute, value):
        self.toy.set(entity, attribute, value)

    def end(self, entity, attribute):
        self.toy.unset(entity, attribute)

    def read(self, entity, attribute):
        return self.toy.get(entity, attribute)

    def read_at(self, entity, attribute, *, valid_at=None, known_at=None):
        return self.toy.get(entity, attribute, as_of=known_at or valid_at)

    def history(self, entity, attribute):
        status = {State.LIVE: Status.CURRENT, State.ENDED: Status.PAST}
        return [Entry(v, status[s]) for v, s in self.toy.past(entity, attribute)]

    def provenance(self, entity, attribute):
        return self.toy.sources(entity, attribute)

    def sibling(self, kind, name):
        scope = {"user": name} if kind == "user" else {"tenant": name, "user": "u"}
        return ToyHarness(self.root, self.clock, broken=self.broken, scope=scope)
