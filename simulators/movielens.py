"""MovieLens-100K rating histories, as shipped inside the `recbole` package.

`recbole==1.2.1` (installed with --no-deps; only its data files are used)
carries ML-100K in RecBole's atomic format under `dataset_example/ml-100k/`:
`ml-100k.item` (id, title, release year, genres) and `ml-100k.inter`
(user, item, rating 1-5, timestamp).
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

INSTALL_HINT = "pip install recbole==1.2.1 --no-deps"


@dataclass(frozen=True)
class Movie:
    movie_id: str
    title: str
    year: Optional[int]
    genres: tuple[str, ...]


@dataclass(frozen=True)
class Rating:
    movie_id: str
    rating: float
    timestamp: float


@dataclass(frozen=True)
class MovieLens:
    movies: dict[str, Movie]
    ratings: dict[str, tuple[Rating, ...]]  # user id -> ratings in time order

    @property
    def users(self) -> list[str]:
        return sorted(self.ratings, key=int)


def movielens_dir() -> Path:
    spec = importlib.util.find_spec("recbole")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"MovieLens-100K comes with the recbole package: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / "dataset_example" / "ml-100k"
    if not (path / "ml-100k.inter").exists():
        raise FileNotFoundError(f"recbole is installed but {path} has no ml-100k.inter ({INSTALL_HINT})")
    return path


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        next(handle)  # RecBole header: name:type per column
        return [line.rstrip("\n").split("\t") for line in handle if line.strip()]


@lru_cache(maxsize=2)
def load_movielens(directory: Optional[str] = None) -> MovieLens:
    path = Path(directory) if directory else movielens_dir()
    movies = {}
    for movie_id, title, year, genres in (r[:4] for r in _rows(path / "ml-100k.item") if len(r) >= 4):
        movies[movie_id] = Movie(
            movie_id=movie_id,
            title=title.strip(),
            year=int(year) if year.strip().isdigit() else None,
            genres=tuple(g for g in genres.split() if g and g != "unknown"),
        )
    by_user: dict[str, list[Rating]] = defaultdict(list)
    for user, movie_id, rating, stamp in (r[:4] for r in _rows(path / "ml-100k.inter") if len(r) >= 4):
        by_user[user].append(Rating(movie_id, float(rating), float(stamp)))
    ratings = {u: tuple(sorted(rs, key=lambda r: (r.timestamp, r.movie_id))) for u, rs in by_user.items()}
    return MovieLens(movies=movies, ratings=ratings)
