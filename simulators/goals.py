"""Target-free information goals (RDL paper): constraints on the movie, requests about it.

A goal is sampled around a random catalog item (the anchor), so at least one
movie in the catalog satisfies it; the user is told only the constraints,
never the anchor, and accepts any recommended movie that meets them all.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from simulators.catalog_access import CatalogView, ItemFacts
from simulators.grounding import ProfileFacts

CONSTRAINT_SLOTS = ("genre", "year", "actor", "director")
REQUEST_SLOTS = ("plot", "director", "rating")
# How often each constraint slot is picked when the anchor has a value for it.
SLOT_WEIGHTS = {"genre": 3.0, "actor": 2.0, "year": 1.0, "director": 1.0}


def with_article(phrase: str) -> str:
    """'action movie' -> 'an action movie'."""
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


@dataclass
class Goal:
    constraints: dict[str, str]
    requests: list[str]
    anchor: Optional[str] = field(default=None, repr=False)  # the item the goal was built around

    def to_dict(self) -> dict[str, Any]:
        return {"constraints": dict(self.constraints), "requests": list(self.requests)}

    def unmet(self, facts: Optional[ItemFacts]) -> list[str]:
        """The constraint slots `facts` fails (all of them when the item is unknown)."""
        if facts is None:
            return list(self.constraints)
        return [slot for slot, value in self.constraints.items() if not facts.has(slot, value)]

    def satisfied_by(self, facts: Optional[ItemFacts]) -> bool:
        return facts is not None and not self.unmet(facts)

    def profile_facts(self) -> ProfileFacts:
        """The goal's genre and year: all a user with this goal may name as a taste."""
        year = self.constraints.get("year")
        return ProfileFacts.of(genres=[self.constraints.get("genre", "")],
                               years=[int(year)] if year and str(year).isdigit() else [])


REQUEST_PHRASES = {
    "plot": "what it is about",
    "director": "who directed it",
    "rating": "how well it is rated",
}


def phrase(slot: str, value: str) -> str:
    """A constraint as words, e.g. ('actor', 'Nicole Kidman') -> 'a movie starring Nicole Kidman'."""
    if slot == "genre":
        return with_article(f"{value.lower()} movie")
    if slot == "year":
        return f"a movie released in {value}"
    if slot == "actor":
        return f"a movie starring {value}"
    if slot == "director":
        return f"a movie directed by {value}"
    return f"a movie with {slot} {value}"


# A person becomes a constraint only if the catalog has several of their movies:
# a goal built on someone with a single film would be a hidden target item.
MIN_ACTOR_MOVIES = 5
MIN_DIRECTOR_MOVIES = 3


def anchor_values(facts: ItemFacts, rng: random.Random,
                  catalog: Optional[CatalogView] = None) -> dict[str, str]:
    genres = getattr(catalog, "common_genres", None)
    actor_counts = getattr(catalog, "actor_counts", None)
    director_counts = getattr(catalog, "director_counts", None)
    values: dict[str, str] = {}
    usable = [g for g in facts.genres if genres is None or g in genres]
    if usable:
        values["genre"] = rng.choice(usable)
    if facts.year:
        values["year"] = str(facts.year)
    actors = [a for a in facts.actors[:3] if actor_counts is None or actor_counts[a] >= MIN_ACTOR_MOVIES]
    if actors:
        values["actor"] = rng.choice(actors)
    directors = [d for d in facts.directors if director_counts is None or director_counts[d] >= MIN_DIRECTOR_MOVIES]
    if directors:
        values["director"] = directors[0]
    return values


def sample_goal(
    catalog: CatalogView,
    rng: random.Random,
    *,
    max_constraints: int = 2,
    requests: Sequence[str] = REQUEST_SLOTS,
) -> Goal:
    for _ in range(200):
        facts = catalog.random_item(rng)
        values = anchor_values(facts, rng, catalog)
        if values:
            break
    else:
        raise ValueError("the catalog has no items with genre, year, actor or director information")
    slots = list(values)
    count = min(len(slots), rng.choices([1, 2, 3], weights=[2, 3, 1], k=1)[0], max_constraints)
    chosen: list[str] = []
    while len(chosen) < count:
        remaining = [s for s in slots if s not in chosen]
        chosen.append(rng.choices(remaining, weights=[SLOT_WEIGHTS[s] for s in remaining], k=1)[0])
    constraints = {slot: values[slot] for slot in CONSTRAINT_SLOTS if slot in chosen}
    asks = [r for r in requests if not (r == "director" and "director" in constraints)]
    asks = rng.sample(asks, k=rng.randint(1, len(asks))) if asks else []
    asks.sort(key=list(REQUEST_SLOTS).index)
    return Goal(constraints=constraints, requests=asks, anchor=facts.item_id)
