"""The predicate registry: canonical names, aliases, cardinality, volatility.

The built-in vocabulary below is the default; a store persists what is
registered beyond it. Unknown predicates are ``MANY``: keeping two values
degrades ranking, dropping a true one destroys information."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Cardinality(str, enum.Enum):
    ONE = "one"
    MANY = "many"


class Volatility(str, enum.Enum):
    """How fast a value of this predicate goes stale; drives recency decay."""

    STABLE = "stable"  # a birth date: never decays
    SLOW = "slow"  # where someone lives or works
    FAST = "fast"  # tastes, plans, moods

    @property
    def half_life_days(self) -> float | None:
        return {"stable": None, "slow": 365.0, "fast": 30.0}[self.value]


@dataclass(frozen=True)
class PredicateSpec:
    name: str
    cardinality: Cardinality = Cardinality.MANY
    volatility: Volatility = Volatility.SLOW
    aliases: tuple[str, ...] = ()


ONE, MANY = Cardinality.ONE, Cardinality.MANY
STABLE, SLOW, FAST = Volatility.STABLE, Volatility.SLOW, Volatility.FAST

BUILTIN: tuple[PredicateSpec, ...] = (
    PredicateSpec("name", ONE, STABLE, ("is_named", "called", "full_name")),
    PredicateSpec("lives_in", ONE, SLOW, ("resides_in", "based_in", "located_in", "home_city")),
    PredicateSpec("works_at", ONE, SLOW, ("employed_by", "employer", "works_for")),
    PredicateSpec("job_title", ONE, SLOW, ("role", "position", "occupation")),
    PredicateSpec("born_in", ONE, STABLE, ("birthplace", "place_of_birth")),
    PredicateSpec("birthday", ONE, STABLE, ("born_on", "date_of_birth")),
    PredicateSpec("nationality", ONE, STABLE, ()),
    PredicateSpec("age", ONE, FAST, ()),
    PredicateSpec("married_to", ONE, SLOW, ("spouse", "partner_of")),
    PredicateSpec("email", ONE, SLOW, ("email_address",)),
    PredicateSpec("phone", ONE, SLOW, ("phone_number",)),
    PredicateSpec("timezone", ONE, SLOW, ("time_zone",)),
    PredicateSpec("preferred_language", ONE, SLOW, ()),
    PredicateSpec("likes", MANY, FAST, ("loves", "enjoys", "prefers", "favorite")),
    PredicateSpec("dislikes", MANY, FAST, ("hates",)),
    PredicateSpec("speaks", MANY, STABLE, ("knows_language",)),
    PredicateSpec("allergic_to", MANY, STABLE, ("allergy",)),
    PredicateSpec("has", MANY, SLOW, ("owns", "has_pet", "has_child")),
    PredicateSpec("plans", MANY, FAST, ("plans_to", "intends_to")),
    PredicateSpec("working_on", MANY, FAST, ("project",)),
    PredicateSpec("knows", MANY, SLOW, ("friend_of",)),
)
