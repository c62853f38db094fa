"""General-preference profiles built from a real MovieLens user (PEPPER-style).

A user's rating history is mapped onto the catalog by title and year. Some
of the movies they rated highly (4 or 5) and that the catalog has are held
out as targets; everything else is the *seen* history. The general
preferences (liked and disliked genres, favourite people, favourite and
disliked movies, preferred era) are computed from the seen history only,
so the simulated user never knows its targets.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from statistics import mean, median
from typing import Any, Optional

from simulators.catalog_access import CatalogView, ItemFacts
from simulators.movielens import MovieLens
from arena.titles.names import title_key, readable_title

LIKED_RATING = 4.0
DISLIKED_RATING = 2.0


@dataclass
class SeenMovie:
    title: str
    year: Optional[int]
    rating: float
    genres: tuple[str, ...]
    item_id: Optional[str] = None  # catalog id when the movie is in the catalog

    def opinion(self) -> str:
        if self.rating >= LIKED_RATING:
            return "like"
        if self.rating <= DISLIKED_RATING:
            return "dislike"
        return "mixed"


@dataclass
class PreferenceProfile:
    user_id: str
    seen: list[SeenMovie]
    targets: list[dict[str, Optional[str]]]
    liked_genres: list[str] = field(default_factory=list)
    disliked_genres: list[str] = field(default_factory=list)
    liked_people: list[str] = field(default_factory=list)
    favourites: list[str] = field(default_factory=list)
    disliked_titles: list[str] = field(default_factory=list)
    era: Optional[int] = None

    def __post_init__(self) -> None:
        self._seen_ids = {m.item_id: m for m in self.seen if m.item_id}
        self._seen_titles = {title_key(m.title): m for m in self.seen}

    def seen_movie(self, facts: Optional[ItemFacts], title: str) -> Optional[SeenMovie]:
        if facts is not None and facts.item_id in self._seen_ids:
            return self._seen_ids[facts.item_id]
        return self._seen_titles.get(title_key(title))

    def narrative(self) -> str:
        """The general preferences in the second person, as given to the LLM."""
        lines = []
        if self.liked_genres:
            lines.append(f"You enjoy {_join(self.liked_genres)} movies.")
        if self.disliked_genres:
            lines.append(f"You tend to dislike {_join(self.disliked_genres)} movies.")
        if self.liked_people:
            lines.append(f"You like films made by or starring {_join(self.liked_people)}.")
        if self.favourites:
            lines.append(f"Movies you loved include {_join(self.favourites)}.")
        if self.disliked_titles:
            lines.append(f"You did not enjoy {_join(self.disliked_titles)}.")
        if self.era:
            lines.append(f"Most of the films you like are from the {self.era}s.")
        return " ".join(lines) or "You like a good story and are open to most genres."

    def genre_affinity(self, genres: list[str]) -> int:
        lowered = {g.lower() for g in genres}
        liked = sum(1 for g in self.liked_genres if g.lower() in lowered)
        disliked = sum(1 for g in self.disliked_genres if g.lower() in lowered)
        return liked - disliked

    def to_dict(self) -> dict[str, Any]:
        return {
            "movielens_user": self.user_id,
            "general_preferences": self.narrative(),
            "liked_genres": self.liked_genres,
            "disliked_genres": self.disliked_genres,
            "liked_people": self.liked_people,
            "favourites": self.favourites,
            "disliked_titles": self.disliked_titles,
            "seen": len(self.seen),
            "targets": self.targets,
        }


def _join(values: list[str]) -> str:
    values = list(values)
    if len(values) <= 1:
        return "".join(values)
    return ", ".join(values[:-1]) + " and " + values[-1]


def _label(title: str, year: Optional[int]) -> str:
    return readable_title(f"{title} ({year})" if year else title)


def build_profile(
    catalog: CatalogView,
    rng: random.Random,
    *,
    movielens: MovieLens,
    min_history: int = 10,
    target_share: float = 0.2,
    max_targets: int = 10,
) -> PreferenceProfile:
    ml = movielens
    users = ml.users
    for _ in range(len(users)):
        user = rng.choice(users)
        history = []
        for r in ml.ratings[user]:
            movie = ml.movies.get(r.movie_id)
            if movie is None:
                continue
            facts = catalog.find(movie.title, movie.year)
            history.append((SeenMovie(movie.title, movie.year, r.rating, movie.genres,
                                       facts.item_id if facts else None), facts))
        liked_in_catalog = [(m, f) for m, f in history if f is not None and m.rating >= LIKED_RATING]
        if len(history) < min_history or len(liked_in_catalog) < 2:
            continue
        count = max(1, min(max_targets, round(len(liked_in_catalog) * target_share)))
        held_out = rng.sample(liked_in_catalog, count)
        held_ids = {f.item_id for _, f in held_out}
        seen = [(m, f) for m, f in history if f is None or f.item_id not in held_ids]
        targets = [{"item_id": f.item_id, "title": f.display_title} for _, f in held_out]
        return _summarise(user, seen, targets)
    raise ValueError(f"no MovieLens user has {min_history}+ ratings and 2+ liked movies in this catalog")


def _summarise(user: str, seen: list[tuple[SeenMovie, Optional[ItemFacts]]], targets: list) -> PreferenceProfile:
    movies = [m for m, _ in seen]
    average = mean(m.rating for m in movies)
    by_genre: dict[str, list[float]] = defaultdict(list)
    for movie in movies:
        for genre in movie.genres:
            by_genre[genre].append(movie.rating - average)
    scored = sorted(((mean(v), g) for g, v in by_genre.items() if len(v) >= 2), reverse=True)
    liked_genres = [g for s, g in scored if s > 0][:3]
    disliked_genres = [g for s, g in reversed(scored) if s < -0.3][:2]
    people: Counter[str] = Counter()
    for movie, facts in seen:
        if facts is not None and movie.rating >= LIKED_RATING:
            people.update(set(facts.directors[:1] + facts.actors[:3]))
    liked_people = [p for p, n in people.most_common(4) if n >= 2]
    ranked = sorted(movies, key=lambda m: (-m.rating, m.title))
    favourites = [_label(m.title, m.year) for m in ranked if m.rating >= 5][:4]
    disliked = [_label(m.title, m.year) for m in reversed(ranked) if m.rating <= DISLIKED_RATING][:3]
    years = [m.year for m in movies if m.year and m.rating >= LIKED_RATING]
    era = int(median(years)) // 10 * 10 if years else None
    return PreferenceProfile(
        user_id=user,
        seen=movies,
        targets=targets,
        liked_genres=liked_genres,
        disliked_genres=disliked_genres,
        liked_people=liked_people,
        favourites=favourites,
        disliked_titles=disliked,
        era=era,
    )
