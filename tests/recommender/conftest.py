"""A hand-made catalog of eight films with a tiny knowledge graph, and training turns about it."""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from arena.catalogs.catalog import Catalog, CatalogItem

FILMS = [
    # id, name, genres, director, stars, plot
    ("1", "Heat (1995)", ("crime", "thriller"), "Michael Mann", ("Al Pacino", "Robert De Niro"),
     "A master thief and a detective clash after a bank heist in Los Angeles."),
    ("2", "The Godfather (1972)", ("crime", "drama"), "Francis Ford Coppola", ("Al Pacino", "Marlon Brando"),
     "The aging patriarch of a mafia family hands his empire to his son."),
    ("3", "Goodfellas (1990)", ("crime", "drama"), "Martin Scorsese", ("Robert De Niro", "Ray Liotta"),
     "The rise and fall of a mob associate and his friends in the mafia."),
    ("4", "Toy Story (1995)", ("animation", "comedy"), "John Lasseter", ("Tom Hanks",),
     "A cowboy doll feels threatened when a new spaceman toy arrives."),
    ("5", "Saw (2004)", ("horror",), "James Wan", ("Cary Elwes",),
     "Two strangers wake up chained in a room by a gory serial killer's trap."),
    ("6", "The Others (2001)", ("horror", "mystery"), "Alejandro Amenabar", ("Nicole Kidman",),
     "A mother in a dark house believes her home is haunted, a quiet ghost story without blood."),
    ("7", "Moby Dick (2010)", ("adventure",), "Mike Barker", ("William Hurt",),
     "A captain hunts the white whale across the sea."),
    ("8", "Ocean's Eleven (2001)", ("crime", "comedy"), "Steven Soderbergh", ("George Clooney",),
     "A charming thief gathers a crew for a clever casino heist with a twist."),
]


def build_catalog(tmp_path) -> tuple[Catalog, object]:
    """The catalog and the path of its kg.json (items -> genre, director, star entities)."""
    entity2id: dict[str, int] = {}

    def entity(name: str) -> int:
        return entity2id.setdefault(name, len(entity2id))

    items, kinds, graph = [], {}, {}
    for item_id, name, genres, director, stars, plot in FILMS:
        eid = entity(name)
        kinds[eid] = "item"
        edges = []
        for genre in genres:
            edges.append([0, entity(genre)])
            kinds[entity(genre)] = "genre"
        for person in (director, *stars):
            edges.append([1, entity(person)])
            kinds[entity(person)] = "person"
        graph[str(eid)] = edges
        title, year = name.rsplit(" (", 1)
        items.append(CatalogItem(
            item_id=item_id, title=title, year=int(year[:4]), genres=genres,
            people=MappingProxyType({"director": (director,), "star": stars}), plot=plot,
            entity_id=eid, dataset="redial", name=name,
        ))
    kg_path = tmp_path / "kg.json"
    kg_path.write_text(json.dumps(graph))
    return Catalog("films", items, entity2id, kinds, dataset="redial"), kg_path


@pytest.fixture
def films(tmp_path):
    return build_catalog(tmp_path)
